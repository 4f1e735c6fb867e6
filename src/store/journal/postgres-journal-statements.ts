import { ORDERS_CHANNEL } from "../channels.js";
import { PG_LOCK_TIMEOUT_MS } from "../pg-connect.js";
import { ACCOUNT_ORDER_COLUMNS, COPY_SKIP_COLUMNS, type JournalColumn } from "./autotrade-columns.js";
import type { JournalBatch } from "./batch.js";

/**
 * What the PostgreSQL journal (postgres-journal-thread.ts) sends: each batch
 * is one statement, run as a transaction of its own (one round trip). The
 * statement locks the accounts it moves in id order (two processes never
 * deadlock on them) and the consumers' positions, checks them against the
 * versions and positions the frame read, and only when all of them match
 * writes every table (arrays unnested); otherwise it writes nothing and
 * answers which ones moved. At commit the other processes are told which
 * accounts moved (NOTIFY).
 */
type Column = JournalColumn;

const ORDER_COLUMNS: readonly Column[] = [
  ["id", "bigint"],
  ["strategy_id", "bigint"],
  ["account_id", "bigint"],
  ["symbol", "text"],
  ["symbol_type", "text"],
  ["order_type", "text"],
  ["side", "text"],
  ["open_close", "text"],
  ["tif", "text"],
  ["quantity", "text"],
  ["limit_price", "text"],
  ["stop_price", "text"],
  ["profit_target", "text"],
  ["stop_loss", "text"],
  ["do_not_create_oca", "integer"],
  ["do_not_sync_to_open", "integer"],
  ["parent_id", "bigint"],
  ["oca_group_id", "bigint"],
  ["cancel_replace_id", "bigint"],
  ["parked_until", "bigint"],
  ["expires_at", "bigint"],
  ["signal_type", "integer"],
  ["status", "text"],
  ["filled_quantity", "text"],
  ["filled_notional", "text"],
  ["info", "text"],
  ["posted_at", "bigint"],
  ["updated_at", "bigint"],
  ["closed_at", "bigint"],
  ["local_signal_id", "text"],
  ["sent_symbol", "text"],
];
const ORDER_CHANGES: readonly Column[] = [
  ["id", "bigint"],
  ["status", "text"],
  ["filled_quantity", "text"],
  ["filled_notional", "text"],
  ["parent_id", "bigint"],
  ["expires_at", "bigint"],
  ["updated_at", "bigint"],
  ["info", "text"],
  ["closed_at", "bigint"],
];
const TRADE_CHANGES: readonly Column[] = [
  ["id", "bigint"],
  ["closed_at", "bigint"],
  ["opened_quantity", "text"],
  ["closed_quantity", "text"],
  ["open_notional", "text"],
  ["close_notional", "text"],
  ["realized", "text"],
  ["commission", "text"],
  ["evaluated_at", "bigint"],
  ["mae_amount", "text"],
  ["mae_worst_price", "text"],
  ["mae_worst_price_at", "bigint"],
  ["mae_equity", "text"],
  ["mae_entry_price", "text"],
  ["mae_open_quantity", "text"],
  ["plan_commissions", "text"],
];
const TRADE_COLUMNS: readonly Column[] = [
  ...TRADE_CHANGES,
  ["strategy_id", "bigint"],
  ["account_id", "bigint"],
  ["symbol", "text"],
  ["symbol_type", "text"],
  ["side", "text"],
  ["opened_at", "bigint"],
];
const FILL_COLUMNS: readonly Column[] = [
  ["order_id", "bigint"],
  ["strategy_id", "bigint"],
  ["account_id", "bigint"],
  ["trade_id", "bigint"],
  ["symbol", "text"],
  ["symbol_type", "text"],
  ["side", "text"],
  ["quantity", "text"],
  ["price", "text"],
  ["commission", "text"],
  ["realized", "text"],
  ["cash", "text"],
  ["usd_rate", "text"],
  ["position_after", "text"],
  ["filled_at", "bigint"],
];
const POSITION_COLUMNS: readonly Column[] = [
  ["account_id", "bigint"],
  ["symbol", "text"],
  ["strategy_id", "bigint"],
  ["symbol_type", "text"],
  ["quantity", "text"],
  ["cost", "text"],
  ["opened_at", "bigint"],
  ["trade_id", "bigint"],
];
const EVENT_COLUMNS: readonly Column[] = [
  ["account_id", "bigint"],
  ["seq", "bigint"],
  ["kind", "text"],
  ["order_id", "bigint"],
  ["payload", "text"],
  ["actor_person_id", "bigint"],
  ["on_behalf_of_person_id", "bigint"],
  ["origin", "text"],
  ["at", "bigint"],
];
const RECORD_COLUMNS: readonly Column[] = [
  ["strategy_id", "bigint"],
  ["fills_stock", "bigint"],
  ["fills_option", "bigint"],
  ["fills_future", "bigint"],
  ["fills_forex", "bigint"],
  ["latest_fill_at", "bigint"],
  ["closed_trades", "bigint"],
  ["winners", "bigint"],
  ["losers", "bigint"],
  ["sum_winners_cents", "bigint"],
  ["sum_losers_cents", "bigint"],
  ["duration_ms", "bigint"],
];
const ACCOUNT_COLUMNS: readonly Column[] = [
  ["id", "bigint"],
  ["cash", "text"],
  ["commissionsPaid", "text"],
  ["planCommissions", "text"],
  ["eventSeq", "bigint"],
];

