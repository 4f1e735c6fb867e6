import { type Selectable, sql } from "kysely";
import { planCommissionsOf, planCommissionsText } from "../core/commissions.js";
import { type Decimal, decimal, formatDecimal } from "../core/decimal.js";
import type { BookOrder } from "../core/orders/book.js";
import type { OrderState } from "../core/orders/order.js";
import { ACTIVE, type OrderStatus } from "../core/orders/status.js";
import { isExitSignal, type OrderTerms, SIGNAL_TYPES, type SignalType } from "../core/orders/terms.js";
import { fromServiceSymbol, type Instrument, type SymbolType } from "../core/symbols/instrument.js";
import type { TradeRecord } from "../core/trades.js";
import type { StoredOrder, StoredPosition, StoredTrade } from "./journal/batch.js";
import type { AccountsTable, StrategiesTable } from "./schema.js";
import type { Tx } from "./transaction.js";

/**
 * A trading account as stored, and the mapping between its rows and the
 * trading state of src/core/orders/execution.ts.
 */
export type StrategyRow = Pick<
  StrategiesTable,
  "name" | "owner_person_id" | "white_label_site_id" | "is_private" | "starting_capital"
> & {
  readonly id: number;
  readonly desired_positions: string | null;
};

/** An order row as stored (the legacy reads know it by this name). */
export type OrderRow = StoredOrder;

/**
 * Live orders, as the partial index of them says it (0030_live_orders.ts): in
 * literals, as a bound list would not show either database the index fits.
 */
const isLiveOrder = sql<boolean>`status in (${sql.join([...ACTIVE].map((status) => sql.lit(status)))})`;

/**
 * Every live order, as a process starts. Not asked in id order: SQLite would
 * read every order ever placed to skip the sort.
 */
export const everyLiveOrder = (db: Tx) => db.selectFrom("orders").selectAll().where(isLiveOrder);

/** The accounts' live orders, in id order. */
export const liveOrdersOf = (db: Tx, accountIds: readonly number[]) =>
  db
    .selectFrom("orders")
    .selectAll()
    .where("account_id", "in", [...accountIds])
    .where(isLiveOrder)
    .orderBy("id");
const EXIT_SIGNAL_TYPES = [SIGNAL_TYPES.profitTarget, SIGNAL_TYPES.stopLoss];

/** The strategy column that says it has traded each kind of instrument (SecurityTypesEnabled). */
export const TRADES_COLUMNS = {
  stock: "trades_stocks",
  option: "trades_options",
  future: "trades_futures",
  forex: "trades_forex",
} as const satisfies Record<SymbolType, string>;
export type TradesColumn = (typeof TRADES_COLUMNS)[SymbolType];

const instruments = new Map<string, Instrument>();

/** The instrument of a stored symbol (rows hold only canonical symbols, so this never fails). */
export function instrumentOf(symbol: string, symbolType: string): Instrument {
  const key = `${symbolType}:${symbol}`;
  let instrument = instruments.get(key);
  if (!instrument) {
    instrument = fromServiceSymbol(symbol, symbolType) ?? undefined;
    if (!instrument) throw new Error(`stored symbol ${symbol} (${symbolType}) is not in the symbol master`);
    instruments.set(key, instrument);
  }
  return instrument;
}

/** The columns of a StrategyRow. */
export const STRATEGY_COLUMNS = [
  "id",
  "name",
  "owner_person_id",
  "white_label_site_id",
  "is_private",
  "starting_capital",
  "desired_positions",
] as const;

const decimalOrNull = (text: string | null) => (text === null ? null : decimal(text));
export const textOrNull = (value: Decimal | null) => (value === null ? null : formatDecimal(value));

export const termsOfRow = (row: StoredOrder): OrderTerms => ({
  instrument: instrumentOf(row.symbol, row.symbol_type),
  type: row.order_type,
  side: row.side,
  openClose: row.open_close,
  tif: row.tif,
  quantity: decimal(row.quantity),
  limit: decimalOrNull(row.limit_price),
  stop: decimalOrNull(row.stop_price),
  profitTarget: decimalOrNull(row.profit_target),
  stopLoss: decimalOrNull(row.stop_loss),
  signalType: row.signal_type as SignalType,
});

