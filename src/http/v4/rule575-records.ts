import { Type } from "@sinclair/typebox";
import { ServiceSymbolRecord } from "./records.js";
import { DateTime, Nullable } from "./schemas.js";

/** Result records of GetRule575Status (docs/decisions.md "Rule 575 (issue 14)"). */

const summaryFields = {
  CopyFills: Type.Integer({ description: "Copy fills in the window" }),
  ExceptionFills: Type.Integer({ description: "Of them, exceptions (either reason, or both)" }),
  SlippageExceptions: Type.Integer(),
  WindowExceptions: Type.Integer(),
  WorstSlippageBps: Nullable(
    Type.Number({ description: "The largest slippage in basis points (negative: better than the strategy)" }),
  ),
  WorstSlippageFillId: Nullable(Type.Integer({ description: "The copy fill it was" })),
};

export const Rule575StrategySummaryRecord = Type.Object(
  { StrategyId: Type.Integer(), StrategyName: Type.String(), ...summaryFields },
  { title: "Rule575StrategySummary" },
);

export const Rule575DaySummaryRecord = Type.Object(
  { Date: Type.String({ description: "The UTC day, YYYY-MM-DD" }), ...summaryFields },
  { title: "Rule575DaySummary" },
);

export const Rule575FillRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The copy fill" }),
    AccountOrderId: Type.Integer(),
    PersonId: Type.Integer(),
    Account: Type.String(),
    BrokerId: Type.Integer(),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    SignalId: Type.Integer({ description: "The strategy order the fill copies" }),
    ServiceSymbol: ServiceSymbolRecord,
    Side: Type.String({ description: "1 Buy, 2 Sell" }),
    Quantity: Type.Number(),
    Price: Type.Number(),
    FilledDate: DateTime(),
    StrategyAvgFillPrice: Nullable(Type.Number({ description: "Volume-weighted; null: the strategy has not filled" })),
    StrategyFilledQuantity: Nullable(Type.Number()),
    StrategyFirstFillDate: Nullable(DateTime()),
    StrategyLastFillDate: Nullable(DateTime()),
    WindowEndDate: Nullable(DateTime({ description: "The strategy's last fill plus the site's window" })),
    Slippage: Nullable(Type.Number({ description: "How much worse than the strategy, in price (negative: better)" })),
    SlippageBps: Nullable(Type.Number({ description: "The same in basis points of the strategy's price" })),
    Reasons: Type.Array(Type.Union([Type.Literal("Slippage"), Type.Literal("OutsideWindow")])),
  },
  { title: "Rule575Fill" },
);

export const Rule575StatusRecord = Type.Object(
  {
    WhiteLabelSiteId: Type.Integer(),
    StartDate: DateTime(),
    EndDate: DateTime(),
    StrategyId: Nullable(Type.Integer({ description: "The strategy filter, if given" })),
    ToleranceBps: Type.Number({ description: "The site's tolerance: basis points of the strategy's price" }),
    IsDefaultTolerance: Type.Boolean(),
    WindowSeconds: Type.Integer({ description: "Seconds after the strategy's last fill a copy may fill" }),
    IsDefaultWindow: Type.Boolean(),
    Total: Type.Object(summaryFields),
    Strategies: Type.Array(Rule575StrategySummaryRecord),
    Days: Type.Array(Rule575DaySummaryRecord),
    ExceptionFills: Type.Array(Rule575FillRecord, {
      description: "The exception fills of this page, oldest first (Pagination walks them)",
    }),
  },
  { title: "Rule575Status" },
);
