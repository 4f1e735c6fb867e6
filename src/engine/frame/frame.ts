import { randomUUID } from "node:crypto";
import type { ControllableClock } from "../../core/clock.js";
import { type CommissionPlan, commissionPlan, planCommissionsText } from "../../core/commissions.js";
import { formatDecimal } from "../../core/decimal.js";
import { Refusal, refuse } from "../../core/errors.js";
import {
  type AdverseExtremes,
  advance,
  type Focus,
  mergeExtremes,
  type TradingState,
} from "../../core/orders/execution.js";
import { editable, TransientMap } from "../../core/transient.js";
import type {
  AccountCommit,
  CommitOutcome,
  Journal,
  JournalBatch,
  NewOrderEvent,
  StoredOcaGroup,
  StoredOrder,
  StoredPosition,
  StrategyCommit,
} from "../../store/journal/batch.js";
import { keyedReads } from "../../store/keyed-reads.js";
import type { Storage } from "../../store/storage.js";
import {
  type AccountRows,
  accountVersions,
  bookOrderOf,
  localIdInUse,
  orderRowsOf,
  readModelAccounts,
  termsOfRow,
} from "../../store/trading-state.js";
import { readConsistently } from "../../store/transaction.js";
import { isStorageUnavailable } from "../../store/unavailable.js";
import type { MarketData } from "../market-data.js";
import { sharedMarketViewAt, type TradingMarketView } from "../market-view.js";
import { outboxRowOf } from "../outbox/events.js";
import { accountOfRows, type CommittedAccount, isActiveRow, type WorkingAccount } from "./account.js";
import { Ids } from "./ids.js";
import {
  type AccountChanges,
  mergeChanges,
  type NewOrder,
  noChanges,
  type OrderEvent,
  recordOperation,
  serviceOrder,
} from "./journal-entry.js";

/**
 * The account-scoped trading frame. Every trading operation (an owner's
 * order, a cancel, the fill loop working an account, desired positions) runs
 * here against the account's state in memory: loaded once, changed in place
 * one operation after another, so an operation costs no reads. The changes of
 * all operations since the last commit go to storage in one batch (group
 * commit) through the journal, with their order events in the outbox, and an
 * operation answers only once its batch is durably committed.
 *
 * Several processes may share a database: each batch writes an account only
 * from the version it was loaded at (checked under the row lock). When
 * another process wrote the account in between, nothing of the batch is
 * written; the account is loaded again and its uncommitted operations are
 * applied again, in order, to what is stored now.
 */
export interface AccountOperation {
  readonly nowMs: number;
  readonly market: TradingMarketView;
  readonly account: WorkingAccount;
  /** Records an order the operation makes and answers its id. */
  newOrder(order: Omit<NewOrder, "id">): number;
  /** Records an OCA group the operation makes and answers its id. */
  newOcaGroup(localId: string | null): number;
  /** The state with the account's order `id` in the book (an ended one is read first); null when there is none. */
  withOrder(state: TradingState, id: number): TradingState | null;
  /** Whether a caller-chosen id is used in the strategy already (as a signal or OCA id). */
  localIdInUse(id: string): boolean;
  /** Sets the legacy desired-positions portfolio (null: the mode is off). */
  setDesiredPositions(portfolio: string | null): void;
}

export interface StepOutcome<T> {
  readonly state: TradingState;
  readonly result: T;
}

/** An operation's work on the account: synchronous, and without effect when it throws (a refusal). */
export type AccountStep<T> = (op: AccountOperation) => StepOutcome<T>;

export interface TradeOptions {
  /** Adverse prices seen since the account was last worked (its open trades' excursions). */
  readonly extremes?: AdverseExtremes | undefined;
  /** Which working orders are tried against the market; by default those the step touched. */
  readonly focus?: Focus | undefined;
  /**
   * Answer once applied, and commit with the account's next batch instead of
   * one of its own: for what may be lost in a crash without harm (a trade's
   * worst price seen, which the fill loop observes every tick).
   */
  readonly quiet?: boolean | undefined;
}

/** What the frame needs of the caller's context for an operation. */
export interface OperationContext {
  readonly clock: Pick<ControllableClock, "nowMs">;
  readonly market: MarketData;
  /** Who acts, and for whom (when a platform key or an administrator acts for someone). */
  readonly actorPersonId?: number | null;
  readonly onBehalfOfPersonId?: number | null;
  /** The Idempotency-Key of the request: marked carried out in the commit of what the operation made. */
  readonly idempotency?: { readonly personId: number; readonly key: string } | null;
}

