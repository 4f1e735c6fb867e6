import type { Logger } from "pino";
import type { ConsumerAdvance, NewAccountOrder, NewCopySkip, RecordTotals } from "../../store/journal/batch.js";
import type { Storage } from "../../store/storage.js";
import type { BatchContributor, TradingFrame } from "../frame/frame.js";
import type { OrderEvent } from "../frame/journal-entry.js";
import { type ConsumerWrites, mergeWrites, type OutboxConsumer } from "./consumer.js";
import { eventsAfterPosition, type OutboxEvent, outboxEventOf } from "./events.js";

/**
 * Runs the outbox's consumers. Each consumer has a position in each
 * account's events, stored with what it wrote: delivery is at least once
 * (events may come again after a crash, or when another process consumed
 * them first) and the position, moved only from where it was (checked under
 * the row lock), makes each event count once.
 *
 * The events this process commits are delivered in memory right after their
 * commit, and what the consumer writes goes into the frame's next batch. An
 * account whose position is not known here (after a start, a conflict,
 * another process's commits) is read from storage instead: its position and
 * the events after it. At start every account behind is brought up to date,
 * so a consumer resumes where it stopped; a slow rescan catches what a
 * stopped process left behind.
 */
const RESCAN_MS = 30_000;

export interface RunnerOptions {
  /**
   * How long a position may wait unwritten when the events read asked
   * nothing of the consumer (a resting order asks nothing of the records);
   * 0: until the consumer writes in the account or the frame drains. Each
   * position went with the batch after its events, two rows locked and
   * written per account and batch: on PostgreSQL a resting order cost the
   * database 84 us of CPU, 70 without them (and 14% more orders per second).
   * After a crash such events come again, and ask nothing again.
   */
  readonly positionsMs: number;
}

interface Delivery {
  readonly consumer: OutboxConsumer;
  readonly accountId: number;
  /** The position the writes start from (null: none stored yet). */
  readonly expected: number | null;
  seq: number;
  writes: ConsumerWrites;
}

