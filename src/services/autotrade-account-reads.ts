import type { Selectable } from "kysely";
import { refuse } from "../core/errors.js";
import type { OrderStatus } from "../core/orders/status.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import type { AccountOrdersTable, AutotradePositionsTable } from "../store/schema.js";
import type { Tx } from "../store/transaction.js";
import { type AccountName, type NamedAccount, namedAccount } from "./autotrade-accounts.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * Reading an autotraded brokerage account's orders and positions
 * (GetAutotradeActiveOrders, GetAutotradeHistoricalOrders,
 * GetAutoTradeOpenPositions), as the desk has written them: the copies of
 * strategy orders, the desk's closes and automatic stop losses, and the
 * customer's manual orders, each with the strategy it trades for.
 */
export type AccountOrderView = Selectable<AccountOrdersTable> & {
  readonly strategy_name: string;
  readonly broker_id: number;
  /** The SignalType of the strategy order a copy copies; null for the others. */
  readonly source_signal_type: number | null;
};

export type AccountPositionView = Selectable<AutotradePositionsTable> & { readonly strategy_name: string };

/** Orders the broker holds or may still take: open, or waiting on a cancel or a replace. */
export const LIVE_ACCOUNT_ORDER_STATUSES: readonly OrderStatus[] = [
  "PendingNew",
  "Working",
  "PartiallyFilled",
  "PendingCancel",
  "PendingReplace",
];

/** Orders that have ended (the desk sets closed_at as they end). */
export const ENDED_ACCOUNT_ORDER_STATUSES: readonly OrderStatus[] = ["Filled", "Canceled", "Rejected", "Expired"];

export function accountOrderViews(db: Tx) {
  return db
    .selectFrom("account_orders as o")
    .innerJoin("strategies as st", "st.id", "o.strategy_id")
    .innerJoin("broker_accounts as b", "b.account_id", "o.account_id")
    .leftJoin("orders as so", "so.id", "o.source_order_id")
    .selectAll("o")
    .select(["st.name as strategy_name", "b.broker_id", "so.signal_type as source_signal_type"]);
}

/** A StrategyId filter names a strategy that exists (404 naming it otherwise). */
async function knownStrategy(db: Tx, strategyId: number | undefined): Promise<void> {
  if (strategyId === undefined) return;
  const found = await db.selectFrom("strategies").select("id").where("id", "=", strategyId).executeTakeFirst();
  if (!found) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${strategyId}` });
}

/** GetAutotradeActiveOrders: the account's live orders (of one strategy if named), oldest first. */
export async function activeAccountOrders(
  ctx: RequestContext,
  name: AccountName,
  strategyId: number | undefined,
): Promise<{ account: NamedAccount; orders: AccountOrderView[] }> {
  const db = dbOf(ctx);
  const account = await namedAccount(db, ctx.caller, name);
  await knownStrategy(db, strategyId);
  let query = accountOrderViews(db)
    .where("o.account_id", "=", account.accountId)
    .where("o.status", "in", LIVE_ACCOUNT_ORDER_STATUSES);
  if (strategyId !== undefined) query = query.where("o.strategy_id", "=", strategyId);
  return { account, orders: await query.orderBy("o.id").execute() };
}

export interface HistoricalAccountOrdersQuery {
  readonly strategyId?: number | undefined;
  readonly status?: OrderStatus | undefined;
  /** Inclusive, on PostedDate. */
  readonly startMs?: number | undefined;
  /** Exclusive, on PostedDate. */
  readonly endMs?: number | undefined;
}

/**
 * GetAutotradeHistoricalOrders: the account's ended orders (filled,
 * canceled, rejected, expired), of one strategy and one status if named,
 * posted within [StartDate, EndDate), a page of them by id.
 */
export async function historicalAccountOrders(
  ctx: RequestContext,
  name: AccountName,
  query: HistoricalAccountOrdersQuery,
  page: PageRequest,
): Promise<Page<AccountOrderView>> {
  if (query.startMs !== undefined && query.endMs !== undefined && query.endMs <= query.startMs) {
    throw refuse("InvalidValue", { field: "EndDate", message: "EndDate must be after StartDate" });
  }
  if (query.status !== undefined && !ENDED_ACCOUNT_ORDER_STATUSES.includes(query.status)) {
    throw refuse("InvalidValue", {
      field: "OrderStatus",
      message: "Historical orders have ended: 2 Filled, 4 Canceled, 8 Rejected or C Expired",
    });
  }
  const db = dbOf(ctx);
  const account = await namedAccount(db, ctx.caller, name);
  await knownStrategy(db, query.strategyId);
  // closed_at is set on every ended order: the partial index account_orders_ended_idx pages them by id.
  let q = accountOrderViews(db)
    .where("o.account_id", "=", account.accountId)
    .where("o.closed_at", "is not", null)
    .where("o.status", "in", query.status === undefined ? ENDED_ACCOUNT_ORDER_STATUSES : [query.status]);
  if (query.strategyId !== undefined) q = q.where("o.strategy_id", "=", query.strategyId);
  if (query.startMs !== undefined) q = q.where("o.created_at", ">=", query.startMs);
  if (query.endMs !== undefined) q = q.where("o.created_at", "<", query.endMs);
  return fetchPage(q, ["o.id"], (row) => [row.id], page);
}

/** GetAutoTradeOpenPositions: what each setup holds in the account (of one strategy if named), by strategy and symbol. */
export async function openAccountPositions(
  ctx: RequestContext,
  name: AccountName,
  strategyId: number | undefined,
): Promise<AccountPositionView[]> {
  const db = dbOf(ctx);
  const account = await namedAccount(db, ctx.caller, name);
  await knownStrategy(db, strategyId);
  let query = db
    .selectFrom("autotrade_positions as p")
    .innerJoin("strategies as st", "st.id", "p.strategy_id")
    .selectAll("p")
    .select("st.name as strategy_name")
    .where("p.account_id", "=", account.accountId);
  if (strategyId !== undefined) query = query.where("p.strategy_id", "=", strategyId);
  return query.orderBy("p.strategy_id").orderBy("p.symbol").execute();
}
