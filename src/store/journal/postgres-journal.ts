import pg from "pg";
import { ORDERS_CHANNEL } from "../channels.js";
import type { AllocatedTable, CommitOutcome, IdRanges, Journal, JournalBatch } from "./batch.js";

/**
 * The PostgreSQL journal: one connection of its own; each batch is one
 * transaction of a fixed handful of prepared statements, every table written
 * with one multi-row statement (arrays unnested), whatever the batch holds.
 * The accounts are locked in id order first (two processes never deadlock on
 * them) and checked against the versions the frame read. At commit the other
 * processes are told which accounts moved (NOTIFY).
 */
type Column = readonly [name: string, type: "bigint" | "integer" | "text"];

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

const unnest = (columns: readonly Column[]) =>
  `unnest(${columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(", ")}) as u(${columns.map(([name]) => `"${name}"`).join(", ")})`;
const names = (columns: readonly Column[]) => columns.map(([name]) => name).join(", ");
const assignments = (columns: readonly Column[], table: string) =>
  columns
    .filter(([name]) => name !== "id")
    .map(([name]) => `${name} = ${table}.${name}`)
    .join(", ");

const SQL = {
  lockAccounts: "select id, version from accounts where id = any($1::bigint[]) order by id for update",
  // A consumer's first position in an account is a row made at 0 (nothing read): a row to lock, so two
  // processes taking the same first events wait for each other instead of both finding no row.
  newConsumers: `insert into outbox_positions (consumer, account_id, seq)
    select consumer, account_id, 0 from unnest($1::text[], $2::bigint[]) as c(consumer, account_id)
    order by consumer, account_id on conflict do nothing`,
  lockConsumers: `select o.consumer, o.account_id, o.seq from outbox_positions o
    join unnest($1::text[], $2::bigint[]) as c(consumer, account_id)
      on o.consumer = c.consumer and o.account_id = c.account_id for update of o`,
  ocaGroups: `insert into oca_groups (id, strategy_id, account_id, local_id)
    select * from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[])`,
  newOrders: `insert into orders (${names(ORDER_COLUMNS)}) select u.* from ${unnest(ORDER_COLUMNS)}`,
  newTrades: `insert into trades (${names(TRADE_COLUMNS)}) select u.* from ${unnest(TRADE_COLUMNS)}`,
  changedOrders: `update orders o set ${assignments(ORDER_CHANGES, "u")} from ${unnest(ORDER_CHANGES)} where o.id = u.id`,
  changedTrades: `update trades t set ${assignments(TRADE_CHANGES, "u")} from ${unnest(TRADE_CHANGES)} where t.id = u.id`,
  fills: `insert into fills (${names(FILL_COLUMNS)}) select u.* from ${unnest(FILL_COLUMNS)}`,
  closedPositions: `delete from positions p using unnest($1::bigint[], $2::text[]) as d(account_id, symbol)
    where p.account_id = d.account_id and p.symbol = d.symbol`,
  positions: `insert into positions (${names(POSITION_COLUMNS)}) select u.* from ${unnest(POSITION_COLUMNS)}
    on conflict (account_id, symbol) do update set ${POSITION_COLUMNS.slice(2)
      .map(([name]) => `${name} = excluded.${name}`)
      .join(", ")}`,
  events: `insert into order_events (${names(EVENT_COLUMNS)}) select u.* from ${unnest(EVENT_COLUMNS)}`,
  traded: `update strategies s set trades_stocks = greatest(s.trades_stocks, u.stocks),
      trades_options = greatest(s.trades_options, u.options), trades_futures = greatest(s.trades_futures, u.futures),
      trades_forex = greatest(s.trades_forex, u.forex)
    from unnest($1::bigint[], $2::integer[], $3::integer[], $4::integer[], $5::integer[])
      as u(id, stocks, options, futures, forex) where s.id = u.id`,
  desired: "update strategies set desired_positions = $1 where id = $2",
  recordTotals: `insert into strategy_records as r (${names(RECORD_COLUMNS)}) select u.* from ${unnest(RECORD_COLUMNS)}
    on conflict (strategy_id) do update set ${RECORD_COLUMNS.slice(1)
      .map(([name]) =>
        name === "latest_fill_at"
          ? "latest_fill_at = greatest(r.latest_fill_at, excluded.latest_fill_at)"
          : `${name} = r.${name} + excluded.${name}`,
      )
      .join(", ")}`,
  consumers: `insert into outbox_positions (consumer, account_id, seq) select * from unnest($1::text[], $2::bigint[], $3::bigint[])
    on conflict (consumer, account_id) do update set seq = excluded.seq`,
  accounts: `update accounts a set version = a.version + 1, cash = u."cash", commissions_paid = u."commissionsPaid",
      plan_commissions = u."planCommissions", event_seq = u."eventSeq" from ${unnest(ACCOUNT_COLUMNS)} where a.id = u.id`,
  notify: "select pg_notify($1, current_schema() || $2)",
  reserve: "select nextval(pg_get_serial_sequence($1, 'id'))::bigint as id from generate_series(1, $2)",
} as const;