/** Work committed with the frame's batches: taken for a batch, and told how the batch ended. */
export interface BatchContributor {
  readonly hasWork: boolean;
  take(): Pick<JournalBatch, "consumers" | "recordTotals" | "accountOrders" | "copySkips"> | null;
  /** Committed, or not: with the consumer positions another writer moved (null: the batch failed). */
  settled(committed: boolean, conflicts: ReadonlySet<string> | null): void;
  /** Puts what it holds back into the next batch too (the frame drains). */
  release(): void;
}

/**
 * Where the adverse prices each strategy's open trades saw since it was last
 * worked are noted (the fill loop notes them as quotes come). Every operation
 * takes its account's, whoever runs it: a trade the owner closes before the
 * next tick is still judged on the worst price it saw, and one opened after is
 * never judged on a price it did not see.
 */
export interface AdversePrices {
  /** The prices noted for the strategy, no longer noted there. */
  take(strategyId: number): AdverseExtremes | undefined;
  /** Prices taken by an operation that was refused, noted again. */
  putBack(strategyId: number, extremes: AdverseExtremes): void;
}

/** Told what the frame does, in order: each operation as applied, and each batch once durable. */
export interface FrameListener {
  /** After an operation is applied in memory (its batch still to commit), or after an account was loaded again. */
  applied?(strategyId: number, account: WorkingAccount, changes: AccountChanges | null): void;
  /** After a batch is durably committed: the order events of each account in it. */
  committed?(events: readonly OrderEvent[]): void;
  /** After storage answered a batch's commit (committed or conflicted): how long it took, in milliseconds. */
  commitTimed?(ms: number): void;
}

/** A step needs what storage holds before it can run: the frame reads it and runs the step again. */
class NeedsStorage extends Error {
  constructor(
    readonly orders: readonly number[],
    readonly localIds: readonly string[],
    readonly ids = false,
  ) {
    super("the operation needs rows from storage");
  }
}

interface PendingOperation {
  readonly ctx: OperationContext;
  readonly step: AccountStep<unknown>;
  /** The adverse prices the account's open trades saw: given, and those noted for it when it is applied. */
  extremes: AdverseExtremes | undefined;
  /** What the market is tried against; by default the orders the step touched. */
  readonly focus: Focus | undefined;
  /** Answered once applied, and committed with the account's next batch (see `trade`). */
  readonly quiet: boolean;
  changes: AccountChanges;
  result: unknown;
  taken: { view: TradingMarketView; fills: Parameters<TradingMarketView["take"]>[0] } | null;
  /** Orders the operation took out of the book, whose end storage holds once it is committed. */
  ended: readonly number[];
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** One account in memory. */
class Slot {
  accountId = 0;
  committed: CommittedAccount | null = null;
  working: WorkingAccount | null = null;
  /** Loading (or loading again after a conflict): operations wait for it. */
  loading: Promise<void> | null = null;
  /** Applied and not yet committed, in order; the first `inFlight` are in the batch being committed. */
  readonly operations: PendingOperation[] = [];
  inFlight = 0;
  /** What the operations in flight changed, merged. */
  flight: AccountChanges | null = null;
  /**
   * Ended orders out of the book: read from storage for operations (null: the
   * account has no such order), or just ended here, kept until their end is
   * committed (storage would answer an older image until then).
   */
  readonly endedOrders = new Map<number, StoredOrder | null>();
  /** Caller-chosen ids looked up in storage. */
  readonly localIds = new Map<string, boolean>();

  constructor(readonly strategyId: number) {}

  /** Nothing waits to be committed but quiet operations (answered already, and theirs may be lost). */
  get idle(): boolean {
    return this.loading === null && this.inFlight === 0 && this.operations.every((operation) => operation.quiet);
  }

  /** Drops the account from memory, quiet operations and all: it is read again when next used. */
  drop(): void {
    this.operations.length = 0;
    this.working = null;
    this.committed = null;
    this.endedOrders.clear();
    this.localIds.clear();
  }
}

export class TradingFrame {
  /** Tells this process's batches from other processes' (in the outbox and in notifications). */
  readonly origin = randomUUID();
  readonly #slots = new Map<number, Slot>();
  readonly #dirty = new Set<Slot>();
  readonly #listeners: FrameListener[] = [];
  readonly #ids: Ids;
  #flushing: Promise<void> | null = null;
  #scheduled = false;
  #closed = false;
  /** Operations waiting for their account to load or for rows they need. */
  readonly #admitting = new Set<Promise<void>>();
  #contributor: BatchContributor | null = null;
  #adversePrices: AdversePrices | null = null;
  /** Accounts to read in the next load. */
  readonly #toLoad = new Map<Slot, { resolve: () => void; reject: (error: unknown) => void }>();

