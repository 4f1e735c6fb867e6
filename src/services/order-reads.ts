import { refuse } from "../core/errors.js";
import type { OrderType } from "../core/fills.js";
import type { OrderStatus } from "../core/orders/status.js";
import { type SecurityType, SYMBOL_TYPES } from "../core/symbols/instrument.js";
import type { CommittedAccount } from "../engine/frame/account.js";
import type { StoredPosition } from "../store/journal/batch.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import { type OrderRow, STRATEGY_COLUMNS } from "../store/trading-state.js";
import type { Tx } from "../store/transaction.js";
import { mayReadOrders, mayReadOrdersOf, mayTradeStrategy, noStrategy, v4Reader } from "./order-access.js";
import { dbOf, type RequestContext } from "./runtime.js";
import type { TradingContext } from "./trading.js";

/**
 * Reading a strategy's orders and positions, by those who may read them
 * (./order-access.ts: who may trade the strategy, platform keys reaching it,
 * its subscribers); a strategy that does not exist is 404, and so is a
 * private one the caller may not read (its id reveals nothing); a public one
 * whose orders the caller may not read is 403.
 */
export type OrderView = OrderRow & { readonly strategy_name: string };
/** An open position as committed, with its strategy's name. */
export interface OpenPosition {
  readonly position: StoredPosition;
  readonly strategyName: string;
}

/** The refusal of a strategy whose orders the caller may not read: a private one is not there for it. */
const unreadable = (id: number, field: string, isPrivate: boolean) =>
  isPrivate
    ? noStrategy(id, field)
    : refuse("Forbidden", { field, message: `Strategy ${id}'s orders and positions are not visible to this key` });

async function readableStrategies(tx: Tx, ctx: RequestContext, ids: readonly number[], field: string) {
  const unique = [...new Set(ids)];
  const rows = await tx.selectFrom("strategies").select(STRATEGY_COLUMNS).where("id", "in", unique).execute();
  for (const id of unique) {
    const strategy = rows.find((row) => row.id === id);
    if (!strategy) throw noStrategy(id, field);
    if (!(await mayReadOrders(ctx, strategy, v4Reader(ctx)))) throw unreadable(id, field, strategy.is_private === 1);
  }
  return rows;
}

/** Orders with their strategy's name, as the order records show them. */
export function orderViews(tx: Tx) {
  return tx
    .selectFrom("orders as o")
    .innerJoin("strategies as st", "st.id", "o.strategy_id")
    .selectAll("o")
    .select("st.name as strategy_name");
}

export interface ActiveOrdersQuery {
  readonly strategyIds: readonly number[];
  readonly securityType?: SecurityType | undefined;
  readonly orderType?: OrderType | undefined;
}

/**
 * The strategies' model accounts as committed, from the trading frame's
 * memory (read again when another process wrote them), once the caller is
 * found to may read each: the first missing or hidden one is refused.
 */
async function readableAccounts(
  ctx: TradingContext,
  ids: readonly number[],
  field: string,
): Promise<CommittedAccount[]> {
  const unique = [...new Set(ids)];
  const accounts = await ctx.frame.committedAccounts(unique);
  const readable: CommittedAccount[] = [];
  for (const id of unique) {
    const account = accounts.get(id);
    if (!account) throw noStrategy(id, field);
    // Those who may trade it read it without a look at storage; the others by the whole rule.
    if (!mayTradeStrategy(ctx.caller, account.strategy) && !(await mayReadOrdersOf(ctx, id, v4Reader(ctx)))) {
      throw unreadable(id, field, account.strategy.isPrivate);
    }
    readable.push(account);
  }
  return readable;
}

/** An active order as committed, with its strategy's name (the row itself: it is replaced when the order changes). */
export interface ActiveOrder {
  readonly order: OrderRow;
  readonly strategyName: string;
}

