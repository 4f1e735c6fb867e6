import { randomUUID } from "node:crypto";
import {
  type AccountOrderFacts,
  cancelRefusal,
  priceRefusal,
  replaceRefusal,
} from "../core/autotrade/account-order-rules.js";
import { BROKER_TERMINAL } from "../core/autotrade/broker-order.js";
import { closingRefusal, coveredBy, type ManualOrderRequest, readManualOrder } from "../core/autotrade/manual-order.js";
import { tradesAsCfd } from "../core/autotrade/settings.js";
import { type Decimal, formatDecimal } from "../core/decimal.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import type { OrderStatus } from "../core/orders/status.js";
import type { AutotradeDesk } from "../engine/autotrade/desk.js";
import type { HeldOrder } from "../engine/autotrade/followers.js";
import type { NewAccountOrder } from "../store/journal/batch.js";
import { instrumentOf } from "../store/trading-state.js";
import { withTransaction } from "../store/transaction.js";
import { type AccountName, type NamedAccount, namedAccount } from "./autotrade-accounts.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * The customer's orders in an autotraded brokerage account
 * (NewAutotradeOrder, CancelAutotradeOrder, ReplaceAutotradeOrder), through
 * the desk, the one writer of brokerage accounts: it holds what each setup
 * holds and its open orders, sends to the broker once an order is durable,
 * and moves each order through the broker-order state machine as the
 * broker answers. Each call answers once the broker's first answer is in
 * (a placement taken or refused, a cancel or a replace done or refused) or
 * the broker could not be reached.
 */
export interface DeskContext extends RequestContext {
  readonly desk: AutotradeDesk;
}

const refused = (entry: ErrorEntry) => new Refusal([entry]);

export interface ManualOrder {
  readonly name: AccountName;
  /** The strategy whose setup's holding the order closes (Order.StrategyId). */
  readonly strategyId: number;
  readonly order: ManualOrderRequest;
}

/**
 * NewAutotradeOrder: a manual exit order (Limit or Stop, closing only) of
 * the setup of Order.StrategyId. It is checked against the setup's holding
 * and open closing orders and adopted by the desk in one step (nothing runs
 * between them), stored, then sent. Answers the account order's id; a
 * refusal by the broker is a 409 naming Order (the order stays in the
 * history as rejected, Meta.OrderId). A broker not reached leaves the order
 * waiting (PendingNew), sent again under the same key on the desk's next pass.
 */
export async function newAutotradeOrder(ctx: DeskContext, input: ManualOrder): Promise<number> {
  const nowMs = ctx.clock.nowMs();
  const read = readManualOrder(input.order, nowMs);
  if (!read.ok) throw new Refusal(read.errors);
  const account = await namedAccount(dbOf(ctx), ctx.caller, input.name);
  if (!account.isLinked) {
    throw refuse("WrongState", { field: "Account", message: `Account ${account.account} is delinked by its broker` });
  }
  const held = await ctx.desk.account(account.accountId);
  const setup = held && [...held.setups.values()].find((s) => s.strategyId === input.strategyId);
  if (!held || !setup) {
    throw refuse("NotFound", {
      field: "Order.StrategyId",
      message: `Account ${account.account} does not autotrade strategy ${input.strategyId}`,
    });
  }
  if (setup.status !== "active") {
    throw refuse("WrongState", {
      field: "Order.StrategyId",
      message: `A stop of strategy ${input.strategyId}'s autotrading is requested: its orders are being canceled`,
    });
  }
  const { terms } = read;
  const symbol = terms.instrument.fullSymbol;
  // From here to adopt nothing awaits: no copy or close of the desk's comes in between.
  const holding = ctx.desk.heldBy(held, input.strategyId, symbol);
  const covered = coveredBy(holding, ctx.desk.openQuantity(held, setup.id, symbol, "close"));
  const refusal = closingRefusal(terms, { held: holding, covered }, input.order.symbolField);
  if (refusal) throw refused(refusal);
  const row: NewAccountOrder = {
    account_id: account.accountId,
    setup_id: setup.id,
    strategy_id: input.strategyId,
    source_order_id: null,
    purpose: "manual",
    symbol,
    symbol_type: terms.instrument.symbolType,
    side: terms.side,
    open_close: "close",
    order_type: terms.type,
    tif: terms.tif,
    quantity: formatDecimal(terms.quantity),
    limit_price: terms.limit === null ? null : formatDecimal(terms.limit),
    stop_price: terms.stop === null ? null : formatDecimal(terms.stop),
    status: "PendingNew",
    prior_status: null,
    awaiting_confirmation: 0,
    // A manual exit rests at the broker; it closes the holding in the form the setup holds it.
    virtual_limit: 0,
    as_cfd: tradesAsCfd(terms.instrument.symbolType, setup.settings) ? 1 : 0,
    filled_quantity: "0",
    filled_notional: "0",
    idempotency_key: `manual:${account.accountId}:${randomUUID()}`,
    broker_order_id: null,
    replaces_id: null,
    reason: null,
    created_at: nowMs,
    updated_at: nowMs,
    sent_at: null,
    closed_at: null,
  };
  ctx.desk.adopt([row]);
  const order = held.orders.get(row.idempotency_key);
  let id: number;
  try {
    id = await withTransaction(ctx, async ({ tx }) => {
      const made = await tx.insertInto("account_orders").values(row).returning("id").executeTakeFirstOrThrow();
      return made.id;
    });
  } catch (error) {
    ctx.desk.forget([row]);
    throw error;
  }
  ctx.desk.stored([row]);
  await ctx.desk.accountSettled(account.accountId);
  if (order?.row.status === "Rejected") {
    throw refuse("NewOrderRejected", {
      field: "Order",
      message: `The broker rejected the order: ${order.row.reason ?? "no reason given"}`,
      meta: { OrderId: String(id) },
    });
  }
  return id;
}

