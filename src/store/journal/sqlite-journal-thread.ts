import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { configureSqlite } from "../sqlite-settings.js";
import { ACCOUNT_ORDER_COLUMNS, COPY_SKIP_COLUMNS } from "./autotrade-columns.js";
import {
  type AllocatedTable,
  type CommitOutcome,
  type IdRanges,
  type JournalBatch,
  PROBED_AT_SETTING,
} from "./batch.js";
import { failureReply, type JournalReply, type JournalRequest } from "./journal-thread.js";

/**
 * The SQLite journal's own thread: it owns a connection of its own and
 * writes the trading frame's batches (each in one transaction, synchronous
 * FULL), so no commit's fsync ever runs on the service's event loop (the WAL
 * is checkpointed on yet another thread, sqlite-checkpoint-thread.ts).
 * Statements are prepared once.
 */
const { file } = workerData as { file: string };
const db = new Database(file);
configureSqlite(db);

const ORDER_COLUMNS = [
  "id",
  "strategy_id",
  "account_id",
  "symbol",
  "symbol_type",
  "order_type",
  "side",
  "open_close",
  "tif",
  "quantity",
  "limit_price",
  "stop_price",
  "profit_target",
  "stop_loss",
  "do_not_create_oca",
  "do_not_sync_to_open",
  "parent_id",
  "oca_group_id",
  "cancel_replace_id",
  "parked_until",
  "expires_at",
  "signal_type",
  "status",
  "filled_quantity",
  "filled_notional",
  "info",
  "posted_at",
  "updated_at",
  "closed_at",
  "local_signal_id",
  "sent_symbol",
] as const;
const ORDER_CHANGES = [
  "status",
  "filled_quantity",
  "filled_notional",
  "parent_id",
  "expires_at",
  "updated_at",
  "info",
  "closed_at",
] as const;
const TRADE_CHANGES = [
  "closed_at",
  "opened_quantity",
  "closed_quantity",
  "open_notional",
  "close_notional",
  "realized",
  "commission",
  "evaluated_at",
  "mae_amount",
  "mae_worst_price",
  "mae_worst_price_at",
  "mae_equity",
  "mae_entry_price",
  "mae_open_quantity",
  "plan_commissions",
] as const;
const TRADE_COLUMNS = [
  "id",
  "strategy_id",
  "account_id",
  "symbol",
  "symbol_type",
  "side",
  "opened_at",
  ...TRADE_CHANGES,
];
const FILL_COLUMNS = [
  "order_id",
  "strategy_id",
  "account_id",
  "trade_id",
  "symbol",
  "symbol_type",
  "side",
  "quantity",
  "price",
  "commission",
  "realized",
  "cash",
  "usd_rate",
  "position_after",
  "filled_at",
];
const POSITION_COLUMNS = [
  "account_id",
  "strategy_id",
  "symbol",
  "symbol_type",
  "quantity",
  "cost",
  "opened_at",
  "trade_id",
];
const EVENT_COLUMNS = [
  "account_id",
  "seq",
  "kind",
  "order_id",
  "payload",
  "actor_person_id",
  "on_behalf_of_person_id",
  "origin",
  "at",
];

const RECORD_COLUMNS = [
  "strategy_id",
  "fills_stock",
  "fills_option",
  "fills_future",
  "fills_forex",
  "latest_fill_at",
  "closed_trades",
  "winners",
  "losers",
  "sum_winners_cents",
  "sum_losers_cents",
  "duration_ms",
] as const;

/** Rows per multi-row insert: fewer statements to run for a large batch (SQLite allows 32,766 parameters). */
const ROWS_PER_INSERT = 64;

/**
 * Inserts rows `ROWS_PER_INSERT` to a statement (the rest one by one), each
 * statement prepared once.
 */
