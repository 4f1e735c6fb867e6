import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import type { ErrorEntry } from "../../../core/errors.js";
import { Refusal } from "../../../core/errors.js";
import { statusOfCode } from "../../../core/orders/status.js";
import { setDesiredPositions } from "../../../services/desired-positions.js";
import { activeOrders, historicalOrders, openPositions } from "../../../services/order-reads.js";
import { cancelOrder, type PlacedOrder, placeOrder, replaceOrder } from "../../../services/orders.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import {
  activeOrderJson,
  desiredPositionsOrderOf,
  ExchangeSymbolInput,
  OrderDto,
  openPositionJson,
  orderStatusOf,
  orderTypeOfCode,
  readDecimal,
  readOrder,
  readSymbol,
  rejectedOrderOf,
  ServiceSymbolInput,
} from "../orders-wire.js";
import { OrderStatusRecord, PositionRecord, SetDesiredPositionsRecord, SignalIdRecord } from "../records.js";
import { Amount, DateTime, Id } from "../schemas.js";

const SecurityType = Type.Union([Type.Literal("CS"), Type.Literal("FUT"), Type.Literal("OPT"), Type.Literal("FOR")], {
  description: "Only this kind of instrument",
});
const StrategyIds = Type.Array(Id(), { minItems: 1, maxItems: 100, description: "Repeat or comma-separate" });

const signalIdResult = (placed: PlacedOrder) => ({
  SignalId: placed.signalId,
  ProfitTargetSignalId: placed.profitTargetSignalId,
  StopLossSignalId: placed.stopLossSignalId,
  ExitSignalsOCAGroupId: placed.exitSignalsOcaGroupId,
  ParkedUntilDate: placed.parkedUntilMs === null ? null : new Date(placed.parkedUntilMs),
});

const TRADERS =
  "Only the strategy's owner, the administrators of the owner's site and service admins may trade a strategy or read its orders.";

