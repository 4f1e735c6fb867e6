import { type Static, Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import type { ManualOrderRequest } from "../../../core/autotrade/manual-order.js";
import { type ErrorEntry, Refusal } from "../../../core/errors.js";
import {
  cancelAutotradeOrder,
  newAutotradeOrder,
  replaceAutotradeOrder,
} from "../../../services/autotrade-order-entry.js";
import { resetPaperTrade } from "../../../services/paper-reset.js";
import { accountNameOf, OWNED_ACCOUNT_FIELDS, WHO } from "../autotrade-account-input.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { OrderDto, readDecimal, readOrder } from "../orders-wire.js";
import { SignalIdRecord } from "../records.js";
import { Amount } from "../schemas.js";

/** The customer's orders in an autotraded brokerage account (API.md 4.2, 4.3 rule 5), and the paper reset. */

const OrderId = () =>
  Type.String({ pattern: "^[0-9]{1,16}$", description: "The order's OrderId (GetAutotradeActiveOrders)" });

/** The SignalId result of an account order: SignalId is the account order's id (its OrderId as a number). */
const signalIdResult = (orderId: number) => ({
  SignalId: orderId,
  ProfitTargetSignalId: null,
  StopLossSignalId: null,
  ExitSignalsOCAGroupId: null,
  ParkedUntilDate: null,
});

/** OrderDTO fields a manual exit does not take. */
const NOT_TAKEN = ["ProfitTarget", "StopLoss", "ParentSignalId", "CancelReplaceSignalId", "ParkedUntilDate"] as const;

/** The Order of a NewAutotradeOrder body, as the manual-order rules read it. */
function manualOrderOf(order: Static<typeof OrderDto>, nowMs: number): ManualOrderRequest {
  const read = readOrder(order, nowMs);
  return {
    instrument: read.instrument,
    type: read.type,
    side: read.side,
    tif: read.tif,
    quantity: read.quantity,
    openClose: read.openClose,
    limit: read.limit,
    stop: read.stop,
    unsupported: NOT_TAKEN.filter((field) => order[field] !== undefined).map((field) => `Order.${field}`),
    symbolField: order.ServiceSymbol ? "Order.ServiceSymbol" : "Order.ExchangeSymbol",
  };
}

export const autotradeOrderEntryOperations = [
  defineOperation({
    id: "NewAutotradeOrder",
    method: "POST",
    path: "/Autotrade/NewAutotradeOrder",
    servers: ["WL", "GEN", "GEO"],
    summary: `Sends a manual closing order (Limit or Stop only) to the account: it reduces what the setup of Order.StrategyId holds in the symbol, by no more than the setup's open closing orders (the strategy's exits among them) leave uncovered. Answers when the broker has taken it (SignalId is the new order's OrderId); a broker's refusal is 409. ${WHO}`,
    input: Type.Object({ ...OWNED_ACCOUNT_FIELDS, Order: OrderDto }),
    result: SignalIdRecord,
    permission: anyCaller,
    paginated: false,
    idempotent: true,
    example: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: EXAMPLE.customerId,
      Order: {
        StrategyId: EXAMPLE.strategyId,
        OrderType: "2",
        Side: "2",
        TIF: "1",
        OrderQuantity: 10,
        Limit: 230,
        ServiceSymbol: { FullSymbol: EXAMPLE.symbol, SymbolType: "stock" },
      },
    },
    handler: async (ctx, input) => {
      const order = manualOrderOf(input.Order, ctx.clock.nowMs());
      const strategyId = input.Order.StrategyId;
      return [signalIdResult(await newAutotradeOrder(ctx, { name: accountNameOf(input), strategyId, order }))];
    },
  }),
  defineOperation({
    id: "CancelAutotradeOrder",
    method: "DELETE",
    path: "/Autotrade/CancelAutotradeOrder",
    servers: ["WL", "GEN", "GEO"],
    summary: `Cancels an open order of the account at its broker; answered once the broker has (a cancel it refuses, or that cannot reach it, is 409 and the order works on). The automatic stop loss cannot be canceled. ${WHO}`,
    input: Type.Object({ ...OWNED_ACCOUNT_FIELDS, OrderId: OrderId() }),
    result: SignalIdRecord,
    permission: anyCaller,
    paginated: false,
    idempotent: true,
    example: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: EXAMPLE.customerId,
      OrderId: EXAMPLE.canceledAccountOrderId,
    },
    handler: async (ctx, input) => {
      return [signalIdResult(await cancelAutotradeOrder(ctx, accountNameOf(input), input.OrderId))];
    },
  }),
  defineOperation({
    id: "ReplaceAutotradeOrder",
    method: "PUT",
    path: "/Autotrade/ReplaceAutotradeOrder",
    servers: ["WL", "GEN", "GEO"],
    summary: `A new price (the limit, or the stop) for an open strategy exit order (a copy of the strategy's closing order) or manual exit order, through the broker's replace: the order keeps its OrderId; a replace the broker refuses, or that cannot reach it, is 409 and the order works on at its old price. ${WHO}`,
    input: Type.Object({
      ...OWNED_ACCOUNT_FIELDS,
      OrderId: OrderId(),
      Price: Amount({ description: "The order's new price: its limit, or its stop" }),
    }),
    result: SignalIdRecord,
    permission: anyCaller,
    paginated: false,
    idempotent: true,
    example: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: EXAMPLE.customerId,
      OrderId: EXAMPLE.replacedAccountOrderId,
      Price: 235.5,
    },
    handler: async (ctx, input) => {
      const errors: ErrorEntry[] = [];
      const price = readDecimal(input.Price, "Price", errors);
      if (errors.length > 0) throw new Refusal(errors);
      return [signalIdResult(await replaceAutotradeOrder(ctx, accountNameOf(input), input.OrderId, price))];
    },
  }),
  defineOperation({
    id: "ResetPaperTrade",
    method: "PUT",
    path: "/Autotrade/ResetPaperTrade",
    servers: ["WL", "GEN", "GEO"],
    summary: `Puts a paper account back to its starting cash, at its broker and here: its open orders canceled, its positions cleared, its returns started over; its setups go on following their strategies. A live account is refused. ${WHO}`,
    input: Type.Object(OWNED_ACCOUNT_FIELDS),
    result: Type.Boolean(),
    permission: anyCaller,
    paginated: false,
    example: { Account: EXAMPLE.paperAccount, PersonId: EXAMPLE.customerId },
    handler: async (ctx, input) => {
      await resetPaperTrade(ctx, accountNameOf(input));
      return [true];
    },
  }),
];
