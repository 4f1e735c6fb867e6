import { type Selectable, sql } from "kysely";
import { addCommissions, planCommissionsOf, planCommissionsText } from "../core/commissions.js";
import { add, type Decimal, decimal, formatDecimal, ZERO } from "../core/decimal.js";
import type { BookOrder } from "../core/orders/book.js";
import type { FillRecord, HeldPosition, TradingState } from "../core/orders/execution.js";
import type { OrderState } from "../core/orders/order.js";
import { ACTIVE, type OrderStatus, TERMINAL } from "../core/orders/status.js";
import { isExitSignal, type OrderTerms, type SignalType } from "../core/orders/terms.js";
import { fromServiceSymbol, type Instrument, type SymbolType } from "../core/symbols/instrument.js";
import type { TradeRecord } from "../core/trades.js";
import type { OrdersTable, StrategiesTable, TradesTable } from "./schema.js";
import type { Backend } from "./storage.js";
import type { Tx } from "./transaction.js";

/**
 * Loading and saving a strategy's trading state (src/core/orders/execution.ts)
 * inside one transaction that holds the strategy's lock.
 */
export type StrategyRow = Pick<
  StrategiesTable,
  "name" | "owner_person_id" | "white_label_site_id" | "cash" | "starting_capital" | "is_private"
> & {
  readonly id: number;
  readonly trading_version: number;
  readonly commissions_paid: string;
  readonly plan_commissions: string;
  readonly desired_positions: string | null;
};

export type OrderRow = Omit<
  OrdersTable,
  "id" | "filled_quantity" | "filled_notional" | "do_not_create_oca" | "do_not_sync_to_open"
> & {
  readonly id: number;
  readonly filled_quantity: string;
  readonly filled_notional: string;
  readonly do_not_create_oca: number;
  readonly do_not_sync_to_open: number;
};

export const LIVE_STATUSES: readonly OrderStatus[] = [...ACTIVE];

/** The strategy column that says it has traded each kind of instrument (SecurityTypesEnabled). */
export const TRADES_COLUMNS = {
  stock: "trades_stocks",
  option: "trades_options",
  future: "trades_futures",
  forex: "trades_forex",
} as const satisfies Record<SymbolType, string>;
type TradesColumn = (typeof TRADES_COLUMNS)[SymbolType];

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
  "cash",
  "starting_capital",
  "is_private",
  "trading_version",
  "commissions_paid",
  "plan_commissions",
  "desired_positions",
] as const;

/**
 * Reads the strategy and takes its lock for the rest of the transaction: on
 * PostgreSQL a row lock (two processes on one database queue here); SQLite
 * transactions hold the database's write lock from their start.
 */
export async function lockStrategy(tx: Tx, backend: Backend, strategyId: number): Promise<StrategyRow | undefined> {
  const query = tx.selectFrom("strategies").select(STRATEGY_COLUMNS).where("id", "=", strategyId);
  return backend === "postgres" ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst();
}

export const termsOfRow = (row: OrderRow): OrderTerms => ({
  instrument: instrumentOf(row.symbol, row.symbol_type),
  type: row.order_type,
  side: row.side,
  openClose: row.open_close,
  tif: row.tif,
  quantity: decimal(row.quantity),
  limit: row.limit_price === null ? null : decimal(row.limit_price),
  stop: row.stop_price === null ? null : decimal(row.stop_price),
  profitTarget: row.profit_target === null ? null : decimal(row.profit_target),
  stopLoss: row.stop_loss === null ? null : decimal(row.stop_loss),
  signalType: row.signal_type as SignalType,
});

export const stateOfRow = (row: OrderRow): OrderState => ({
  status: row.status as OrderStatus,
  quantity: decimal(row.quantity),
  filledQuantity: decimal(row.filled_quantity),
  filledNotional: decimal(row.filled_notional),
  appliedEvents: [],
});

const bookOrderOf = (row: OrderRow): BookOrder => ({
  id: row.id,
  state: stateOfRow(row),
  parentId: row.parent_id,
  ocaGroup: row.oca_group_id,
  parkedUntilMs: row.parked_until,
  exit: isExitSignal(row.signal_type),
});

type TradeRow = Selectable<TradesTable>;