export const stateOfRow = (row: StoredOrder): OrderState => ({
  status: row.status as OrderStatus,
  quantity: decimal(row.quantity),
  filledQuantity: decimal(row.filled_quantity),
  filledNotional: decimal(row.filled_notional),
  appliedEvents: [],
});

export const bookOrderOf = (row: StoredOrder): BookOrder => ({
  id: row.id,
  state: stateOfRow(row),
  parentId: row.parent_id,
  ocaGroup: row.oca_group_id,
  parkedUntilMs: row.parked_until,
  exit: isExitSignal(row.signal_type),
});

export function tradeOfRow(row: StoredTrade): TradeRecord {
  const excursion =
    row.mae_amount === null
      ? null
      : {
          amount: decimal(row.mae_amount),
          worstPrice: decimal(row.mae_worst_price as string),
          worstPriceAtMs: row.mae_worst_price_at as number,
          equity: decimal(row.mae_equity as string),
          entryPrice: decimal(row.mae_entry_price as string),
          openQuantity: decimal(row.mae_open_quantity as string),
        };
  return {
    key: row.id,
    instrument: instrumentOf(row.symbol, row.symbol_type),
    side: row.side,
    openedAtMs: row.opened_at,
    closedAtMs: row.closed_at,
    openedQuantity: decimal(row.opened_quantity),
    closedQuantity: decimal(row.closed_quantity),
    openNotional: decimal(row.open_notional),
    closeNotional: decimal(row.close_notional),
    realized: decimal(row.realized),
    commission: decimal(row.commission),
    excursion,
    evaluatedAtMs: row.evaluated_at,
    planCommissions: planCommissionsOf(row.plan_commissions),
  };
}

/** A trade as stored. */
export function storedTradeOf(trade: TradeRecord, strategyId: number, accountId: number): StoredTrade {
  const mae = trade.excursion;
  return {
    id: trade.key,
    strategy_id: strategyId,
    account_id: accountId,
    symbol: trade.instrument.fullSymbol,
    symbol_type: trade.instrument.symbolType,
    side: trade.side,
    opened_at: trade.openedAtMs,
    closed_at: trade.closedAtMs,
    opened_quantity: formatDecimal(trade.openedQuantity),
    closed_quantity: formatDecimal(trade.closedQuantity),
    open_notional: formatDecimal(trade.openNotional),
    close_notional: formatDecimal(trade.closeNotional),
    realized: formatDecimal(trade.realized),
    commission: formatDecimal(trade.commission),
    evaluated_at: trade.evaluatedAtMs,
    mae_amount: textOrNull(mae?.amount ?? null),
    mae_worst_price: textOrNull(mae?.worstPrice ?? null),
    mae_worst_price_at: mae?.worstPriceAtMs ?? null,
    mae_equity: textOrNull(mae?.equity ?? null),
    mae_entry_price: textOrNull(mae?.entryPrice ?? null),
    mae_open_quantity: textOrNull(mae?.openQuantity ?? null),
    plan_commissions: planCommissionsText(trade.planCommissions),
  };
}

/** Everything the trading frame loads of an account: its row, its strategy, and what is live in it. */
export interface AccountRows {
  readonly account: Selectable<AccountsTable>;
  readonly strategy: StrategyRow &
    Pick<Selectable<StrategiesTable>, "trades_stocks" | "trades_options" | "trades_futures" | "trades_forex">;
  /** The sites of the strategy's owner: whose administrators may trade it. */
  readonly owner: { readonly whiteLabelSiteId: number | null; readonly geoSiteId: number | null };
  /** Live orders, and the parents held orders wait on. */
  readonly orders: readonly StoredOrder[];
  readonly positions: readonly StoredPosition[];
  readonly openTrades: readonly StoredTrade[];
}

/**
 * An order row as read, made anew with its columns written out: SQLite's
 * rows come with their properties in a dictionary, and every copy of one
 * made with a spread (each change of the order in the trading frame) then
 * costs microseconds instead of tens of nanoseconds.
 */