/**
 * What a batch may be written over, locked and compared first: the accounts'
 * versions (parameters 1 and 2: ids, expected versions) and the consumers'
 * positions (3 to 5: names, accounts, expected positions, null for none; a
 * position at 0, a first row made just before, is none as well). The
 * positions are locked after the accounts, as every batch takes them. `guard`
 * names what moved; every write of the statement waits on it and writes only
 * when nothing did.
 */
const GUARD = `locked as materialized (
    select a.id, a.version from accounts a where a.id = any($1::bigint[]) order by a.id for update),
  held as materialized (
    select o.consumer, o.account_id, o.seq from outbox_positions o
      join unnest($3::text[], $4::bigint[]) as c(consumer, account_id)
        on o.consumer = c.consumer and o.account_id = c.account_id
      where (select count(*) from locked) >= 0
      order by o.consumer, o.account_id for update of o),
  guard as materialized (
    select (select array_agg(e.id order by e.id) from unnest($1::bigint[], $2::bigint[]) as e(id, version)
        left join locked l on l.id = e.id where l.version is distinct from e.version) as conflicts,
      (select array_agg(c.consumer || ':' || c.account_id) from unnest($3::text[], $4::bigint[], $5::bigint[])
          as c(consumer, account_id, seq)
        left join held h on h.consumer = c.consumer and h.account_id = c.account_id
        where nullif(h.seq, 0) is distinct from nullif(c.seq, 0)) as consumer_conflicts)`;
const GUARD_PARAMETERS = 5;
const NOTHING_MOVED = "(select conflicts is null and consumer_conflicts is null from guard)";

/** One table's part of the write: its column arrays unnested, and the statement that writes them. */
interface TablePart {
  readonly name: string;
  readonly columns: readonly Column[];
  /** The CTE's statement; `source` is the unnested rows as `u`, none unless the guard passed. */
  readonly body: (source: string) => string;
  readonly rows: (batch: JournalBatch) => readonly object[];
}

/**
 * The batch's writes as one statement: each table's rows are arrays unnested
 * in a data-modifying CTE of their own, behind the guard. A batch never holds
 * the same row twice (an order, trade or position is new, changed or closed,
 * not two of them; a strategy's flags and portfolio are one update), and
 * foreign keys are checked at the statement's end, so the CTEs need no order
 * among them. The statement answers the guard's conflicts and sends the
 * notifications telling other processes which accounts moved, delivered when
 * the transaction commits.
 *
 * Only the tables the batch writes are in its statement, one statement per
 * shape of batch (which tables it writes), each prepared once: a CTE writing
 * nothing still opens its table and every index of it, and takes their locks
 * (past the sixteen a session takes cheaply), at every batch.
 */
class WriteStatement {
  readonly name: string;
  readonly text: string;