/** The column arrays of rows, in the columns' order. */
function arrays(rows: readonly object[], columns: readonly Column[]): unknown[][] {
  return columns.map(([name]) => rows.map((row) => (row as Record<string, unknown>)[name] ?? null));
}

/** A NOTIFY payload is at most 8000 bytes: account lists are sent in pieces. */
const NOTIFY_PIECE = 7000;

export function openPostgresJournal(url: string, schema: string | undefined, origin: string): Journal {
  let client: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  const connection = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const fresh = new pg.Client({
        connectionString: url,
        ...(schema ? { options: `-c search_path=${schema}` } : {}),
      });
      // A lost connection is made again for the next batch.
      fresh.on("error", () => {
        if (client === fresh) client = null;
      });
      try {
        await fresh.connect();
        client = fresh;
        return fresh;
      } finally {
        connecting = null;
      }
    })();
    return connecting;
  };
  const run = (db: pg.Client, name: keyof typeof SQL, values: unknown[]) =>
    db.query({ name: `journal_${name}`, text: SQL[name], values });

  async function write(db: pg.Client, batch: JournalBatch): Promise<CommitOutcome> {
    const locked = await run(db, "lockAccounts", [batch.accounts.map((a) => a.id)]);
    const stored = new Map(locked.rows.map((row: { id: number; version: number }) => [row.id, row.version]));
    const conflicts = batch.accounts.filter((a) => stored.get(a.id) !== a.expectedVersion).map((a) => a.id);
    let consumerConflicts: string[] = [];
    if (batch.consumers.length > 0) {
      const first = batch.consumers.filter((c) => c.expected === null);
      if (first.length > 0) {
        await run(db, "newConsumers", [first.map((c) => c.consumer), first.map((c) => c.accountId)]);
      }
      const positions = await run(db, "lockConsumers", [
        batch.consumers.map((c) => c.consumer),
        batch.consumers.map((c) => c.accountId),
      ]);
      const at = new Map(
        positions.rows.map((row: { consumer: string; account_id: number; seq: number }) => [
          `${row.consumer}:${row.account_id}`,
          row.seq,
        ]),
      );
      // Position 0 (a first row just made) is no position yet, as null is.
      consumerConflicts = batch.consumers
        .filter((c) => (at.get(`${c.consumer}:${c.accountId}`) || null) !== (c.expected || null))
        .map((c) => `${c.consumer}:${c.accountId}`);
    }
    if (conflicts.length > 0 || consumerConflicts.length > 0) return { ok: false, conflicts, consumerConflicts };
    if (batch.ocaGroups.length > 0) {
      await run(
        db,
        "ocaGroups",
        arrays(batch.ocaGroups, [
          ["id", "bigint"],
          ["strategy_id", "bigint"],
          ["account_id", "bigint"],
          ["local_id", "text"],
        ]),
      );
    }
    if (batch.newOrders.length > 0) await run(db, "newOrders", arrays(batch.newOrders, ORDER_COLUMNS));
    if (batch.newTrades.length > 0) await run(db, "newTrades", arrays(batch.newTrades, TRADE_COLUMNS));
    if (batch.changedOrders.length > 0) await run(db, "changedOrders", arrays(batch.changedOrders, ORDER_CHANGES));
    if (batch.changedTrades.length > 0) await run(db, "changedTrades", arrays(batch.changedTrades, TRADE_CHANGES));
    if (batch.fills.length > 0) await run(db, "fills", arrays(batch.fills, FILL_COLUMNS));
    if (batch.closedPositions.length > 0) {
      await run(
        db,
        "closedPositions",
        arrays(batch.closedPositions, [
          ["account_id", "bigint"],
          ["symbol", "text"],
        ]),
      );
    }
    if (batch.positions.length > 0) await run(db, "positions", arrays(batch.positions, POSITION_COLUMNS));
    if (batch.events.length > 0) await run(db, "events", arrays(batch.events, EVENT_COLUMNS));
    const traded = batch.strategies.filter((s) => s.tradedKinds.length > 0);
    if (traded.length > 0) {
      const flag = (kind: string) => traded.map((s) => (s.tradedKinds.includes(kind as never) ? 1 : 0));
      await run(db, "traded", [
        traded.map((s) => s.id),
        flag("trades_stocks"),
        flag("trades_options"),
        flag("trades_futures"),
        flag("trades_forex"),
      ]);
    }
    for (const strategy of batch.strategies) {
      if (strategy.desiredPositions !== undefined) await run(db, "desired", [strategy.desiredPositions, strategy.id]);
    }
    if (batch.recordTotals.length > 0) await run(db, "recordTotals", arrays(batch.recordTotals, RECORD_COLUMNS));
    if (batch.consumers.length > 0) {
      await run(db, "consumers", [
        batch.consumers.map((c) => c.consumer),
        batch.consumers.map((c) => c.accountId),
        batch.consumers.map((c) => c.seq),
      ]);
    }
    if (batch.accounts.length > 0) {
      await run(db, "accounts", arrays(batch.accounts, ACCOUNT_COLUMNS));
      // Other processes learn which accounts moved, to what version, when this commits.
      let piece = "";
      for (const account of batch.accounts) {
        piece += `${piece === "" ? "" : ","}${account.id}:${account.strategyId}:${account.expectedVersion + 1}:${account.eventSeq}`;
        if (piece.length > NOTIFY_PIECE) {
          await run(db, "notify", [ORDERS_CHANNEL, `|${origin}|${piece}`]);
          piece = "";
        }
      }
      if (piece !== "") await run(db, "notify", [ORDERS_CHANNEL, `|${origin}|${piece}`]);
    }
    return { ok: true };
  }

  // One thing at a time on the connection: a reservation must not land inside a batch's transaction.
  let tail: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const next = tail.then(work, work);
    tail = next.catch(() => undefined);
    return next;
  };

  return {
    commit: (batch) =>
      serially(async () => {
        const db = await connection();
        await db.query("begin");
        try {
          const outcome = await write(db, batch);
          await db.query(outcome.ok ? "commit" : "rollback");
          return outcome;
        } catch (error) {
          await db.query("rollback").catch(() => undefined);
          throw error;
        }
      }),
    async reserveIds(table: AllocatedTable, count: number): Promise<IdRanges> {
      const result = await serially(async () => run(await connection(), "reserve", [table, count]));
      const ids = result.rows.map((row: { id: number }) => Number(row.id)).sort((a, b) => a - b);
      const ranges: [number, number][] = [];
      for (const id of ids) {
        const last = ranges.at(-1);
        if (last && last[1] + 1 === id) last[1] = id;
        else ranges.push([id, id]);
      }
      return ranges;
    },
    async close() {
      await connecting?.catch(() => undefined);
      await client?.end();
      client = null;
    },
  };
}