  readonly #journal: Journal;
  #probing: Promise<void> | null = null;

  /** `openJournal` opens the frame's writer, told the frame's origin. */
  constructor(
    private readonly storage: Storage,
    openJournal: (origin: string) => Journal,
  ) {
    this.#journal = openJournal(this.origin);
    this.#ids = new Ids(this.#journal);
  }

  /**
   * Commits the quiet operations' changes that wait for their account's next
   * batch (at each close the clock passes, and at shutdown).
   */
  async flushQuiet(): Promise<void> {
    for (const slot of this.#slots.values()) {
      if (slot.loading === null && slot.operations.length > slot.inFlight) this.#dirty.add(slot);
    }
    this.#schedule();
    await this.drain();
  }

  listen(listener: FrameListener): void {
    this.#listeners.push(listener);
  }

  /**
   * Runs an operation on a strategy's model account: `step` changes the
   * account, then the market acts on it (a marketable order fills at once).
   * Answers the step's result once the change is durably committed; a
   * refusal the step throws answers at once and changes nothing.
   */
  trade<T>(ctx: OperationContext, strategyId: number, step: AccountStep<T>, options: TradeOptions = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("the trading frame is closed"));
    return new Promise<T>((resolve, reject) => {
      const operation: PendingOperation = {
        ctx,
        step: step as AccountStep<unknown>,
        extremes: options.extremes,
        focus: options.focus,
        quiet: options.quiet === true,
        changes: noChanges(),
        result: undefined,
        taken: null,
        ended: [],
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      const slot = this.#slotOf(strategyId);
      // The common case runs synchronously: the account is in memory and ids are at hand.
      if (slot.loading === null && slot.working !== null && this.#idsAtHand()) {
        try {
          this.#apply(slot, operation);
          return;
        } catch (error) {
          if (!(error instanceof NeedsStorage)) {
            reject(error);
            return;
          }
        }
      }
      const admission = this.#admit(slot, operation)
        .catch(reject)
        .finally(() => this.#admitting.delete(admission));
      this.#admitting.add(admission);
    });
  }

  /**
   * The committed state of the strategies' model accounts, as stored now
   * (another process's commits included); a strategy that does not exist is
   * left out.
   */
  async committedAccounts(strategyIds: readonly number[]): Promise<Map<number, CommittedAccount>> {
    const known = await Promise.all(
      [...new Set(strategyIds)].map(async (id) => {
        const slot = this.#slotOf(id);
        try {
          await this.#ready(slot);
          return slot;
        } catch (error) {
          if (isMissing(error)) return null;
          throw error;
        }
      }),
    );
    const slots = known.filter((slot): slot is Slot => slot !== null);
    // Read with the other requests' in the same turn (and on SQLite, kept while nothing is written).
    const versions = keyedReads(this.storage, accountVersions);
    const stored = await Promise.all(slots.map((slot) => versions.get(slot.accountId)));
    const answer = new Map<number, CommittedAccount>();
    for (const [i, slot] of slots.entries()) {
      const committed = slot.committed;
      if (committed !== null && stored[i] === committed.version) {
        answer.set(slot.strategyId, committed);
        continue;
      }
      // Another process wrote the account (its notification may have dropped it meanwhile): read it as it is now.
      if (slot.idle) {
        slot.drop();
        await this.#ready(slot);
        if (slot.committed !== null) {
          answer.set(slot.strategyId, slot.committed);
          continue;
        }
      }
      const [rows] = await readConsistently(this.storage, (db) =>
        readModelAccounts(db, { strategyIds: [slot.strategyId] }),
      );
      if (rows) answer.set(slot.strategyId, accountOfRows(rows).committed);
    }
    return answer;
  }

  /**
   * Loads every account holding a live order or a position (at start: the
   * fill loop works them as soon as quotes come), or the accounts of the
   * strategies named that are not busy (another process changed them), in a
   * few statements whatever their number.
   */
  async preload(strategyIds?: readonly number[]): Promise<void> {
    // Ids at hand too: the first operations on the accounts then run at once, not after a reservation.
    const [rows] = await Promise.all([
      readConsistently(this.storage, (db) =>
        readModelAccounts(db, strategyIds === undefined ? { live: true } : { strategyIds }),
      ),
      this.#ids.ensure(),
    ]);
    for (const account of rows) {
      const slot = this.#slotOf(account.strategy.id);
      // A busy account, or one that moved past what was read meanwhile, stays as it is.
      if (!slot.idle) continue;
      if (slot.committed !== null && slot.working !== null && slot.committed.version >= account.account.version)
        continue;
      slot.drop();
      this.#install(slot, account);
    }
  }

  /**
   * After a time when other processes' notifications could not be heard: the
   * accounts in memory that moved in storage meanwhile are dropped and read
   * again, and accounts with live orders not in memory are loaded.
   */
  async resync(): Promise<void> {
    const held = [...this.#slots.values()].filter((slot) => slot.committed !== null);
    const stored = await accountVersions(
      this.storage.db,
      held.map((slot) => slot.accountId),
    );
    const moved: number[] = [];
    for (const slot of held) {
      if ((stored.get(slot.accountId) ?? -1) <= (slot.committed?.version ?? -1)) continue;
      this.forget(slot.strategyId);
      moved.push(slot.strategyId);
    }
    if (moved.length > 0) await this.preload(moved);
    await this.preload();
  }

  /** The working state of an account in memory (loading it first); for the fill loop's index. */
  async workingAccount(strategyId: number): Promise<WorkingAccount> {
    const slot = this.#slotOf(strategyId);
    await this.#ready(slot);
    return slot.working as WorkingAccount;
  }

  /** The working state of an account in memory now, or null (nothing is loaded for it). */
  heldAccount(strategyId: number): WorkingAccount | null {
    const slot = this.#slots.get(strategyId);
    return slot !== undefined && slot.loading === null ? slot.working : null;
  }

  /** Why the frame can commit nothing more (its journal's writer stopped), or null while it can. */
  get journalFailure(): string | null {
    return this.#journal.failure;
  }

  /**
   * Whether the journal can write now: its probe, one at a time however
   * often readiness is asked (a probe waiting on a locked database is shared,
   * not queued again behind itself).
   */
  probeJournal(atMs: number): Promise<void> {
    this.#probing ??= this.#journal.probe(new Date(atMs).toISOString()).finally(() => {
      this.#probing = null;
    });
    return this.#probing;
  }