export function tradeOfRow(row: TradeRow): TradeRecord {
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

/** The columns of a trade that change as it goes. */
function tradeValues(trade: TradeRecord) {
  const mae = trade.excursion;
  return {
    closed_at: trade.closedAtMs,
    opened_quantity: formatDecimal(trade.openedQuantity),
    closed_quantity: formatDecimal(trade.closedQuantity),
    open_notional: formatDecimal(trade.openNotional),
    close_notional: formatDecimal(trade.closeNotional),
    realized: formatDecimal(trade.realized),
    commission: formatDecimal(trade.commission),
    evaluated_at: trade.evaluatedAtMs,
    mae_amount: text(mae?.amount ?? null),
    mae_worst_price: text(mae?.worstPrice ?? null),
    mae_worst_price_at: mae?.worstPriceAtMs ?? null,
    mae_equity: text(mae?.equity ?? null),
    mae_entry_price: text(mae?.entryPrice ?? null),
    mae_open_quantity: text(mae?.openQuantity ?? null),
    plan_commissions: planCommissionsText(trade.planCommissions),
  };
}

/** The live orders of the strategy and the parents they wait on. */
export async function liveOrderRows(tx: Tx, strategyId: number): Promise<OrderRow[]> {
  const live = await tx
    .selectFrom("orders")
    .selectAll()
    .where("strategy_id", "=", strategyId)
    .where("status", "in", LIVE_STATUSES)
    .orderBy("id")
    .execute();
  const loaded = new Set(live.map((row) => row.id));
  const parents = [...new Set(live.map((row) => row.parent_id).filter((id): id is number => id !== null))].filter(
    (id) => !loaded.has(id),
  );
  if (parents.length === 0) return live;
  const parentRows = await tx.selectFrom("orders").selectAll().where("id", "in", parents).execute();
  return [...live, ...parentRows];
}

export async function loadTradingState(tx: Tx, strategy: StrategyRow): Promise<TradingState> {
  const rows = await liveOrderRows(tx, strategy.id);
  const positionRows = await tx.selectFrom("positions").selectAll().where("strategy_id", "=", strategy.id).execute();
  const positions = new Map<string, HeldPosition>();
  for (const row of positionRows) {
    positions.set(row.symbol, {
      instrument: instrumentOf(row.symbol, row.symbol_type),
      position: { quantity: decimal(row.quantity), cost: decimal(row.cost) },
      openedAtMs: row.opened_at,
      tradeKey: row.trade_id as number,
    });
  }
  const tradeRows = await tx
    .selectFrom("trades")
    .selectAll()
    .where("strategy_id", "=", strategy.id)
    .where("closed_at", "is", null)
    .execute();
  return {
    trades: new Map(tradeRows.map((row) => [row.id, tradeOfRow(row)])),
    book: new Map(rows.map((row) => [row.id, bookOrderOf(row)])),
    terms: new Map(rows.map((row) => [row.id, termsOfRow(row)])),
    expiresAtMs: new Map(
      rows.filter((row) => row.expires_at !== null).map((row) => [row.id, row.expires_at as number]),
    ),
    notes: new Map(),
    positions,
    cash: decimal(strategy.cash),
  };
}

export interface NewOrderRow {
  readonly terms: OrderTerms;
  readonly parentId: number | null;
  readonly ocaGroupId: number | null;
  readonly cancelReplaceId: number | null;
  readonly parkedUntilMs: number | null;
  readonly doNotCreateOca: boolean;
  readonly doNotSyncToOpen: boolean;
  /** The legacy API's caller-chosen signalid. */
  readonly localSignalId?: string | null;
}

const text = (value: Decimal | null) => (value === null ? null : formatDecimal(value));

/** Stores a new order (held, PendingNew) and answers its id, the signal id. */
export async function insertOrder(tx: Tx, strategyId: number, order: NewOrderRow, nowMs: number): Promise<number> {
  const { terms } = order;
  const row = await tx
    .insertInto("orders")
    .values({
      strategy_id: strategyId,
      symbol: terms.instrument.fullSymbol,
      symbol_type: terms.instrument.symbolType,
      order_type: terms.type,
      side: terms.side,
      open_close: terms.openClose,
      tif: terms.tif,
      quantity: formatDecimal(terms.quantity),
      limit_price: text(terms.limit),
      stop_price: text(terms.stop),
      profit_target: text(terms.profitTarget),
      stop_loss: text(terms.stopLoss),
      do_not_create_oca: order.doNotCreateOca ? 1 : 0,
      do_not_sync_to_open: order.doNotSyncToOpen ? 1 : 0,
      parent_id: order.parentId,
      oca_group_id: order.ocaGroupId,
      cancel_replace_id: order.cancelReplaceId,
      parked_until: order.parkedUntilMs,
      signal_type: terms.signalType,
      local_signal_id: order.localSignalId ?? null,
      status: "PendingNew",
      posted_at: nowMs,
      updated_at: nowMs,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function newOcaGroup(tx: Tx, strategyId: number, localId: string | null = null): Promise<number> {
  const row = await tx
    .insertInto("oca_groups")
    .values({ strategy_id: strategyId, local_id: localId })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Writes what changed between two states of the strategy: order statuses,
 * fills, positions and cash, and counts the strategy's trading version up.
 * Answers the new version.
 */
export async function saveTradingState(
  tx: Tx,
  strategy: StrategyRow,
  before: TradingState,
  after: TradingState,
  fills: readonly FillRecord[],
  nowMs: number,
): Promise<number> {
  for (const order of after.book.values()) {
    const old = before.book.get(order.id);
    const expiresAt = after.expiresAtMs.get(order.id) ?? null;
    const note = after.notes.get(order.id);
    const { state } = order;
    const changed =
      !old ||
      old.state.status !== state.status ||
      old.state.filledQuantity !== state.filledQuantity ||
      old.parentId !== order.parentId ||
      (before.expiresAtMs.get(order.id) ?? null) !== expiresAt ||
      note !== undefined;
    if (!changed) continue;
    const ended = TERMINAL.has(state.status) && (!old || !TERMINAL.has(old.state.status));
    await tx
      .updateTable("orders")
      .set({
        status: state.status,
        filled_quantity: formatDecimal(state.filledQuantity),
        filled_notional: formatDecimal(state.filledNotional),
        parent_id: order.parentId,
        expires_at: expiresAt,
        updated_at: nowMs,
        ...(note !== undefined ? { info: note } : {}),
        ...(ended ? { closed_at: nowMs } : {}),
      })
      .where("id", "=", order.id)
      .execute();
  }
  const tradeIds = new Map<number, number>();
  for (const [key, trade] of after.trades) {
    if (before.trades.get(key) === trade) continue;
    const values = tradeValues(trade);
    if (key > 0) {
      await tx.updateTable("trades").set(values).where("id", "=", key).execute();
      continue;
    }
    const row = await tx
      .insertInto("trades")
      .values({
        ...values,
        strategy_id: strategy.id,
        symbol: trade.instrument.fullSymbol,
        symbol_type: trade.instrument.symbolType,
        side: trade.side,
        opened_at: trade.openedAtMs,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    tradeIds.set(key, row.id);
  }
  const tradeId = (key: number) => tradeIds.get(key) ?? key;
  if (fills.length > 0) {
    await tx
      .insertInto("fills")
      .values(
        fills.map((fill) => ({
          trade_id: tradeId(fill.tradeKey),
          order_id: fill.orderId,
          strategy_id: strategy.id,
          symbol: fill.instrument.fullSymbol,
          symbol_type: fill.instrument.symbolType,
          side: fill.side,
          quantity: formatDecimal(fill.quantity),
          price: formatDecimal(fill.price),
          commission: formatDecimal(fill.commission),
          realized: formatDecimal(fill.realized),
          cash: formatDecimal(fill.cash),
          usd_rate: formatDecimal(fill.usdRate),
          position_after: formatDecimal(fill.positionAfter),
          filled_at: fill.atMs,
        })),
      )
      .execute();
  }
  for (const symbol of before.positions.keys()) {
    if (!after.positions.has(symbol)) {
      await tx.deleteFrom("positions").where("strategy_id", "=", strategy.id).where("symbol", "=", symbol).execute();
    }
  }
  for (const [symbol, held] of after.positions) {
    if (before.positions.get(symbol) === held) continue;
    const values = {
      quantity: formatDecimal(held.position.quantity),
      cost: formatDecimal(held.position.cost),
      opened_at: held.openedAtMs,
      trade_id: tradeId(held.tradeKey),
    };
    await tx
      .insertInto("positions")
      .values({ strategy_id: strategy.id, symbol, symbol_type: held.instrument.symbolType, ...values })
      .onConflict((c) => c.columns(["strategy_id", "symbol"]).doUpdateSet(values))
      .execute();
  }
  const version = strategy.trading_version + 1;
  const traded: Partial<Record<TradesColumn, number>> = {};
  for (const [id, terms] of after.terms) {
    if (!before.terms.has(id)) traded[TRADES_COLUMNS[terms.instrument.symbolType]] = 1;
  }
  const commissions = fills.reduce((sum, fill) => add(sum, fill.commission), ZERO);
  const planTotals = fills.reduce(
    (totals, fill) => addCommissions(totals, fill.planCommissions),
    planCommissionsOf(strategy.plan_commissions),
  );
  await tx
    .updateTable("strategies")
    .set({
      ...(after.cash !== before.cash ? { cash: formatDecimal(after.cash) } : {}),
      ...(fills.length > 0
        ? {
            commissions_paid: formatDecimal(add(decimal(strategy.commissions_paid), commissions)),
            plan_commissions: planCommissionsText(planTotals),
          }
        : {}),
      ...traded,
      trading_version: version,
    })
    .where("id", "=", strategy.id)
    .execute();
  return version;
}

/** The channel on which PostgreSQL tells every process that a strategy's orders changed. */
export const ORDERS_CHANNEL = "strategy_hub_orders";

/** On PostgreSQL, tells the other processes (at commit) that the strategy is at a new trading version. */
export async function notifyOrdersChanged(
  tx: Tx,
  backend: Backend,
  strategyId: number,
  version: number,
): Promise<void> {
  if (backend !== "postgres") return;
  // Schemas sharing one database (parallel test runs, several deployments) share channels too.
  await sql`select pg_notify(${ORDERS_CHANNEL}, current_schema() || ${`:${strategyId}:${version}`})`.execute(tx);
}
