import { Type } from "@sinclair/typebox";
import { AutotradeSettingsRecord } from "./autotrade-records.js";
import { ExchangeSymbolRecord, ServiceSymbolRecord } from "./records.js";
import { Nullable } from "./schemas.js";

/** Result records of AutoSync's operations (API.md Records: AutotradeSyncStatusReport, SyncPositionsToOpen result). */

export const AutotradeSyncStatusReportRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The autotrade setup the row is of" }),
    ReportType: Type.Integer({ description: "1: a position (the strategy's or the account's); 2: a working signal" }),
    PersonId: Type.Integer(),
    Account: Type.String(),
    StrategyId: Type.Integer(),
    SignalId: Nullable(Type.Integer({ description: "The working signal (ReportType 2); null for a position" })),
    StrategyName: Type.String(),
    BrokerName: Type.String(),
    AccountQuantity: Type.Number({
      description:
        "Position: what the setup holds in the account (signed). Signal: the size of its copy working in the account (signed by side), 0 when none works",
    }),
    StrategyQuantity: Type.Number({
      description: "Position: the strategy's (signed). Signal: its order quantity, signed by side",
    }),
    ScaledQuantity: Nullable(
      Type.Number({
        description:
          "Position: the scaled strategy position AutoSync brings the account to. Signal: the size of its copy. Null when it cannot be worked out (no account value, no price)",
      }),
    ),
    SignalType: Nullable(Type.Integer({ description: "The signal's SignalType (ReportType 2); null for a position" })),
    InSync: Type.Boolean({ description: "AccountQuantity equals ScaledQuantity" }),
    NotInSyncReason: Nullable(
      Type.String({ description: "Why not, and when AutoSync brings it in sync; null when in sync" }),
    ),
    ServiceSymbol: ServiceSymbolRecord,
    ExchangeSymbol: ExchangeSymbolRecord,
    AutotradeSettings: AutotradeSettingsRecord,
  },
  { title: "AutotradeSyncStatusReport" },
);

export const SyncPositionsToOpenRecord = Type.Object(
  {
    StrategyId: Type.Integer(),
    Success: Type.Boolean({ description: "The sync was made, or is due at the next open of a closed market" }),
    Reason: Type.String({
      description: "What was synced now, what waits for its market's open, what was left and why",
    }),
    ReasonCode: Type.Integer({
      description:
        "0 Synced, 1 ScheduledAtOpen, 2 SymbolsLeft (successes); 10 NotAutotraded, 11 StopRequested, 12 AutotradeDisabled, 13 AccountDelinked, 14 AutoSyncDisabled, 15 Busy",
    }),
  },
  { title: "SyncPositionsToOpenResult" },
);
