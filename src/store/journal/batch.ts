import type { Selectable } from "kysely";
import type {
  AccountOrdersTable,
  CopySkipsTable,
  FillsTable,
  OcaGroupsTable,
  OrderEventsTable,
  OrdersTable,
  PositionsTable,
  StrategyRecordsTable,
  TradesTable,
} from "../schema.js";

/**
 * One durable batch of the trading frame: the changes of many operations on
 * many accounts, written in one transaction. Rows are full images as stored
 * (decimals already as text), so a writer only moves them into SQL. Each
 * account is written only from the version the frame read it at; when another
 * process wrote it meanwhile the whole batch is refused with the accounts in
 * conflict, and nothing is written.
 */
export type StoredOrder = Selectable<OrdersTable>;
export type StoredTrade = Selectable<TradesTable>;
export type StoredPosition = Selectable<PositionsTable>;
export type StoredOcaGroup = Selectable<OcaGroupsTable>;
export type NewFill = Omit<Selectable<FillsTable>, "id">;
export type NewOrderEvent = Omit<Selectable<OrderEventsTable>, "id">;
/** An account order the autotrade copier made (its id is storage's: the idempotency key names it). */
export type NewAccountOrder = Omit<Selectable<AccountOrdersTable>, "id">;
export type NewCopySkip = Omit<Selectable<CopySkipsTable>, "id">;
/** What a batch adds to a strategy's record totals (latest fill: the later of the two). */
export type RecordTotals = StrategyRecordsTable;

export interface AccountCommit {
  readonly id: number;
  /** The strategy whose model account it is (other processes are told by strategy). */
  readonly strategyId: number;
  /** The version the changes were made from: the commit is refused if storage holds another. */
  readonly expectedVersion: number;
  readonly cash: string;
  readonly commissionsPaid: string;
  readonly planCommissions: string;
  /** The sequence number of the account's last event after the commit. */
  readonly eventSeq: number;
}

/** Changes to a strategy that come with its trading. */
export interface StrategyCommit {
  readonly id: number;
  /** SecurityTypesEnabled columns to set (the strategy placed an order of the kind). */
  readonly tradedKinds: readonly ("trades_stocks" | "trades_options" | "trades_futures" | "trades_forex")[];
  /** The legacy desired-positions mode's portfolio; undefined leaves it as it is. */
  readonly desiredPositions?: string | null;
}

/** A consumer's position in an account's events, moved only from where it was (`expected`, null: none yet). */
export interface ConsumerAdvance {
  readonly consumer: string;
  readonly accountId: number;
  readonly expected: number | null;
  readonly seq: number;
}

export interface JournalBatch {
  readonly accounts: readonly AccountCommit[];
  readonly strategies: readonly StrategyCommit[];
  readonly ocaGroups: readonly StoredOcaGroup[];
  /** In id order, so a new order's parent is stored before it. */
  readonly newOrders: readonly StoredOrder[];
  readonly changedOrders: readonly StoredOrder[];
  readonly newTrades: readonly StoredTrade[];
  readonly changedTrades: readonly StoredTrade[];
  readonly fills: readonly NewFill[];
  /** Open positions after the batch (inserted or replaced). */
  readonly positions: readonly StoredPosition[];
  /** Positions the batch closed. */
  readonly closedPositions: readonly { readonly account_id: number; readonly symbol: string }[];
  readonly events: readonly NewOrderEvent[];
  /** Where consumers of the outbox stand after the batch, each moved only from where it was. */
  readonly consumers: readonly ConsumerAdvance[];
  /** What the records consumer adds to strategies' totals, with its positions. */
  readonly recordTotals: readonly RecordTotals[];
  /** The autotrade copier's account orders and skipped copies, with its positions. */
  readonly accountOrders: readonly NewAccountOrder[];
  readonly copySkips: readonly NewCopySkip[];
  /** Idempotency keys whose requests the batch carries out (pending claims marked committed). */
  readonly idempotencyKeys: readonly { readonly person_id: number; readonly key: string }[];
}

export type CommitOutcome =
  | { readonly ok: true }
  /** Accounts another writer changed since the frame read them; consumers whose position moved. */
  | { readonly ok: false; readonly conflicts: readonly number[]; readonly consumerConflicts: readonly string[] };

/** Tables whose ids the frame hands out itself, so an operation knows them before its commit. */
export type AllocatedTable = "orders" | "oca_groups" | "trades";

/** Ids reserved for one process: [first, last] ranges. */
export type IdRanges = readonly (readonly [number, number])[];

/** Where the frame's batches go: one writer per process, batches one at a time. */
export interface Journal {
  /** Why the journal can write nothing more (its writer's thread stopped), or null while it can. */
  readonly failure: string | null;
  commit(batch: JournalBatch): Promise<CommitOutcome>;
  reserveIds(table: AllocatedTable, count: number): Promise<IdRanges>;
  /**
   * One small durable write of the journal's own (the time, ISO 8601, as the
   * service setting PROBED_AT_SETTING): readiness asks it, so a process whose
   * storage answers reads but takes no writes (a full disk, a lock another
   * writer holds) is told apart from one that can trade.
   */
  probe(atIso: string): Promise<void>;
  close(): Promise<void>;
}

/** The service setting the journal's probe writes: when this storage last took a write of it. */
export const PROBED_AT_SETTING = "journal_probed_at";

export const isEmptyBatch = (batch: JournalBatch): boolean =>
  batch.accounts.length === 0 && batch.consumers.length === 0;