  /** Whether the account is in memory and ready for a synchronous operation. */
  isReady(strategyId: number): boolean {
    const slot = this.#slots.get(strategyId);
    return slot !== undefined && slot.loading === null && slot.working !== null;
  }

  /**
   * Another process changed the account (told by a notification, or a write
   * outside the frame): an idle account is dropped and loaded again when next
   * used; a busy one finds out at its commit.
   */
  forget(strategyId: number): void {
    const slot = this.#slots.get(strategyId);
    if (slot?.idle) slot.drop();
  }

  /** The committed version of an account in memory, or -1 when it is not in memory. */
  versionOf(strategyId: number): number {
    return this.#slots.get(strategyId)?.committed?.version ?? -1;
  }

  /** Resolves once the batch being committed now, if any, is committed (or has failed). */
  async flushed(): Promise<void> {
    await this.#flushing;
  }

  /** Resolves once every operation applied so far is committed (or has failed); quiet ones wait (see flushQuiet). */
  async drain(): Promise<void> {
    for (;;) {
      if (!this.#busy) {
        // Then what the contributor holds back is committed too (only then: under steady orders it would go
        // with every batch), the positions past the last batch's events with it.
        this.#contributor?.release();
        if (!this.#busy) return;
      }
      if (this.#admitting.size > 0) await Promise.all(this.#admitting);
      else await (this.#flushing ?? new Promise((resolve) => setImmediate(resolve)));
    }
  }

  get #busy(): boolean {
    return (
      this.#admitting.size > 0 ||
      this.#dirty.size > 0 ||
      this.#flushing !== null ||
      this.#scheduled ||
      this.#contributor?.hasWork === true
    );
  }

  async close(): Promise<void> {
    await this.flushQuiet();
    this.#closed = true;
    await this.#journal.close();
  }

  #slotOf(strategyId: number): Slot {
    let slot = this.#slots.get(strategyId);
    if (!slot) {
      slot = new Slot(strategyId);
      this.#slots.set(strategyId, slot);
    }
    return slot;
  }

  #idsAtHand(): boolean {
    return this.#ids.orders.left >= 64 && this.#ids.ocaGroups.left >= 64 && this.#ids.trades.left >= 64;
  }

