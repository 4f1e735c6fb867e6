import { Type } from "@sinclair/typebox";
import { ServiceSymbolRecord } from "./records.js";
import { DateTime, Nullable } from "./schemas.js";

/** Result records of GetStrategyMuxStatus (docs/decisions.md "StrategyMux (issue 14)"). */

export const MuxPositionSyncRecord = Type.Object(
  {
    ServiceSymbol: ServiceSymbolRecord,
    ParentQuantity: Type.Number({ description: "The parent's position (signed)" }),
    ExpectedQuantity: Type.Number({ description: "The parent's scaled by the variant's percentage, whole units" }),
    ChildQuantity: Type.Number({ description: "The variant's position (signed)" }),
    Difference: Type.Number({ description: "ChildQuantity − ExpectedQuantity" }),
    InSync: Type.Boolean(),
  },
  { title: "MuxPositionSync" },
);

export const MuxExceptionRecord = Type.Object(
  {
    SignalId: Type.Integer({ description: "The parent's order" }),
    ChildSignalId: Nullable(Type.Integer({ description: "The variant's order it concerned, if any" })),
    Action: Type.Union([Type.Literal("Place"), Type.Literal("Replace"), Type.Literal("Cancel")]),
    Status: Type.Union([Type.Literal("Failed"), Type.Literal("Skipped")]),
    Reason: Type.String({
      description:
        "Skipped: rounds_to_zero, nothing_to_close, not_mirrored. Failed: the code name of the variant's refusal (NewOrderRejected, InvalidValue...)",
    }),
    Message: Nullable(Type.String()),
    Date: DateTime({ description: "When the mirror met it" }),
  },
  { title: "MuxException" },
);

export const StrategyMuxVariantRecord = Type.Object(
  {
    ChildStrategyId: Type.Integer(),
    ChildStrategyName: Type.String(),
    ScalingPercentage: Type.Number(),
    LinkedDate: DateTime(),
    InSync: Type.Boolean({ description: "Every position is the parent's scaled" }),
    Positions: Type.Array(MuxPositionSyncRecord),
    OrdersMirrored: Type.Integer({ description: "Parent orders placed, replaced or canceled in the variant" }),
    ExceptionCount: Type.Integer({ description: "Parent orders that failed to mirror or were skipped" }),
    ExceptionsByReason: Type.Array(Type.Object({ Reason: Type.String(), Count: Type.Integer() })),
    LastMirroredDate: Nullable(DateTime()),
    RecentExceptions: Type.Array(MuxExceptionRecord, { description: "The latest 20, newest first" }),
  },
  { title: "StrategyMuxVariant" },
);

export const StrategyMuxStatusRecord = Type.Object(
  {
    ParentStrategyId: Type.Integer(),
    ParentStrategyName: Type.String(),
    WhiteLabelSiteId: Type.Integer(),
    PendingEvents: Type.Integer({ description: "The parent's order events the mirror has not read yet" }),
    VariantCount: Type.Integer(),
    VariantsInSync: Type.Integer(),
    ExceptionCount: Type.Integer({ description: "Summed over the variants" }),
    Variants: Type.Array(StrategyMuxVariantRecord),
  },
  { title: "StrategyMuxStatus" },
);