export class OutboxRunner implements BatchContributor {
  /** Each consumer's position per account, where known. */
  readonly #known = new Map<string, number | null>();
  /** Deliveries waiting for a batch, by consumer and account. */
  readonly #waiting = new Map<string, Delivery>();
  /** The keys of waiting deliveries with writes, which go with the next batch; the others wait (RunnerOptions). */
  readonly #withWrites = new Set<string>();
  /** Whether the next batch takes every waiting delivery, positions alone too. */
  #releasing = false;
  /** Deliveries in the batch being committed. */
  #inFlight: Delivery[] = [];
  /** Accounts being read from storage, by consumer and account, each with its read's token. */
  readonly #reading = new Map<string, object>();
  /**
   * Events told while their account was being read, kept to take after what
   * was read: the read may or may not hold them (re-reading instead would
   * never end under steady orders, each read outrun by the next commit).
   */
  readonly #toldWhileReading = new Map<string, OutboxEvent[]>();
  #timer: NodeJS.Timeout | null = null;
  #positionsTimer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(
    private readonly storage: Storage,
    private readonly frame: TradingFrame,
    private readonly consumers: readonly OutboxConsumer[],
    private readonly logger: Logger,
    private readonly options: RunnerOptions,
  ) {
    frame.listen({ committed: (events) => this.#deliver(events) });
    frame.contribute(this);
  }

  /** Brings every consumer up to date with what is stored, then rescans now and then. */
  async start(): Promise<void> {
    await this.#rescan();
    this.#timer = setInterval(() => {
      void this.#rescan().catch((error: unknown) => this.logger.error({ err: error }, "rescanning the outbox failed"));
    }, RESCAN_MS);
    this.#timer.unref();
    if (this.options.positionsMs > 0) {
      this.#positionsTimer = setInterval(() => this.release(), this.options.positionsMs);
      this.#positionsTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#positionsTimer) clearInterval(this.#positionsTimer);
    this.#timer = null;
    this.#positionsTimer = null;
    await this.frame.drain();
  }

  get hasWork(): boolean {
    return this.#releasing ? this.#waiting.size > 0 : this.#withWrites.size > 0;
  }

  release(): void {
    if (this.#waiting.size === 0) return;
    this.#releasing = true;
    this.frame.requestFlush();
  }

  take(): {
    readonly consumers: ConsumerAdvance[];
    readonly recordTotals: RecordTotals[];
    readonly accountOrders: NewAccountOrder[];
    readonly copySkips: NewCopySkip[];
  } | null {
    if (!this.hasWork) return null;
    if (this.#releasing) {
      this.#inFlight = [...this.#waiting.values()];
      this.#waiting.clear();
      this.#releasing = false;
    } else {
      this.#inFlight = [...this.#withWrites].map((key) => this.#waiting.get(key) as Delivery);
      for (const key of this.#withWrites) this.#waiting.delete(key);
    }
    this.#withWrites.clear();
    const consumers = this.#inFlight.map((d) => ({
      consumer: d.consumer.name,
      accountId: d.accountId,
      expected: d.expected,
      seq: d.seq,
    }));
    const writes = mergeWrites(this.#inFlight.map((d) => d.writes));
    return {
      consumers,
      recordTotals: [...writes.recordTotals],
      accountOrders: [...writes.accountOrders],
      copySkips: [...writes.copySkips],
    };
  }

  settled(committed: boolean, conflicts: ReadonlySet<string> | null): void {
    const done = this.#inFlight;
    this.#inFlight = [];
    if (committed) {
      for (const delivery of done) delivery.consumer.committed?.(delivery.writes);
      return;
    }
    for (const delivery of done) {
      const key = keyOf(delivery.consumer, delivery.accountId);
      if (conflicts === null || conflicts.has(key)) {
        // Moved by another writer, or the batch failed: what is stored is read again.
        delivery.consumer.dropped?.(delivery.writes);
        const later = this.#waiting.get(key);
        if (later) this.#drop(key, later);
        this.#known.delete(key);
        this.#readLater(delivery.consumer, delivery.accountId);
        continue;
      }
      // Not written with a batch another account's conflict held back: it waits for the next.
      const later = this.#waiting.get(key);
      const waiting = later
        ? { ...later, expected: delivery.expected, writes: mergeWrites([delivery.writes, later.writes]) }
        : delivery;
      this.#wait(key, waiting);
    }
    this.frame.requestFlush();
  }

  /** Hands the events just committed to each consumer whose position in their account is known. */
  #deliver(events: readonly OrderEvent[]): void {
    if (this.#stopped || events.length === 0) return;
    const byAccount = new Map<number, OutboxEvent[]>();
    for (const event of events) {
      const list = byAccount.get(event.accountId);
      const outboxEvent = outboxEventOf(event);
      if (list) list.push(outboxEvent);
      else byAccount.set(event.accountId, [outboxEvent]);
    }
    for (const consumer of this.consumers) {
      for (const [accountId, list] of byAccount) this.#take(consumer, accountId, list);
    }
    this.frame.requestFlush();
  }

  /**
   * Gives events of an account to a consumer when they follow its position
   * (`from`: the position they were read after, when read from storage).
   */
  #take(consumer: OutboxConsumer, accountId: number, events: readonly OutboxEvent[], from?: number | null): void {
    const key = keyOf(consumer, accountId);
    if (this.#reading.has(key)) {
      const told = this.#toldWhileReading.get(key);
      if (told) told.push(...events);
      else this.#toldWhileReading.set(key, [...events]);
      return;
    }
    const known = from !== undefined ? from : this.#known.get(key);
    const position = this.#pending(key) ?? known;
    if (position === undefined) {
      this.#readLater(consumer, accountId);
      return;
    }
    // Events at or before the position were taken already (read from storage, then told).
    const fresh = events[0] !== undefined && events[0].seq > (position ?? 0) ? events : after(events, position ?? 0);
    const first = fresh[0];
    const last = fresh.at(-1);
    if (!first || !last) return;
    if (first.seq !== (position ?? 0) + 1) {
      this.#readLater(consumer, accountId);
      return;
    }
    const writes = consumer.consume(fresh);
    const waiting = this.#waiting.get(key);
    if (waiting) {
      waiting.seq = last.seq;
      waiting.writes = mergeWrites([waiting.writes, writes]);
      this.#wait(key, waiting);
    } else {
      this.#wait(key, { consumer, accountId, expected: position, seq: last.seq, writes });
    }
    this.#known.set(key, last.seq);
  }

  #wait(key: string, delivery: Delivery): void {
    this.#waiting.set(key, delivery);
    const { recordTotals, accountOrders, copySkips } = delivery.writes;
    if (recordTotals.length > 0 || accountOrders.length > 0 || copySkips.length > 0) this.#withWrites.add(key);
  }

  #drop(key: string, delivery: Delivery): void {
    delivery.consumer.dropped?.(delivery.writes);
    this.#waiting.delete(key);
    this.#withWrites.delete(key);
  }

  /** Where the consumer will stand once what waits and what is in flight is committed. */
  #pending(key: string): number | undefined {
    return this.#waiting.get(key)?.seq;
  }

  #readLater(consumer: OutboxConsumer, accountId: number): void {
    const key = keyOf(consumer, accountId);
    if (this.#reading.has(key) || this.#stopped) return;
    const token = {};
    this.#reading.set(key, token);
    this.#read(consumer, accountId).catch((error: unknown) => {
      this.logger.error({ err: error, accountId }, "reading the outbox failed");
      // Unless a later read has begun, what was told is read again when the next event finds the position unknown.
      if (this.#reading.get(key) !== token) return;
      this.#reading.delete(key);
      this.#toldWhileReading.delete(key);
    });
  }

  /** Reads the consumer's position in the account's events and the events after it, and takes them. */
  async #read(consumer: OutboxConsumer, accountId: number): Promise<void> {
    // What is in flight settles first: its outcome says where the position stands. Not a drain:
    // under steady orders the frame is never idle. A delivery taken later moves the position only
    // from where it expects it, so a read it overtakes costs a conflict and a read again, no count.
    await this.frame.flushed();
    const key = keyOf(consumer, accountId);
    const { position, events: read } = await eventsAfterPosition(this.storage.db, consumer.name, accountId);
    this.#reading.delete(key);
    this.#known.set(key, position);
    // Another process read past what waits here (a position alone waits a while): it would only conflict.
    const waiting = this.#waiting.get(key);
    if (waiting && (position ?? 0) > waiting.seq) this.#drop(key, waiting);
    // What was told while reading, after what was read: committed after the read looked, or both.
    const told = this.#toldWhileReading.get(key) ?? [];
    this.#toldWhileReading.delete(key);
    const { events, gap } = inSeqOrder([...read, ...told]);
    if (events.length > 0) this.#take(consumer, accountId, events, position);
    // Another process's commit lies between: read what follows once this is taken.
    if (gap) this.#readLater(consumer, accountId);
    this.frame.requestFlush();
  }

  /** Brings every account whose events a consumer has not read up to date. */
  async #rescan(): Promise<void> {
    for (const consumer of this.consumers) {
      const behind = await this.storage.db
        .selectFrom("accounts as a")
        .leftJoin("outbox_positions as p", (join) =>
          join.onRef("p.account_id", "=", "a.id").on("p.consumer", "=", consumer.name),
        )
        .select(["a.id", "a.event_seq", "p.seq"])
        .where((eb) => eb("a.event_seq", ">", eb.fn.coalesce("p.seq", eb.lit(0))))
        .execute();
      // Looked up per account behind: a search of the batch in flight for each was quadratic under load.
      const inFlight = new Set(this.#inFlight.map((d) => keyOf(d.consumer, d.accountId)));
      for (const account of behind) {
        const key = keyOf(consumer, account.id);
        if (this.#waiting.has(key) || inFlight.has(key)) continue;
        this.#known.delete(key);
        this.#readLater(consumer, account.id);
      }
    }
  }
}

const keyOf = (consumer: OutboxConsumer, accountId: number) => `${consumer.name}:${accountId}`;

const after = (events: readonly OutboxEvent[], seq: number) => events.filter((event) => event.seq > seq);

/** An account's events by seq, each once, up to the first gap (whether there was one). */
function inSeqOrder(events: readonly OutboxEvent[]): { events: OutboxEvent[]; gap: boolean } {
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  const unique: OutboxEvent[] = [];
  for (const event of sorted) {
    const last = unique.at(-1);
    if (last && event.seq === last.seq) continue;
    if (last && event.seq !== last.seq + 1) return { events: unique, gap: true };
    unique.push(event);
  }
  return { events: unique, gap: false };
}
