import type { AllocatedTable, IdRanges, Journal } from "../../store/journal/batch.js";

/**
 * Ids of new orders, OCA groups and trades, handed out at once by the trading
 * frame (an operation answers the ids it made before its commit). Each
 * process reserves blocks from storage ahead of need; ids of a block a process
 * never uses are skipped, never reused.
 */
const BLOCK = 10_000;
/** Below this many left, the next block is reserved in the background. */
const LOW_WATER = 5_000;

class IdPool {
  #ranges: [number, number][] = [];
  #left = 0;
  #refill: Promise<void> | null = null;

  constructor(
    private readonly journal: Journal,
    private readonly table: AllocatedTable,
  ) {}

  get left(): number {
    return this.#left;
  }

  /** Resolves once at least `count` ids are at hand. */
  async ensure(count: number): Promise<void> {
    while (this.#left < count) await this.#reserve(Math.max(BLOCK, count - this.#left));
    if (this.#left < LOW_WATER) void this.#reserve(BLOCK).catch(() => undefined);
  }

  /** The next id; the caller made sure enough were at hand. */
  next(): number {
    const range = this.#ranges[0];
    if (!range) throw new Error(`no ${this.table} ids at hand: ensure() them first`);
    const id = range[0];
    if (range[0] === range[1]) this.#ranges.shift();
    else range[0] += 1;
    this.#left -= 1;
    if (this.#left < LOW_WATER) void this.#reserve(BLOCK).catch(() => undefined);
    return id;
  }

  #reserve(count: number): Promise<void> {
    this.#refill ??= this.journal
      .reserveIds(this.table, count)
      .then((ranges: IdRanges) => {
        for (const [first, last] of ranges) {
          this.#ranges.push([first, last]);
          this.#left += last - first + 1;
        }
      })
      .finally(() => {
        this.#refill = null;
      });
    return this.#refill;
  }
}

/** The id pools of one frame. */
export class Ids {
  readonly orders: IdPool;
  readonly ocaGroups: IdPool;
  readonly trades: IdPool;

  constructor(journal: Journal) {
    this.orders = new IdPool(journal, "orders");
    this.ocaGroups = new IdPool(journal, "oca_groups");
    this.trades = new IdPool(journal, "trades");
  }

  /** Enough ids at hand for any one operation (a few orders, a group, the trades its fills open). */
  async ensure(perOperation = OPERATION_IDS): Promise<void> {
    await Promise.all([
      this.orders.ensure(perOperation),
      this.ocaGroups.ensure(perOperation),
      this.trades.ensure(perOperation),
    ]);
  }
}

/**
 * The most ids one operation may take from each pool: SetDesiredPositions
 * places two orders per position (500 at most) and a fill pass can open a
 * trade per order it fills.
 */
const OPERATION_IDS = 1_200;
