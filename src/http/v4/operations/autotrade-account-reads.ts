import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { ORDER_STATUS_CODES, statusOfCode } from "../../../core/orders/status.js";
import {
  activeAccountOrders,
  historicalAccountOrders,
  openAccountPositions,
} from "../../../services/autotrade-account-reads.js";
import { dashBoard } from "../../../services/autotrade-dashboard.js";
import { ACCOUNT_FIELDS, accountNameOf, OWNED_ACCOUNT_FIELDS, WHO } from "../autotrade-account-input.js";
import { AutotradeOrderStatusRecord, DashBoardItemRecord } from "../autotrade-account-records.js";
import { accountOrderStatusOf, accountPositionOf, dashBoardItemOf } from "../autotrade-account-wire.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { PositionRecord } from "../records.js";
import { DateTime, Id } from "../schemas.js";

/** Reading an autotraded brokerage account (API.md 4.2): its orders, what its setups hold, its dashboard. */

export const autotradeAccountReadOperations = [
  defineOperation({
    id: "GetAutotradeActiveOrders",
    method: "GET",
    path: "/Autotrade/GetAutotradeActiveOrders",
    servers: ["WL", "GEN", "GEO"],
    summary: `The account's working orders (held for confirmation or not yet sent, working, partly filled, waiting on a cancel or a new price), oldest first: copies of strategy orders, the service's closes and automatic stop losses, manual orders. ${WHO}`,
    input: Type.Object({
      ...OWNED_ACCOUNT_FIELDS,
      StrategyId: Type.Optional(Id({ description: "Only orders trading for this strategy" })),
    }),
    result: AutotradeOrderStatusRecord,
    permission: anyCaller,
    paginated: false,
    example: { Account: EXAMPLE.autotradeAccount, PersonId: EXAMPLE.customerId },
    handler: async (ctx, input) => {
      const { orders } = await activeAccountOrders(ctx, accountNameOf(input), input.StrategyId);
      return orders.map(accountOrderStatusOf);
    },
  }),
  defineOperation({
    id: "GetAutotradeHistoricalOrders",
    method: "GET",
    path: "/Autotrade/GetAutotradeHistoricalOrders",
    servers: ["WL", "GEN", "GEO"],
    summary: `The account's ended orders (filled, canceled, rejected, expired) posted in [StartDate, EndDate), oldest first. ${WHO}`,
    input: Type.Object({
      ...OWNED_ACCOUNT_FIELDS,
      StrategyId: Type.Optional(Id({ description: "Only orders trading for this strategy" })),
      OrderStatus: Type.Optional(
        Type.Union(
          Object.values(ORDER_STATUS_CODES).map((code) => Type.Literal(code)),
          { description: "2 Filled, 4 Canceled, 8 Rejected or C Expired (the others never end an account order)" },
        ),
      ),
      StartDate: Type.Optional(DateTime({ description: "UTC, inclusive, on PostedDate" })),
      EndDate: Type.Optional(DateTime({ description: "UTC, exclusive, on PostedDate" })),
    }),
    result: AutotradeOrderStatusRecord,
    permission: anyCaller,
    paginated: true,
    example: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: EXAMPLE.customerId,
      OrderStatus: "2",
      StartDate: "2026-03-01T00:00:00Z",
      EndDate: "2026-04-01T00:00:00Z",
    },
    handler: async (ctx, input, page) => {
      const result = await historicalAccountOrders(
        ctx,
        accountNameOf(input),
        {
          strategyId: input.StrategyId,
          status: input.OrderStatus === undefined ? undefined : statusOfCode(input.OrderStatus),
          startMs: input.StartDate === undefined ? undefined : Date.parse(input.StartDate),
          endMs: input.EndDate === undefined ? undefined : Date.parse(input.EndDate),
        },
        page,
      );
      return { ...result, items: result.items.map(accountOrderStatusOf) };
    },
  }),
  defineOperation({
    id: "GetAutoTradeOpenPositions",
    method: "GET",
    path: "/Autotrade/GetAutoTradeOpenPositions",
    servers: ["WL", "GEN", "GEO"],
    summary: `What each strategy's setup holds in the account, by strategy and symbol (the broker nets; the service attributes). ${WHO}`,
    input: Type.Object({
      ...ACCOUNT_FIELDS,
      StrategyId: Type.Optional(Id({ description: "Only what this strategy's setup holds" })),
    }),
    result: PositionRecord,
    permission: anyCaller,
    paginated: false,
    example: { Account: EXAMPLE.autotradeAccount, StrategyId: EXAMPLE.strategyId },
    handler: async (ctx, input) =>
      (await openAccountPositions(ctx, { account: input.Account, brokerId: input.BrokerId }, input.StrategyId)).map(
        accountPositionOf,
      ),
  }),
  defineOperation({
    id: "GetDashBoard",
    method: "GET",
    path: "/Autotrade/GetDashBoard",
    servers: ["WL", "GEN", "GEO"],
    summary: `Each strategy the account autotrades, with its returns from the account's marks at NYSE closes: TodayReturn the last trading day marked, TotalReturn since the setup started, each the setup's P&L over the capital allocated to it (ScalingPercentage of the account's value), as fractions. ${WHO}`,
    input: Type.Object(OWNED_ACCOUNT_FIELDS),
    result: DashBoardItemRecord,
    permission: anyCaller,
    paginated: false,
    example: { PersonId: EXAMPLE.customerId, Account: EXAMPLE.autotradeAccount },
    handler: async (ctx, input) => (await dashBoard(ctx, accountNameOf(input))).map(dashBoardItemOf),
  }),
];