  constructor(
    shape: number,
    readonly parts: readonly TablePart[],
  ) {
    this.name = `journal_write_${shape}`;
    let next = GUARD_PARAMETERS + 1;
    const ctes = parts.map(({ name, columns, body }) => {
      const params = columns.map(([, type]) => `$${next++}::${type}[]`);
      const names = columns.map(([column]) => `"${column}"`).join(", ");
      const source = `(select * from unnest(${params.join(", ")}) as r(${names}) where ${NOTHING_MOVED}) as u`;
      return `${name} as (${body(source)})`;
    });
    // The notifications: channel and payload pieces are the last two parameters.
    this.text = `with ${[GUARD, ...ctes].join(",\n")}
select conflicts, consumer_conflicts,
  (select count(pg_notify($${next}::text, current_schema() || piece)) from unnest($${next + 1}::text[]) as piece
    where ${NOTHING_MOVED}) as notified
from guard`;
  }

  /** The parameters: the guard's, then each part's column arrays (`tables`: every part's rows), then the notifications'. */
  values(batch: JournalBatch, origin: string, tables: ReadonlyMap<TablePart, readonly object[]>): unknown[] {
    return [
      batch.accounts.map((a) => a.id),
      batch.accounts.map((a) => a.expectedVersion),
      batch.consumers.map((c) => c.consumer),
      batch.consumers.map((c) => c.accountId),
      batch.consumers.map((c) => c.expected),
      ...this.parts.flatMap((part) => arrays(tables.get(part) ?? [], part.columns)),
      ORDERS_CHANNEL,
      notifications(batch, origin),
    ];
  }
}

const names = (columns: readonly Column[]) => columns.map(([name]) => name).join(", ");
const inserted = (table: string, columns: readonly Column[]) => (source: string) =>
  `insert into ${table} (${names(columns)}) select u.* from ${source}`;
const updated = (table: string, columns: readonly Column[]) => (source: string) =>
  `update ${table} t set ${columns
    .filter(([name]) => name !== "id")
    .map(([name]) => `${name} = u.${name}`)
    .join(", ")} from ${source} where t.id = u.id`;

const OCA_GROUP_COLUMNS: readonly Column[] = [
  ["id", "bigint"],
  ["strategy_id", "bigint"],
  ["account_id", "bigint"],
  ["local_id", "text"],
];
const CLOSED_POSITION_COLUMNS: readonly Column[] = [
  ["account_id", "bigint"],
  ["symbol", "text"],
];
const STRATEGY_COLUMNS: readonly Column[] = [
  ["id", "bigint"],
  ["trades_stocks", "integer"],
  ["trades_options", "integer"],
  ["trades_futures", "integer"],
  ["trades_forex", "integer"],
  ["sets_desired", "integer"],
  ["desired_positions", "text"],
];
const IDEMPOTENCY_KEY_COLUMNS: readonly Column[] = [
  ["person_id", "bigint"],
  ["key", "text"],
];
const CONSUMER_COLUMNS: readonly Column[] = [
  ["consumer", "text"],
  ["accountId", "bigint"],
  ["seq", "bigint"],
];

const part = (
  name: string,
  columns: readonly Column[],
  body: TablePart["body"],
  rows: TablePart["rows"],
): TablePart => ({ name, columns, body, rows });

