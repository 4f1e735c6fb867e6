import { Type } from "@sinclair/typebox";
import { OrderStatusRecord } from "./records.js";
import { DateTime, Nullable } from "./schemas.js";

/** Result records of the autotrade account operations (issue 14), as API.md "Records (v4)" names them. */

/**
 * OrderStatus of an order in a brokerage account: the strategy side's record,
 * SignalId being the strategy order a copy copies (null for the service's
 * closes and automatic stop losses and the customer's manual orders).
 */
export const AutotradeOrderStatusRecord = Type.Object(
  {
    ...OrderStatusRecord.properties,
    Id: Type.Integer({ description: "The account order" }),
    OrderId: Type.String({
      description: "The account order's id as text: what CancelAutotradeOrder and ReplaceAutotradeOrder take",
    }),
    SignalId: Nullable(Type.Integer({ description: "The strategy order this order copies; null when it copies none" })),
    BrokerId: Nullable(Type.Integer({ description: "The account's broker" })),
    SignalType: Type.Integer({
      description:
        "A copy: the copied signal's (1, 4, 5, 6); 1 a manual order, 5 the automatic stop loss, 6 the service's close following the strategy to flat",
    }),
  },
  { title: "AutotradeOrderStatus" },
);

export const DashBoardItemRecord = Type.Object(
  {
    PersonId: Type.Integer(),
    BrokerName: Type.String(),
    Account: Type.String(),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    StartDate: DateTime({ description: "When the setup started" }),
    TodayReturn: Nullable(
      Type.Number({
        description:
          "The last trading day marked: the setup's P&L since the mark before, over the capital allocated then (a fraction); null before its first mark",
      }),
    ),
    TotalReturn: Nullable(
      Type.Number({
        description:
          "The setup's P&L since it started over the capital allocated then (a fraction), at the last mark; null before its first mark",
      }),
    ),
  },
  { title: "DashBoardItem" },
);