  /** Loads the account unless it is in memory; waits for a load in progress. */
  async #ready(slot: Slot): Promise<void> {
    while (slot.loading || slot.working === null) {
      if (slot.loading) {
        await slot.loading;
        continue;
      }
      slot.loading = this.#load(slot).finally(() => {
        slot.loading = null;
      });
    }
  }

  /**
   * Loads the account with the others asked for in the same turn, in one
   * read: thousands of accounts wanted at once (a fan-out to followers) cost
   * a few statements, not thousands.
   */
  #load(slot: Slot): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#toLoad.set(slot, { resolve, reject });
      if (this.#toLoad.size > 1) return;
      setImmediate(() => {
        const batch = new Map(this.#toLoad);
        this.#toLoad.clear();
        readConsistently(this.storage, (db) =>
          readModelAccounts(db, { strategyIds: [...batch.keys()].map((s) => s.strategyId) }),
        )
          .then((rows) => {
            const found = new Map(rows.map((row) => [row.strategy.id, row]));
            for (const [waiting, { resolve: loaded, reject: missing }] of batch) {
              const row = found.get(waiting.strategyId);
              if (!row) {
                missing(refuse("NotFound", { field: "StrategyId", message: `No strategy ${waiting.strategyId}` }));
                continue;
              }
              this.#install(waiting, row);
              loaded();
            }
          })
          .catch((error: unknown) => {
            for (const { reject: failed } of batch.values()) failed(error);
          });
      });
    });
  }

  #install(slot: Slot, rows: AccountRows): void {
    const { committed, working } = accountOfRows(rows);
    slot.accountId = rows.account.id;
    slot.committed = committed;
    slot.working = working;
    slot.endedOrders.clear();
    slot.localIds.clear();
    for (const listener of this.#listeners) listener.applied?.(slot.strategyId, working, null);
  }

  /** Waits for the account, then applies the operation. */
  async #admit(slot: Slot, operation: PendingOperation): Promise<void> {
    await this.#applyReading(slot, operation, false);
  }

  /**
   * Applies the operation, first reading from storage what it needs and
   * fetching ids when short. Outside a replay the account is made ready again
   * after every wait: meanwhile it may have been dropped (another process
   * changed it).
   */
  async #applyReading(slot: Slot, operation: PendingOperation, replaying = true): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (!replaying) await this.#ready(slot);
      if (!this.#idsAtHand()) {
        await this.#ids.ensure();
        if (!replaying) continue;
      }
      try {
        this.#apply(slot, operation);
        return;
      } catch (error) {
        if (!(error instanceof NeedsStorage) || attempt > 20) throw error;
        await this.#read(slot, error);
      }
    }
  }

  async #read(slot: Slot, needs: NeedsStorage): Promise<void> {
    if (needs.ids) await this.#ids.ensure(5_000);
    const rows = await orderRowsOf(this.storage.db, slot.accountId, needs.orders);
    for (const id of needs.orders) slot.endedOrders.set(id, rows.find((row) => row.id === id) ?? null);
    for (const id of needs.localIds) slot.localIds.set(id, await localIdInUse(this.storage.db, slot.strategyId, id));
  }

  /**
   * Applies an operation to the working account (synchronously), to be
   * committed with the next batch. The account's maps are opened for it
   * (src/core/transient.ts): the operation changes them in place, and a
   * refusal (or anything else thrown) puts them back as they were.
   */
  #apply(slot: Slot, operation: PendingOperation): void {
    const before = slot.working as WorkingAccount;
    const noted = this.#adversePrices?.take(slot.strategyId);
    if (noted) operation.extremes = mergeExtremes(operation.extremes, noted);
    const maps = openMaps(before);
    try {
      this.#run(slot, operation, before);
    } catch (error) {
      for (const map of maps) map.undo();
      if (noted) this.#adversePrices?.putBack(slot.strategyId, noted);
      throw error;
    }
    for (const map of maps) map.close();
    for (const listener of this.#listeners)
      listener.applied?.(slot.strategyId, slot.working as WorkingAccount, operation.changes);
    if (operation.quiet) {
      // Answered now, and committed with the account's next batch (or by flushQuiet).
      operation.resolve(operation.result);
      return;
    }
    this.#dirty.add(slot);
    this.#schedule();
  }

  #run(slot: Slot, operation: PendingOperation, before: WorkingAccount): void {
    const nowMs = operation.ctx.clock.nowMs();
    const market = sharedMarketViewAt(operation.ctx.market, nowMs);
    const newOrders = new Map<number, NewOrder>();
    const ocaGroups: StoredOcaGroup[] = [];
    const usedLocalIds: string[] = [];
    let desiredPositions: string | null | undefined;
    const ids = this.#ids;
    const take = (pool: typeof ids.orders) => {
      if (pool.left === 0) throw new NeedsStorage([], [], true);
      return pool.next();
    };
    const op: AccountOperation = {
      nowMs,
      market,
      // What happens to the account's orders is logged as it happens, for the outbox.
      account: { ...before, state: { ...before.state, log: [] } },
      newOrder(order) {
        const id = take(ids.orders);
        // The id before the order's keys (docs/decisions.md, "Objects keep their hidden classes").
        newOrders.set(id, { id, ...order });
        if (order.localSignalId !== null) usedLocalIds.push(order.localSignalId);
        return id;
      },
      newOcaGroup(localId) {
        const id = take(ids.ocaGroups);
        ocaGroups.push({ id, strategy_id: slot.strategyId, account_id: slot.accountId, local_id: localId });
        if (localId !== null) usedLocalIds.push(localId);
        return id;
      },
      withOrder(state, id) {
        if (state.book.has(id)) return state;
        if (!slot.endedOrders.has(id)) throw new NeedsStorage([id], []);
        const row = slot.endedOrders.get(id);
        if (!row) return null;
        // Its row is the image a change to it starts from.
        editable(before.rows).set(id, row);
        return {
          ...state,
          book: editable(state.book).set(id, bookOrderOf(row)),
          terms: editable(state.terms).set(id, termsOfRow(row)),
        };
      },
      localIdInUse(id) {
        const known = slot.localIds.get(id);
        if (known === undefined) throw new NeedsStorage([], [id]);
        return known;
      },
      setDesiredPositions(portfolio) {
        desiredPositions = portfolio;
      },
    };
    const stepped = operation.step(op);
    // An owner's operation tries the orders it touched against the market; the fill loop says what it wants tried.
    const focus = operation.focus ?? {
      orders: [...(before.state.book as TransientMap<number, unknown>).before.keys()],
      symbols: [],
    };
    const advanced = advance(
      stepped.state,
      market,
      commissionPlanOf(before),
      nowMs,
      operation.extremes,
      () => take(ids.trades),
      focus,
      (terms) => op.newOrder(serviceOrder(terms)),
    );
    const { account, changes, ended } = recordOperation(before, advanced.state, {
      accountId: slot.accountId,
      nowMs,
      newOrders,
      ocaGroups,
      fills: advanced.fills,
      ...(desiredPositions !== undefined ? { desiredPositions } : {}),
      actorPersonId: operation.ctx.actorPersonId ?? null,
      onBehalfOfPersonId: onBehalfOf(operation.ctx, before.strategy.ownerPersonId),
    });
    market.take(advanced.fills);
    for (const id of usedLocalIds) slot.localIds.set(id, true);
    for (const row of ended) slot.endedOrders.set(row.id, row);
    slot.working = account;
    operation.changes = changes;
    operation.result = stepped.result;
    operation.taken = { view: market, fills: advanced.fills };
    operation.ended = ended.map((row) => row.id);
    // Quiet operations waiting for the same batch become one.
    const last = slot.operations.at(-1);
    if (operation.quiet && last?.quiet && slot.operations.length > slot.inFlight) {
      mergeChanges(last.changes, changes);
      last.ended = [...last.ended, ...operation.ended];
      return;
    }
    slot.operations.push(operation);
  }

  /** Commits the contributor's work soon, with trading work or alone. */
  requestFlush(): void {
    this.#schedule();
  }

  /** Where operations take the adverse prices their accounts' open trades saw (the fill loop's notes). */
  takeAdversePricesFrom(prices: AdversePrices): void {
    this.#adversePrices = prices;
  }

  /** Work others commit with the frame's batches (the outbox consumers' positions and writes). */
  contribute(contributor: BatchContributor): void {
    this.#contributor = contributor;
  }

  #schedule(): void {
    const work = this.#dirty.size > 0 || this.#contributor?.hasWork === true;
    if (this.#scheduled || this.#flushing !== null || !work) return;
    this.#scheduled = true;
    // One turn of the event loop lets the requests that arrived together join the batch.
    setImmediate(() => {
      this.#scheduled = false;
      this.#flushing = this.#flush().finally(() => {
        this.#flushing = null;
        this.#schedule();
      });
    });
  }

  /** Commits the operations applied since the last batch, in one transaction. */
  async #flush(): Promise<void> {
    const slots = [...this.#dirty].filter((slot) => slot.loading === null && slot.operations.length > 0);
    this.#dirty.clear();
    const contributed = this.#contributor?.take() ?? null;
    if (slots.length === 0 && contributed === null) return;
    const batch = { ...batchOf(slots, this.origin), ...(contributed ?? {}) };
    for (const slot of slots) slot.inFlight = slot.operations.length;
    let outcome: CommitOutcome;
    try {
      outcome = await this.#commit(batch);
    } catch (error) {
      if (contributed) this.#contributor?.settled(false, null);
      if (slots.length > 0) await this.#failed(slots, error);
      return;
    }
    if (outcome.ok) {
      // The consumers hear of the events after what they wrote in this batch is settled.
      if (contributed) this.#contributor?.settled(true, null);
      this.#committed(slots);
      return;
    }
    if (contributed) this.#contributor?.settled(false, new Set(outcome.consumerConflicts));
    await this.#conflicted(slots, new Set(outcome.conflicts));
  }

  /** The journal's commit, timed for the listeners (storage commit latency). */
  async #commit(batch: JournalBatch): Promise<CommitOutcome> {
    const started = performance.now();
    const outcome = await this.#journal.commit(batch);
    const ms = performance.now() - started;
    for (const listener of this.#listeners) listener.commitTimed?.(ms);
    return outcome;
  }

  #committed(slots: readonly Slot[]): void {
    const events: OrderEvent[] = [];
    for (const slot of slots) {
      const done = slot.operations.splice(0, slot.inFlight);
      slot.inFlight = 0;
      const changes = slot.flight as AccountChanges;
      slot.flight = null;
      slot.committed = committedAfter(slot.committed as CommittedAccount, changes);
      events.push(...changes.events);
      for (const operation of done) {
        for (const id of operation.ended) slot.endedOrders.delete(id);
        operation.resolve(operation.result);
      }
      if (!slot.idle) this.#dirty.add(slot);
    }
    for (const listener of this.#listeners) listener.committed?.(events);
  }

  /** Another writer moved some accounts: they are loaded again and their operations applied again. */
  async #conflicted(slots: readonly Slot[], conflicts: ReadonlySet<number>): Promise<void> {
    for (const slot of slots) {
      slot.inFlight = 0;
      if (conflicts.has(slot.accountId)) await this.#replay(slot);
      else this.#dirty.add(slot);
    }
  }

  /**
   * A batch failed: alone, an account's operations fail; together, each
   * account is tried on its own, unless storage cannot take writes at all
   * (full, locked, unreachable): then every part would fail the same way, each
   * after its own wait, and all the batch's operations fail at once.
   */
  async #failed(slots: readonly Slot[], error: unknown): Promise<void> {
    if (slots.length > 1 && !isStorageUnavailable(error)) {
      for (const slot of slots) slot.inFlight = 0;
      for (const slot of slots) {
        const batch = batchOf([slot], this.origin);
        slot.inFlight = slot.operations.length;
        try {
          const outcome = await this.#commit(batch);
          if (outcome.ok) this.#committed([slot]);
          else await this.#conflicted([slot], new Set(outcome.conflicts));
        } catch (alone) {
          await this.#failed([slot], alone);
        }
      }
      return;
    }
    for (const slot of slots) {
      const failed = slot.operations.splice(0, slot.inFlight);
      slot.inFlight = 0;
      for (const operation of failed) {
        operation.taken?.view.take(operation.taken.fills, -1);
        operation.reject(error);
      }
    }
    for (const slot of slots) await this.#replay(slot);
  }

  /**
   * Loads the account again and applies its uncommitted operations again, in
   * order; operations arriving meanwhile wait behind them.
   */
  async #replay(slot: Slot): Promise<void> {
    const pending = slot.operations.splice(0);
    for (const operation of pending) operation.taken?.view.take(operation.taken.fills, -1);
    slot.working = null;
    const replaying = (async () => {
      try {
        await this.#load(slot);
      } catch (error) {
        for (const operation of pending) operation.reject(error);
        return;
      }
      for (const operation of pending) {
        operation.changes = noChanges();
        await this.#applyReading(slot, operation).catch(operation.reject);
      }
    })();
    slot.loading = replaying.finally(() => {
      slot.loading = null;
    });
    await slot.loading;
  }
}