export const orderRowOf = (row: StoredOrder): StoredOrder => ({
  id: row.id,
  strategy_id: row.strategy_id,
  account_id: row.account_id,
  symbol: row.symbol,
  symbol_type: row.symbol_type,
  order_type: row.order_type,
  side: row.side,
  open_close: row.open_close,
  tif: row.tif,
  quantity: row.quantity,
  limit_price: row.limit_price,
  stop_price: row.stop_price,
  profit_target: row.profit_target,
  stop_loss: row.stop_loss,
  do_not_create_oca: row.do_not_create_oca,
  do_not_sync_to_open: row.do_not_sync_to_open,
  parent_id: row.parent_id,
  oca_group_id: row.oca_group_id,
  cancel_replace_id: row.cancel_replace_id,
  parked_until: row.parked_until,
  expires_at: row.expires_at,
  signal_type: row.signal_type,
  status: row.status,
  filled_quantity: row.filled_quantity,
  filled_notional: row.filled_notional,
  info: row.info,
  posted_at: row.posted_at,
  updated_at: row.updated_at,
  closed_at: row.closed_at,
  local_signal_id: row.local_signal_id,
  sent_symbol: row.sent_symbol,
});

/** A large `in` list is sent in pieces of this many. */
const IN_LIST = 500;

async function inPieces<T>(ids: readonly number[], read: (piece: number[]) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (let i = 0; i < ids.length; i += IN_LIST) rows.push(...(await read(ids.slice(i, i + IN_LIST))));
  return rows;
}

/**
 * Model accounts with their live state, read in a few statements whatever
 * their number: those of the strategies named, or (`live`) every account
 * holding a live order or a position, which the trading frame loads at start.
 */
export async function readModelAccounts(
  db: Tx,
  which: { readonly strategyIds: readonly number[] } | { readonly live: true },
): Promise<AccountRows[]> {
  const accountQuery = () =>
    db
      .selectFrom("accounts as a")
      .innerJoin("strategies as s", "s.id", "a.strategy_id")
      .innerJoin("persons as p", "p.id", "s.owner_person_id")
      .leftJoin("sites as ws", "ws.id", "p.white_label_site_id")
      .selectAll("a")
      .select([
        "s.name",
        "s.owner_person_id",
        "s.white_label_site_id",
        "s.is_private",
        "s.starting_capital",
        "s.desired_positions",
        "s.trades_stocks",
        "s.trades_options",
        "s.trades_futures",
        "s.trades_forex",
        "p.white_label_site_id as owner_site_id",
        sql<number | null>`coalesce(p.geo_site_id, ws.geo_site_id)`.as("owner_geo_site_id"),
      ])
      .where("a.kind", "=", "model");
  let accounts: Awaited<ReturnType<ReturnType<typeof accountQuery>["execute"]>>;
  let live: StoredOrder[];
  let positions: StoredPosition[];
  let openTrades: StoredTrade[];
  if ("live" in which) {
    [live, positions, openTrades] = await Promise.all([
      everyLiveOrder(db)
        .execute()
        .then((rows) => rows.sort((a, b) => a.id - b.id)),
      db.selectFrom("positions").selectAll().execute(),
      db.selectFrom("trades").selectAll().where("closed_at", "is", null).execute(),
    ]);
    const ids = [...new Set([...live, ...positions].map((row) => row.account_id))];
    accounts = await inPieces(ids, (piece) => accountQuery().where("a.id", "in", piece).execute());
  } else {
    accounts = await inPieces([...which.strategyIds], (piece) =>
      accountQuery().where("a.strategy_id", "in", piece).execute(),
    );
    const ids = accounts.map((account) => account.id);
    [live, positions, openTrades] = await Promise.all([
      inPieces(ids, (piece) => liveOrdersOf(db, piece).execute()),
      inPieces(ids, (piece) => db.selectFrom("positions").selectAll().where("account_id", "in", piece).execute()),
      inPieces(ids, (piece) =>
        db.selectFrom("trades").selectAll().where("account_id", "in", piece).where("closed_at", "is", null).execute(),
      ),
    ]);
  }
  const orders = [...live, ...(await relatedOrders(db, live))].map(orderRowOf);
  const byAccount = <T extends { readonly account_id: number }>(rows: readonly T[]) => {
    const grouped = new Map<number, T[]>();
    for (const row of rows) {
      const group = grouped.get(row.account_id);
      if (group) group.push(row);
      else grouped.set(row.account_id, [row]);
    }
    return grouped;
  };
  const [ordersOf, positionsOf, tradesOf] = [byAccount(orders), byAccount(positions), byAccount(openTrades)];
  return accounts.map((found) => ({
    account: {
      id: found.id,
      kind: found.kind,
      strategy_id: found.strategy_id,
      cash: found.cash,
      starting_cash: found.starting_cash,
      version: found.version,
      event_seq: found.event_seq,
      commissions_paid: found.commissions_paid,
      plan_commissions: found.plan_commissions,
      commission_plan: found.commission_plan,
      created_at: found.created_at,
    },
    strategy: {
      id: found.strategy_id as number,
      name: found.name,
      owner_person_id: found.owner_person_id,
      white_label_site_id: found.white_label_site_id,
      is_private: found.is_private,
      starting_capital: found.starting_capital,
      desired_positions: found.desired_positions,
      trades_stocks: found.trades_stocks,
      trades_options: found.trades_options,
      trades_futures: found.trades_futures,
      trades_forex: found.trades_forex,
    },
    owner: { whiteLabelSiteId: found.owner_site_id, geoSiteId: found.owner_geo_site_id },
    orders: (ordersOf.get(found.id) ?? []).sort((a, b) => a.id - b.id),
    positions: positionsOf.get(found.id) ?? [],
    openTrades: tradesOf.get(found.id) ?? [],
  }));
}