/** Strategy orders and positions (API.md 4.5; WIRE.md OrderDTO and SetDesiredPositions). */
export const orderOperations = [
  defineOperation({
    id: "NewStrategyOrder",
    method: "POST",
    path: "/Strategies/NewStrategyOrder",
    servers: ["WL", "GEN"],
    summary: `Sends an order (signal) to a strategy; a marketable order fills before the answer while its market is open. ProfitTarget and StopLoss add closing children in one OCA group; CancelReplaceSignalId makes it a replace. ${TRADERS}`,
    input: Type.Object({ Order: OrderDto }),
    result: SignalIdRecord,
    permission: anyCaller,
    paginated: false,
    idempotent: true,
    example: {
      Order: {
        StrategyId: EXAMPLE.strategyId,
        OrderType: "2",
        Side: "1",
        TIF: "1",
        OrderQuantity: 100,
        Limit: 195.5,
        ProfitTarget: 215,
        StopLoss: 185,
        ServiceSymbol: { FullSymbol: EXAMPLE.symbol, SymbolType: "stock" },
      },
    },
    handler: async (ctx, input) => [signalIdResult(await placeOrder(ctx, readOrder(input.Order, ctx.clock.nowMs())))],
  }),
  defineOperation({
    id: "ReplaceStrategyOrder",
    method: "PUT",
    path: "/Strategies/ReplaceStrategyOrder",
    servers: ["WL", "GEN"],
    summary:
      "Cancels the working signal CancelReplaceSignalId and puts this order in its place: same symbol and side; it keeps the old order's OCA group (unless DoNotCreateOCAGroup), parent and exits.",
    input: Type.Object({ Order: OrderDto }),
    result: SignalIdRecord,
    permission: anyCaller,
    paginated: false,
    idempotent: true,
    example: {
      Order: {
        StrategyId: EXAMPLE.strategyId,
        OrderType: "2",
        Side: "1",
        TIF: "1",
        OrderQuantity: 50,
        Limit: 192.25,
        CancelReplaceSignalId: EXAMPLE.replacedSignalId,
        ServiceSymbol: { FullSymbol: EXAMPLE.symbol },
      },
    },
    handler: async (ctx, input) => [signalIdResult(await replaceOrder(ctx, readOrder(input.Order, ctx.clock.nowMs())))],
  }),
  defineOperation({
    id: "CancelStrategyOrder",
    method: "DELETE",
    path: "/Strategies/CancelStrategyOrder",
    servers: ["WL", "GEN"],
    summary:
      "Cancels a working or held signal, with its exits and OCA siblings. A traded signal cannot be canceled (409, 2011).",
    input: Type.Object({ StrategyId: Id(), SignalId: Id() }),
    result: SignalIdRecord,
    permission: anyCaller,
    paginated: false,
    idempotent: true,
    example: { StrategyId: EXAMPLE.strategyId, SignalId: EXAMPLE.canceledSignalId },
    handler: async (ctx, input) => [signalIdResult(await cancelOrder(ctx, input.StrategyId, input.SignalId))],
  }),
  defineOperation({
    id: "GetStrategyActiveOrders",
    method: "GET",
    path: "/Strategies/GetStrategyActiveOrders",
    servers: ["WL", "GEN"],
    summary: `Working and held orders of the strategies, oldest first. ${TRADERS}`,
    input: Type.Object({
      StrategyIds,
      SecurityType: Type.Optional(SecurityType),
      OrderType: Type.Optional(
        Type.Union([Type.Literal("1"), Type.Literal("2"), Type.Literal("3")], {
          description: "1 Market, 2 Limit, 3 Stop",
        }),
      ),
    }),
    result: OrderStatusRecord,
    permission: anyCaller,
    paginated: false,
    preSerialized: true,
    example: { StrategyIds: [EXAMPLE.strategyId, EXAMPLE.portfolioStrategyId], OrderType: "2" },
    handler: async (ctx, input) =>
      (
        await activeOrders(ctx, {
          strategyIds: input.StrategyIds,
          securityType: input.SecurityType,
          orderType: input.OrderType === undefined ? undefined : orderTypeOfCode(input.OrderType),
        })
      ).map(activeOrderJson),
  }),
  defineOperation({
    id: "GetStrategyHistoricalOrders",
    method: "GET",
    path: "/Strategies/GetStrategyHistoricalOrders",
    servers: ["WL", "GEN"],
    summary:
      "Ended orders (filled, canceled, expired, replaced, rejected) of a strategy posted in [StartDate, EndDate), or the one signal SignalId in whatever state. One of StrategyId and SignalId is required.",
    input: Type.Object({
      StrategyId: Type.Optional(Id()),
      SignalId: Type.Optional(Id()),
      OrderStatus: Type.Optional(
        Type.Union([Type.Literal("2"), Type.Literal("4"), Type.Literal("C")], {
          description: "2 Filled, 4 Canceled, C Expired",
        }),
      ),
      StartDate: Type.Optional(DateTime({ description: "UTC" })),
      EndDate: Type.Optional(DateTime({ description: "UTC, exclusive" })),
    }),
    result: OrderStatusRecord,
    permission: anyCaller,
    paginated: true,
    example: { StrategyId: EXAMPLE.strategyId, StartDate: "2026-03-01T00:00:00Z", EndDate: "2026-04-01T00:00:00Z" },
    handler: async (ctx, input, page) => {
      const result = await historicalOrders(
        ctx,
        {
          strategyId: input.StrategyId,
          signalId: input.SignalId,
          status: input.OrderStatus === undefined ? undefined : statusOfCode(input.OrderStatus),
          startMs: input.StartDate === undefined ? undefined : Date.parse(input.StartDate),
          endMs: input.EndDate === undefined ? undefined : Date.parse(input.EndDate),
        },
        page,
      );
      return { ...result, items: result.items.map(orderStatusOf) };
    },
  }),
  defineOperation({
    id: "GetStrategyOpenPositions",
    method: "GET",
    path: "/Strategies/GetStrategyOpenPositions",
    servers: ["WL", "GEN"],
    summary: `Open positions of the strategies, by strategy and symbol. ${TRADERS}`,
    input: Type.Object({ StrategyIds, SecurityType: Type.Optional(SecurityType) }),
    result: PositionRecord,
    permission: anyCaller,
    paginated: false,
    preSerialized: true,
    example: { StrategyIds: [EXAMPLE.strategyId, EXAMPLE.portfolioStrategyId], SecurityType: "CS" },
    handler: async (ctx, input) =>
      (await openPositions(ctx, { strategyIds: input.StrategyIds, securityType: input.SecurityType })).map(
        openPositionJson,
      ),
  }),
  defineOperation({
    id: "SetDesiredPositions",
    method: "POST",
    path: "/Strategies/SetDesiredPositions",
    pathOn: { WL: "/v2/Strategies/SetDesiredPositions" },
    servers: ["WL", "GEN"],
    summary:
      "States the positions the strategy must hold: its live orders are canceled and market orders (GTC) make up every difference; positions left out are closed, an empty list closes everything.",
    input: Type.Object({
      StrategyId: Id(),
      Positions: Type.Array(
        Type.Object(
          {
            Quantity: Amount({ description: "Signed, non-zero: below zero is short" }),
            ServiceSymbol: Type.Optional(ServiceSymbolInput),
            ExchangeSymbol: Type.Optional(ExchangeSymbolInput),
          },
          { title: "DesiredPosition" },
        ),
        { maxItems: 500 },
      ),
    }),
    result: SetDesiredPositionsRecord,
    permission: anyCaller,
    paginated: false,
    idempotent: true,
    example: {
      StrategyId: EXAMPLE.portfolioStrategyId,
      Positions: [
        { Quantity: 100, ServiceSymbol: { FullSymbol: EXAMPLE.symbol } },
        { Quantity: -20, ServiceSymbol: { FullSymbol: "MSFT" } },
      ],
    },
    handler: async (ctx, input) => {
      const errors: ErrorEntry[] = [];
      const nowMs = ctx.clock.nowMs();
      const positions = input.Positions.flatMap((position, index) => {
        const symbol = readSymbol(position, `Positions[${index}].`, errors, nowMs);
        const quantity = readDecimal(position.Quantity, `Positions[${index}].Quantity`, errors);
        return symbol ? [{ ...symbol, quantity }] : [];
      });
      if (errors.length > 0) throw new Refusal(errors);
      const outcome = await setDesiredPositions(ctx, input.StrategyId, positions);
      return [
        {
          NewSignals: outcome.newSignals.map(desiredPositionsOrderOf),
          CanceledSignals: outcome.canceledSignals.map(desiredPositionsOrderOf),
          RejectedSignals: outcome.rejectedSignals.map((r) => rejectedOrderOf(r.terms, r.reason)),
        },
      ];
    },
  }),
];