/** Every table a batch may write, in the order of the statement's parameters. */
const PARTS: readonly TablePart[] = [
  part("oca", OCA_GROUP_COLUMNS, inserted("oca_groups", OCA_GROUP_COLUMNS), (b) => b.ocaGroups),
  part("new_orders", ORDER_COLUMNS, inserted("orders", ORDER_COLUMNS), (b) => b.newOrders),
  part("new_trades", TRADE_COLUMNS, inserted("trades", TRADE_COLUMNS), (b) => b.newTrades),
  part("changed_orders", ORDER_CHANGES, updated("orders", ORDER_CHANGES), (b) => b.changedOrders),
  part("changed_trades", TRADE_CHANGES, updated("trades", TRADE_CHANGES), (b) => b.changedTrades),
  part("fills", FILL_COLUMNS, inserted("fills", FILL_COLUMNS), (b) => b.fills),
  part(
    "closed_positions",
    CLOSED_POSITION_COLUMNS,
    (source) => `delete from positions p using ${source} where p.account_id = u.account_id and p.symbol = u.symbol`,
    (b) => b.closedPositions,
  ),
  part(
    "open_positions",
    POSITION_COLUMNS,
    (source) => `${inserted("positions", POSITION_COLUMNS)(source)}
      on conflict (account_id, symbol) do update set ${POSITION_COLUMNS.slice(2)
        .map(([name]) => `${name} = excluded.${name}`)
        .join(", ")}`,
    (b) => b.positions,
  ),
  part("events", EVENT_COLUMNS, inserted("order_events", EVENT_COLUMNS), (b) => b.events),
  part(
    "strategies_traded",
    STRATEGY_COLUMNS,
    (source) => `update strategies s set trades_stocks = greatest(s.trades_stocks, u.trades_stocks),
      trades_options = greatest(s.trades_options, u.trades_options),
      trades_futures = greatest(s.trades_futures, u.trades_futures),
      trades_forex = greatest(s.trades_forex, u.trades_forex),
      desired_positions = case when u.sets_desired = 1 then u.desired_positions else s.desired_positions end
    from ${source} where s.id = u.id`,
    (b) => b.strategies.map(strategyRow),
  ),
  part(
    "records",
    RECORD_COLUMNS,
    (source) => `insert into strategy_records as r (${names(RECORD_COLUMNS)}) select u.* from ${source}
      on conflict (strategy_id) do update set ${RECORD_COLUMNS.slice(1)
        .map(([name]) =>
          name === "latest_fill_at"
            ? "latest_fill_at = greatest(r.latest_fill_at, excluded.latest_fill_at)"
            : `${name} = r.${name} + excluded.${name}`,
        )
        .join(", ")}`,
    (b) => b.recordTotals,
  ),
  part(
    "account_orders",
    ACCOUNT_ORDER_COLUMNS,
    inserted("account_orders", ACCOUNT_ORDER_COLUMNS),
    (b) => b.accountOrders,
  ),
  part(
    "copy_skips",
    COPY_SKIP_COLUMNS,
    (source) => `${inserted("copy_skips", COPY_SKIP_COLUMNS)(source)} on conflict do nothing`,
    (b) => b.copySkips,
  ),
  part(
    "consumers",
    CONSUMER_COLUMNS,
    (source) => `insert into outbox_positions (consumer, account_id, seq) select u.* from ${source}
      on conflict (consumer, account_id) do update set seq = excluded.seq`,
    (b) => b.consumers,
  ),
  part(
    "committed_keys",
    IDEMPOTENCY_KEY_COLUMNS,
    (source) => `update idempotency_keys k set state = 'committed' from ${source}
      where k.person_id = u.person_id and k.key = u.key and k.state = 'pending'`,
    (b) => b.idempotencyKeys,
  ),
  part(
    "moved_accounts",
    ACCOUNT_COLUMNS,
    (source) => `update accounts a set version = a.version + 1, cash = u."cash", commissions_paid = u."commissionsPaid",
      plan_commissions = u."planCommissions", event_seq = u."eventSeq" from ${source} where a.id = u.id`,
    (b) => b.accounts,
  ),
];

/** The statements made so far, by shape: a bit per part, set when the batch writes that table. */
const byShape = new Map<number, WriteStatement>();