function multiRowInsert(table: string, columns: readonly string[]) {
  const placeholders = `(${columns.map(() => "?").join(", ")})`;
  const many = db.prepare(
    `insert into ${table} (${columns.join(", ")}) values ${Array.from({ length: ROWS_PER_INSERT }, () => placeholders).join(", ")}`,
  );
  const one = db.prepare(`insert into ${table} (${columns.join(", ")}) values ${placeholders}`);
  const valuesOf = (row: object) => columns.map((c) => (row as Record<string, unknown>)[c] ?? null);
  return (rows: readonly object[]) => {
    let i = 0;
    for (; i + ROWS_PER_INSERT <= rows.length; i += ROWS_PER_INSERT) {
      many.run(rows.slice(i, i + ROWS_PER_INSERT).flatMap(valuesOf));
    }
    for (; i < rows.length; i++) one.run(valuesOf(rows[i] as object));
  };
}

const insert = (table: string, columns: readonly string[], tail = "") =>
  db.prepare(`insert into ${table} (${columns.join(", ")}) values (${columns.map((c) => `@${c}`).join(", ")})${tail}`);

const statements = {
  versions: db.prepare<[string], { id: number; version: number }>(
    "select id, version from accounts where id in (select value from json_each(?))",
  ),
  account: db.prepare(
    `update accounts set version = version + 1, cash = @cash, commissions_paid = @commissionsPaid,
      plan_commissions = @planCommissions, event_seq = @eventSeq where id = @id`,
  ),
  traded: {
    trades_stocks: db.prepare("update strategies set trades_stocks = 1 where id = ?"),
    trades_options: db.prepare("update strategies set trades_options = 1 where id = ?"),
    trades_futures: db.prepare("update strategies set trades_futures = 1 where id = ?"),
    trades_forex: db.prepare("update strategies set trades_forex = 1 where id = ?"),
  },
  desired: db.prepare("update strategies set desired_positions = ? where id = ?"),
  ocaGroup: insert("oca_groups", ["id", "strategy_id", "account_id", "local_id"]),
  newOrders: multiRowInsert("orders", ORDER_COLUMNS),
  changedOrder: db.prepare(`update orders set ${ORDER_CHANGES.map((c) => `${c} = @${c}`).join(", ")} where id = @id`),
  newTrades: multiRowInsert("trades", TRADE_COLUMNS),
  changedTrade: db.prepare(`update trades set ${TRADE_CHANGES.map((c) => `${c} = @${c}`).join(", ")} where id = @id`),
  fills: multiRowInsert("fills", FILL_COLUMNS),
  position: insert(
    "positions",
    POSITION_COLUMNS,
    ` on conflict (account_id, symbol) do update set ${POSITION_COLUMNS.slice(3)
      .map((c) => `${c} = excluded.${c}`)
      .join(", ")}`,
  ),
  closedPosition: db.prepare("delete from positions where account_id = @account_id and symbol = @symbol"),
  events: multiRowInsert("order_events", EVENT_COLUMNS),
  accountOrders: multiRowInsert(
    "account_orders",
    ACCOUNT_ORDER_COLUMNS.map(([name]) => name),
  ),
  // A copy skipped once is recorded once, however often its event is consumed again.
  copySkips: db.prepare(
    `insert into copy_skips (${COPY_SKIP_COLUMNS.map(([name]) => name).join(", ")})
      values (${COPY_SKIP_COLUMNS.map(([name]) => `@${name}`).join(", ")}) on conflict do nothing`,
  ),
  consumerAt: db.prepare<[string, number], { seq: number }>(
    "select seq from outbox_positions where consumer = ? and account_id = ?",
  ),
  recordTotals: db.prepare(
    `insert into strategy_records (${RECORD_COLUMNS.join(", ")}) values (${RECORD_COLUMNS.map((c) => `@${c}`).join(", ")})
      on conflict (strategy_id) do update set ${RECORD_COLUMNS.slice(1)
        .map((c) =>
          c === "latest_fill_at"
            ? "latest_fill_at = coalesce(max(latest_fill_at, excluded.latest_fill_at), latest_fill_at, excluded.latest_fill_at)"
            : `${c} = ${c} + excluded.${c}`,
        )
        .join(", ")}`,
  ),
  consumer: db.prepare(
    `insert into outbox_positions (consumer, account_id, seq) values (@consumer, @accountId, @seq)
      on conflict (consumer, account_id) do update set seq = excluded.seq`,
  ),
  idempotencyKey: db.prepare(
    "update idempotency_keys set state = 'committed' where person_id = @person_id and key = @key and state = 'pending'",
  ),
  sequence: db.prepare<[string], { seq: number }>("select seq from sqlite_sequence where name = ?"),
  reserve: db.prepare<[number, string], { seq: number }>(
    "update sqlite_sequence set seq = seq + ? where name = ? returning seq",
  ),
};
const probe = db.prepare(
  `insert into service_settings (name, value) values ('${PROBED_AT_SETTING}', ?)
   on conflict (name) do update set value = excluded.value`,
);
const begin = db.prepare("begin immediate");
const commitStatement = db.prepare("commit");
const rollback = db.prepare("rollback");