/** GetStrategyActiveOrders: working and held orders, oldest first, as committed. */
export async function activeOrders(ctx: TradingContext, query: ActiveOrdersQuery): Promise<ActiveOrder[]> {
  const kind = query.securityType === undefined ? undefined : SYMBOL_TYPES[query.securityType];
  const views: ActiveOrder[] = [];
  for (const account of await readableAccounts(ctx, query.strategyIds, "StrategyIds")) {
    for (const order of account.orders.values()) {
      if (kind !== undefined && order.symbol_type !== kind) continue;
      if (query.orderType !== undefined && order.order_type !== query.orderType) continue;
      views.push({ order, strategyName: account.strategy.name });
    }
  }
  return views.sort((a, b) => a.order.id - b.order.id);
}

export interface HistoricalOrdersQuery {
  readonly strategyId?: number | undefined;
  readonly signalId?: number | undefined;
  readonly status?: OrderStatus | undefined;
  readonly startMs?: number | undefined;
  readonly endMs?: number | undefined;
}

/** Statuses of orders that are history: ended one way or another. */
const HISTORICAL: readonly OrderStatus[] = ["Filled", "Canceled", "Expired", "Replaced", "Rejected"];

/**
 * GetStrategyHistoricalOrders: ended orders of a strategy (or the one signal
 * named, in whatever state), by PostedDate within [StartDate, EndDate).
 */
export async function historicalOrders(
  ctx: RequestContext,
  query: HistoricalOrdersQuery,
  page: PageRequest,
): Promise<Page<OrderView>> {
  const tx = dbOf(ctx);
  if (query.strategyId === undefined && query.signalId === undefined) {
    throw refuse("MissingValue", { field: "StrategyId", message: "StrategyId or SignalId is required" });
  }
  let strategyId = query.strategyId;
  if (query.signalId !== undefined) {
    const signal = await tx
      .selectFrom("orders")
      .select("strategy_id")
      .where("id", "=", query.signalId)
      .executeTakeFirst();
    // A signal is an order: one of a strategy whose orders the caller may not read is not there for it.
    if (
      !signal ||
      (strategyId !== undefined && signal.strategy_id !== strategyId) ||
      !(await mayReadOrdersOf(ctx, signal.strategy_id, v4Reader(ctx)))
    ) {
      throw refuse("NotFound", { field: "SignalId", message: `No signal ${query.signalId}` });
    }
    strategyId = signal.strategy_id;
  } else await readableStrategies(tx, ctx, [strategyId as number], "StrategyId");
  let q = orderViews(tx).where("o.strategy_id", "=", strategyId as number);
  if (query.signalId !== undefined) q = q.where("o.id", "=", query.signalId);
  else q = q.where("o.status", "in", [...HISTORICAL]);
  if (query.status) q = q.where("o.status", "=", query.status);
  if (query.startMs !== undefined) q = q.where("o.posted_at", ">=", query.startMs);
  if (query.endMs !== undefined) q = q.where("o.posted_at", "<", query.endMs);
  return (await fetchPage(q, ["o.id"], (row) => [row.id], page)) as Page<OrderView>;
}

export interface OpenPositionsQuery {
  readonly strategyIds: readonly number[];
  readonly securityType?: SecurityType | undefined;
}

/** GetStrategyOpenPositions: the open positions of the strategies, by strategy and symbol, as committed. */
export async function openPositions(ctx: TradingContext, query: OpenPositionsQuery): Promise<OpenPosition[]> {
  const kind = query.securityType === undefined ? undefined : SYMBOL_TYPES[query.securityType];
  const views: OpenPosition[] = [];
  for (const account of await readableAccounts(ctx, query.strategyIds, "StrategyIds")) {
    for (const position of account.positions.values()) {
      if (kind === undefined || position.symbol_type === kind)
        views.push({ position, strategyName: account.strategy.name });
    }
  }
  return views.sort(
    (a, b) =>
      a.position.strategy_id - b.position.strategy_id ||
      (a.position.symbol < b.position.symbol ? -1 : a.position.symbol > b.position.symbol ? 1 : 0),
  );
}