/** An OrderId as the API gives it (the account order's id, as text). */
function orderIdOf(text: string): number {
  const id = /^[1-9][0-9]{0,15}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(id)) {
    throw refuse("InvalidValue", {
      field: "OrderId",
      message: `OrderId ${text} is not an order's OrderId: one is a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, without leading zeros`,
    });
  }
  return id;
}

interface Target {
  readonly account: NamedAccount;
  readonly id: number;
  readonly key: string;
  readonly facts: AccountOrderFacts;
  readonly symbol: string;
  readonly symbolType: string;
  /** The order as the desk holds it: undefined when the desk holds it open no more. */
  readonly held: HeldOrder | undefined;
}

/** The account's order named by OrderId, as the desk holds it now (404 naming OrderId when not the account's). */
async function targetOf(ctx: DeskContext, name: AccountName, orderIdText: string): Promise<Target> {
  const id = orderIdOf(orderIdText);
  const db = dbOf(ctx);
  const account = await namedAccount(db, ctx.caller, name);
  const held = await ctx.desk.account(account.accountId);
  // What the desk has heard is written first: the order read is as the desk knows it.
  await ctx.desk.accountSettled(account.accountId);
  const row = await db
    .selectFrom("account_orders")
    .select(["idempotency_key", "purpose", "open_close", "order_type", "status", "symbol", "symbol_type"])
    .where("id", "=", id)
    .where("account_id", "=", account.accountId)
    .executeTakeFirst();
  if (!row) throw refuse("NotFound", { field: "OrderId", message: `Account ${account.account} has no order ${id}` });
  const order = held?.orders.get(row.idempotency_key);
  const status = (order?.row.status ?? row.status) as OrderStatus;
  // The desk holds every open order of the accounts it holds: one it does not hold has ended.
  if (!order && !BROKER_TERMINAL.has(status)) {
    throw refuse("CancelRejected", { field: "OrderId", message: `Order ${id} is no longer open` });
  }
  return {
    account,
    id,
    key: row.idempotency_key,
    facts: { id, purpose: row.purpose, openClose: row.open_close, orderType: row.order_type, status },
    symbol: row.symbol,
    symbolType: row.symbol_type,
    held: order,
  };
}

/** The refusal of a request the broker did not carry out: the order ended meanwhile, or the broker refused. */
function notCarriedOut(target: Target, order: HeldOrder, asked: string): Refusal {
  const status = order.row.status as OrderStatus;
  return refuse("CancelRejected", {
    field: "OrderId",
    message: BROKER_TERMINAL.has(status)
      ? `Order ${target.id} is ${status}: it is no longer open`
      : `The broker refused the ${asked}: ${order.row.reason ?? "no reason given"}`,
  });
}

/**
 * CancelAutotradeOrder: asks the broker to cancel an open order of the
 * account; answered Canceled (or PendingCancel while a broker has not
 * answered). The automatic stop loss cannot be canceled; a cancel the broker
 * refuses (or could not be asked) leaves the order working and is a 409.
 */
export async function cancelAutotradeOrder(ctx: DeskContext, name: AccountName, orderIdText: string): Promise<number> {
  const target = await targetOf(ctx, name, orderIdText);
  const refusal = cancelRefusal(target.facts);
  if (refusal) throw refused(refusal);
  const order = ctx.desk.cancelOrder(target.account.accountId, target.key, "Canceled by the customer");
  if (!order)
    throw refused({ name: "CancelRejected", field: "OrderId", message: `Order ${target.id} is no longer open` });
  await ctx.desk.accountSettled(target.account.accountId);
  const status = order.row.status as OrderStatus;
  if (status === "Canceled" || status === "PendingCancel") return target.id;
  throw notCarriedOut(target, order, "cancel");
}

/**
 * ReplaceAutotradeOrder: a new price (its limit, or its stop) for an open
 * strategy exit or manual exit the broker holds, through the broker's
 * replace: PendingReplace until the broker answers, the order working on at
 * the new price once it has; a replace the broker refuses (or could not be
 * asked) leaves it at its old price and is a 409.
 */
export async function replaceAutotradeOrder(
  ctx: DeskContext,
  name: AccountName,
  orderIdText: string,
  price: Decimal,
): Promise<number> {
  const target = await targetOf(ctx, name, orderIdText);
  const priceProblem = priceRefusal(price, instrumentOf(target.symbol, target.symbolType));
  if (priceProblem) throw refused(priceProblem);
  const refusal = replaceRefusal(target.facts);
  if (refusal) throw refused(refusal);
  const current = target.facts.orderType === "limit" ? target.held?.row.limit_price : target.held?.row.stop_price;
  const wanted = formatDecimal(price);
  if (current === wanted) {
    throw refuse("InvalidValue", { field: "Price", message: `Order ${target.id}'s price is ${wanted} already` });
  }
  const order = ctx.desk.replaceOrder(
    target.account.accountId,
    target.key,
    target.facts.orderType === "limit" ? { limit: price, stop: null } : { limit: null, stop: price },
  );
  if (!order)
    throw refused({ name: "CancelRejected", field: "OrderId", message: `Order ${target.id} is no longer open` });
  await ctx.desk.accountSettled(target.account.accountId);
  const now = target.facts.orderType === "limit" ? order.row.limit_price : order.row.stop_price;
  if (now === wanted || order.row.status === "PendingReplace") return target.id;
  throw notCarriedOut(target, order, "new price");
}