function inTransaction<T>(work: () => T): T {
  begin.run();
  try {
    const result = work();
    if (db.inTransaction) commitStatement.run();
    return result;
  } catch (error) {
    if (db.inTransaction) rollback.run();
    throw error;
  }
}

function commit(batch: JournalBatch): CommitOutcome {
  return inTransaction(() => {
    const stored = new Map(
      statements.versions.all(JSON.stringify(batch.accounts.map((a) => a.id))).map((r) => [r.id, r.version]),
    );
    const conflicts = batch.accounts.filter((a) => stored.get(a.id) !== a.expectedVersion).map((a) => a.id);
    const consumerConflicts = batch.consumers
      // Position 0 is no position yet, as null is (PostgreSQL makes such rows: see its journal).
      .filter((c) => (statements.consumerAt.get(c.consumer, c.accountId)?.seq || null) !== (c.expected || null))
      .map((c) => `${c.consumer}:${c.accountId}`);
    if (conflicts.length > 0 || consumerConflicts.length > 0) {
      rollback.run();
      return { ok: false, conflicts, consumerConflicts };
    }
    for (const group of batch.ocaGroups) statements.ocaGroup.run(group);
    statements.newOrders(batch.newOrders);
    statements.newTrades(batch.newTrades);
    for (const order of batch.changedOrders) statements.changedOrder.run(order);
    for (const trade of batch.changedTrades) statements.changedTrade.run(trade);
    statements.fills(batch.fills);
    for (const position of batch.closedPositions) statements.closedPosition.run(position);
    for (const position of batch.positions) statements.position.run(position);
    statements.events(batch.events);
    for (const strategy of batch.strategies) {
      for (const kind of strategy.tradedKinds) statements.traded[kind].run(strategy.id);
      if (strategy.desiredPositions !== undefined) statements.desired.run(strategy.desiredPositions, strategy.id);
    }
    for (const totals of batch.recordTotals) statements.recordTotals.run(totals);
    statements.accountOrders(batch.accountOrders);
    for (const skip of batch.copySkips) statements.copySkips.run(skip);
    for (const consumer of batch.consumers) statements.consumer.run(consumer);
    for (const account of batch.accounts) statements.account.run(account);
    for (const key of batch.idempotencyKeys) statements.idempotencyKey.run(key);
    return { ok: true };
  });
}

/** Moves the table's AUTOINCREMENT counter past `count` ids: ordinary inserts can never take them. */
function reserve(table: AllocatedTable, count: number): IdRanges {
  return inTransaction(() => {
    if (!statements.sequence.get(table)) {
      const max = db.prepare<[], { max: number | null }>(`select max(id) as max from ${table}`).get();
      db.prepare("insert into sqlite_sequence (name, seq) values (?, ?)").run(table, max?.max ?? 0);
    }
    const row = statements.reserve.get(count, table);
    if (!row) throw new Error(`no id counter for ${table}`);
    return [[row.seq - count + 1, row.seq]];
  });
}

parentPort?.on("message", (request: JournalRequest) => {
  const { id, command } = request;
  try {
    let value: CommitOutcome | IdRanges | null = null;
    if (command.kind === "commit") value = commit(command.batch);
    else if (command.kind === "reserve") value = reserve(command.table, command.count);
    else if (command.kind === "probe") probe.run(command.atIso);
    else {
      db.close();
    }
    parentPort?.postMessage({ id, ok: true, value } satisfies JournalReply);
    if (command.kind === "close") parentPort?.close();
  } catch (error) {
    parentPort?.postMessage(failureReply(id, error));
  }
});