/**
 * The orders live ones relate to: the parents they wait on, and the ended
 * exits of those parents (what an exit closed counts against its sibling).
 */
async function relatedOrders(db: Tx, live: readonly StoredOrder[]): Promise<StoredOrder[]> {
  const loaded = new Set(live.map((row) => row.id));
  const parents = [...new Set(live.map((row) => row.parent_id).filter((id): id is number => id !== null))];
  if (parents.length === 0) return [];
  const [parentRows, exitRows] = await Promise.all([
    inPieces(parents, (piece) => db.selectFrom("orders").selectAll().where("id", "in", piece).execute()),
    inPieces(parents, (piece) =>
      db
        .selectFrom("orders")
        .selectAll()
        .where("parent_id", "in", piece)
        .where("signal_type", "in", EXIT_SIGNAL_TYPES)
        .execute(),
    ),
  ]);
  return [
    ...new Map([...parentRows, ...exitRows].filter((row) => !loaded.has(row.id)).map((row) => [row.id, row])).values(),
  ];
}

/** The accounts' stored versions: what another process may have moved since they were read. */
export async function accountVersions(db: Tx, accountIds: readonly number[]): Promise<Map<number, number>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("accounts")
    .select(["id", "version"])
    .where("id", "in", [...accountIds])
    .execute();
  return new Map(rows.map((row) => [row.id, row.version]));
}

/** Orders of the account by id (ended ones an operation names: a filled parent, a signal to cancel). */
export async function orderRowsOf(db: Tx, accountId: number, ids: readonly number[]): Promise<StoredOrder[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("orders")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "in", [...ids])
    .execute();
  return rows.map(orderRowOf);
}

/** Whether a caller-chosen id is used in the strategy already: as a signal's id or local id, or an OCA group's. */
export async function localIdInUse(db: Tx, strategyId: number, id: string): Promise<boolean> {
  const signal = await db
    .selectFrom("orders")
    .select("id")
    .where("strategy_id", "=", strategyId)
    .where((eb) =>
      eb.or([eb("local_signal_id", "=", id), ...(/^\d{1,15}$/.test(id) ? [eb("id", "=", Number(id))] : [])]),
    )
    .executeTakeFirst();
  if (signal) return true;
  const group = await db
    .selectFrom("oca_groups")
    .select("id")
    .where("strategy_id", "=", strategyId)
    .where("local_id", "=", id)
    .executeTakeFirst();
  return group !== undefined;
}