export interface Write {
  /** The statement's name: prepared once per connection. */
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

/** The batch's write with the statement of `shape` (null: the batch's own). */
function writeWith(batch: JournalBatch, origin: string, shape: number | null): Write {
  const tables = new Map(PARTS.map((part) => [part, part.rows(batch)]));
  const bits =
    shape ?? PARTS.reduce((mask, part, i) => ((tables.get(part)?.length ?? 0) > 0 ? mask | (1 << i) : mask), 0);
  let statement = byShape.get(bits);
  if (!statement) {
    statement = new WriteStatement(
      bits,
      PARTS.filter((_, i) => (bits & (1 << i)) !== 0),
    );
    byShape.set(bits, statement);
  }
  return { name: statement.name, text: statement.text, values: statement.values(batch, origin, tables) };
}

/** The write of a batch: the statement of its shape, writing only the tables it writes, and its parameters. */
export const writeOf = (batch: JournalBatch, origin: string): Write => writeWith(batch, origin, null);

/** The write of every table, whatever the batch holds (its plan is the one each shape's is a part of). */
export const fullWriteOf = (batch: JournalBatch, origin: string): Write =>
  writeWith(batch, origin, (1 << PARTS.length) - 1);

export const RESERVE_SQL = "select nextval(pg_get_serial_sequence($1, 'id'))::bigint as id from generate_series(1, $2)";

/**
 * The journal's connection never scans a table: every statement it sends
 * finds its rows by key (an account, an order, a trade by id; a position by
 * account and symbol). Left to estimates, the planner may join a batch's rows
 * to a whole table instead, as it did with statistics not yet gathered on
 * 100,000 orders: each batch of fills read all of them to change a few
 * hundred (35 ms of a 70 ms write).
 *
 * The write is planned once, generically, not anew for each batch's arrays:
 * planning its sixteen CTEs took 0.7 ms of a batch's 4.5 (25 orders), and
 * whatever the arrays hold, the plan looks each row up by key.
 *
 * A lock another session holds (an operator's LOCK TABLE, a forgotten open
 * transaction) is waited for 5 s, as SQLite waits for its write lock, not for
 * ever: every account's trading waits on the batch in flight, so the batch
 * fails instead (55P03, answered 503 with Retry-After). The batch's own
 * account locks are held for milliseconds.
 */
export const SESSION_SETTINGS = `set enable_seqscan = off; set plan_cache_mode = force_generic_plan; set lock_timeout = '${PG_LOCK_TIMEOUT_MS}ms'`;

/** The column arrays of rows, in the columns' order. */
function arrays(rows: readonly object[], columns: readonly Column[]): unknown[][] {
  return columns.map(([name]) => rows.map((row) => (row as Record<string, unknown>)[name] ?? null));
}

/** A consumer's name goes into SQL text as it is: it is one of ours, and never anything but these characters. */
const CONSUMER_NAME = /^[a-z_]+$/;

/**
 * A batch that starts a consumer's position in an account cannot be one
 * statement: two processes would both find no position, and the second to
 * commit would move it again. Its transaction is opened first, in one round
 * trip: the accounts are locked in id order, as the write locks them, then
 * the first positions are made at 0, in order, so the write has a row to lock
 * (two processes taking the same first events wait for each other instead of
 * both finding no row). The write then runs in that transaction. Only ids and
 * consumer names are in the text: integers, and names checked above.
 */
export function firstPositionsText(batch: JournalBatch): string | null {
  const first = batch.consumers.filter((c) => c.expected === null);
  if (first.length === 0) return null;
  const ids = (values: readonly number[]) => {
    if (!values.every(Number.isSafeInteger)) throw new Error("an account id that is not an integer");
    return `'{${values.join(",")}}'::bigint[]`;
  };
  const consumers = (values: readonly string[]) => {
    if (!values.every((name) => CONSUMER_NAME.test(name))) throw new Error("a consumer name outside [a-z_]");
    return `array[${values.map((name) => `'${name}'`).join(",")}]::text[]`;
  };
  return [
    "begin",
    `select id from accounts where id = any(${ids(batch.accounts.map((a) => a.id))}) order by id for update`,
    `insert into outbox_positions (consumer, account_id, seq)
      select consumer, account_id, 0 from unnest(${consumers(first.map((c) => c.consumer))},
        ${ids(first.map((c) => c.accountId))}) as c(consumer, account_id)
      order by consumer, account_id on conflict do nothing`,
  ].join(";\n");
}

/** A NOTIFY payload is at most 8000 bytes: account lists are sent in pieces. */
const NOTIFY_PIECE = 7000;

/** Other processes learn which accounts moved, to what version, when this commits. */
function notifications(batch: JournalBatch, origin: string): string[] {
  const pieces: string[] = [];
  let piece = "";
  for (const account of batch.accounts) {
    piece += `${piece === "" ? "" : ","}${account.id}:${account.strategyId}:${account.expectedVersion + 1}:${account.eventSeq}`;
    if (piece.length > NOTIFY_PIECE) {
      pieces.push(`|${origin}|${piece}`);
      piece = "";
    }
  }
  if (piece !== "") pieces.push(`|${origin}|${piece}`);
  return pieces;
}

/** A strategy's flags and portfolio as one row of the strategies' update. */
const strategyRow = (strategy: JournalBatch["strategies"][number]) => ({
  id: strategy.id,
  trades_stocks: strategy.tradedKinds.includes("trades_stocks") ? 1 : 0,
  trades_options: strategy.tradedKinds.includes("trades_options") ? 1 : 0,
  trades_futures: strategy.tradedKinds.includes("trades_futures") ? 1 : 0,
  trades_forex: strategy.tradedKinds.includes("trades_forex") ? 1 : 0,
  sets_desired: strategy.desiredPositions !== undefined ? 1 : 0,
  desired_positions: strategy.desiredPositions ?? null,
});