/**
 * For whom an operation acts: the person named, or else the strategy's owner
 * when someone else (an administrator of the owner's site, the service's)
 * acts on the owner's strategy; no one when the owner or the market acts.
 */
function onBehalfOf(ctx: OperationContext, ownerPersonId: number): number | null {
  if (ctx.onBehalfOfPersonId != null) return ctx.onBehalfOfPersonId;
  const actor = ctx.actorPersonId ?? null;
  return actor !== null && actor !== ownerPersonId ? ownerPersonId : null;
}

const isMissing = (error: unknown) => error instanceof Refusal && error.entries[0]?.name === "NotFound";

/** The account's maps, opened for one operation. */
function openMaps(account: WorkingAccount): TransientMap<unknown, unknown>[] {
  const { state } = account;
  const maps = [state.book, state.terms, state.expiresAtMs, state.notes, state.positions, state.trades, account.rows];
  return maps.map((map) => {
    if (!(map instanceof TransientMap)) throw new Error("an account's maps are transient");
    map.open();
    return map as TransientMap<unknown, unknown>;
  });
}

const commissionPlanOf = (account: WorkingAccount): CommissionPlan =>
  commissionPlan(account.commissionPlan) ?? (commissionPlan("Default") as CommissionPlan);

/** The batch of the accounts' applied operations. */
function batchOf(slots: readonly Slot[], origin: string): JournalBatch {
  const accounts: AccountCommit[] = [];
  const strategies: StrategyCommit[] = [];
  const batch = {
    ocaGroups: [] as JournalBatch["ocaGroups"][number][],
    newOrders: [] as StoredOrder[],
    changedOrders: [] as StoredOrder[],
    newTrades: [] as JournalBatch["newTrades"][number][],
    changedTrades: [] as JournalBatch["changedTrades"][number][],
    fills: [] as JournalBatch["fills"][number][],
    positions: [] as JournalBatch["positions"][number][],
    closedPositions: [] as { account_id: number; symbol: string }[],
    events: [] as NewOrderEvent[],
    idempotencyKeys: [] as { person_id: number; key: string }[],
  };
  for (const slot of slots) {
    const committed = slot.committed as CommittedAccount;
    // A lone operation's changes are the batch's; several are merged.
    let changes = (slot.operations[0] as PendingOperation).changes;
    if (slot.operations.length > 1) {
      changes = noChanges();
      for (const operation of slot.operations) mergeChanges(changes, operation.changes);
    }
    slot.flight = changes;
    const working = changes.after as WorkingAccount;
    accounts.push({
      id: slot.accountId,
      strategyId: slot.strategyId,
      expectedVersion: committed.version,
      cash: formatDecimal(working.state.cash),
      commissionsPaid: formatDecimal(working.commissionsPaid),
      planCommissions: planCommissionsText(working.planCommissions),
      eventSeq: working.eventSeq,
    });
    if (changes.traded.size > 0 || changes.desiredPositions !== undefined) {
      strategies.push({
        id: slot.strategyId,
        tradedKinds: [...changes.traded],
        ...(changes.desiredPositions !== undefined ? { desiredPositions: changes.desiredPositions } : {}),
      });
    }
    batch.ocaGroups.push(...changes.ocaGroups);
    for (const { row, isNew } of changes.orders.values()) (isNew ? batch.newOrders : batch.changedOrders).push(row);
    for (const { row, isNew } of changes.trades.values()) (isNew ? batch.newTrades : batch.changedTrades).push(row);
    batch.fills.push(...changes.fills);
    for (const [symbol, position] of changes.positions) {
      if (position) batch.positions.push(position);
      else batch.closedPositions.push({ account_id: slot.accountId, symbol });
    }
    for (const event of changes.events) batch.events.push(outboxRowOf(event, origin));
    for (const { ctx } of slot.operations) {
      if (ctx.idempotency)
        batch.idempotencyKeys.push({ person_id: ctx.idempotency.personId, key: ctx.idempotency.key });
    }
  }
  batch.newOrders.sort((a, b) => a.id - b.id);
  return { accounts, strategies, consumers: [], recordTotals: [], accountOrders: [], copySkips: [], ...batch };
}

/** The committed copy after a batch of the account's operations. */
function committedAfter(before: CommittedAccount, changes: AccountChanges): CommittedAccount {
  const working = changes.after as WorkingAccount;
  // Changed in place: a read holds the account only for as long as it answers.
  const orders = before.orders as Map<number, StoredOrder>;
  for (const [id, { row }] of changes.orders) {
    if (isActiveRow(row)) orders.set(id, row);
    else orders.delete(id);
  }
  const positions = before.positions as Map<string, StoredPosition>;
  for (const [symbol, position] of changes.positions) {
    if (position) positions.set(symbol, position);
    else positions.delete(symbol);
  }
  // Every key written out: a spread with keys overridden after it costs a slow store per key on Node 20's
  // V8 (docs/decisions.md, "Objects keep their hidden classes").
  return {
    version: before.version + 1,
    eventSeq: working.eventSeq,
    cash: working.state.cash,
    startingCash: before.startingCash,
    strategy: working.strategy,
    orders,
    positions,
  };
}
