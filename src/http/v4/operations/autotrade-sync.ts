import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { toNumber } from "../../../core/decimal.js";
import { exchangeSymbolOf, serviceSymbolOf } from "../../../core/symbols/instrument.js";
import type { SetupView } from "../../../services/autotrade-reads.js";
import { type SyncReportRow, syncStatusReport } from "../../../services/autotrade-sync-report.js";
import { syncPositionsToOpen } from "../../../services/autotrade-sync-request.js";
import { AutotradeSyncStatusReportRecord, SyncPositionsToOpenRecord } from "../autotrade-sync-records.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation, type V4Server } from "../operation.js";
import { type RawJson, rawJson } from "../raw-json.js";
import { Id } from "../schemas.js";
import { AccountNumber, BrokerId, settingsOf } from "./autotrade-setups.js";

/** AutoSync under /Autotrade (API.md 4.2): the sync status report and SyncPositionsToOpen. */
export const autotradeSyncOperations = [
  defineOperation({
    id: "GetAutotradeSyncStatusReport",
    method: "GET",
    path: "/Autotrade/GetAutotradeSyncStatusReport",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "For each live setup of the person's account (one strategy's if named): a row per position of the strategy or of the setup (ReportType 1) and per working signal of the strategy (ReportType 2), with what the account and the strategy hold, the scaled quantity AutoSync brings the account to, whether it is in sync and why not, and the setup's AutotradeSettings. The person and their administrators.",
    input: Type.Object({
      PersonId: Id(),
      Account: AccountNumber(),
      StrategyId: Type.Optional(Id({ description: "Only this strategy's setup" })),
    }),
    result: AutotradeSyncStatusReportRecord,
    permission: anyCaller,
    paginated: false,
    preSerialized: true,
    // The nested settings as GetAutotradeSettings answers them on each server (the handler leaves it out on WL).
    fieldServers: { "AutotradeSettings.BrokerAuthorizationStatus": ["GEN", "GEO"] },
    example: { PersonId: EXAMPLE.customerId, Account: EXAMPLE.autotradeAccount, StrategyId: EXAMPLE.strategyId },
    handler: async (ctx, input) => {
      const rows = await syncStatusReport(ctx, input.PersonId, input.Account, input.StrategyId);
      // Each setup's settings are serialized once, however many rows it has.
      const settings = new Map<number, RawJson>();
      const settingsJson = (setup: SetupView) => {
        let json = settings.get(setup.id);
        if (!json) {
          json = rawJson(settingsOnServer(setup, ctx.server));
          settings.set(setup.id, json);
        }
        return json;
      };
      return rows.map((row) => reportRecordOf(row, settingsJson(row.setup)));
    },
  }),
  defineOperation({
    id: "SyncPositionsToOpen",
    method: "POST",
    path: "/Autotrade/SyncPositionsToOpen",
    servers: ["GEN"],
    summary:
      "Syncs the account to each strategy's scaled positions: now in the markets open now, at the next open in the markets closed now (WillSyncToOpen does not matter: this is asked for). One result per strategy, with a ReasonCode saying what was done or why not (not autotraded, stop requested, autotrade or AutoSync disabled, account delinked, busy). The person and their administrators.",
    input: Type.Object({
      Account: AccountNumber(),
      PersonId: Id(),
      BrokerId: BrokerId(),
      StrategyIds: Type.Array(Id(), { minItems: 1, maxItems: 100 }),
    }),
    result: SyncPositionsToOpenRecord,
    permission: anyCaller,
    paginated: false,
    example: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: EXAMPLE.customerId,
      BrokerId: EXAMPLE.brokerId,
      StrategyIds: [EXAMPLE.strategyId],
    },
    handler: async (ctx, input) =>
      (
        await syncPositionsToOpen(ctx, {
          personId: input.PersonId,
          account: input.Account,
          brokerId: input.BrokerId,
          strategyIds: input.StrategyIds,
        })
      ).map((result) => ({
        StrategyId: result.strategyId,
        Success: result.success,
        Reason: result.reason,
        ReasonCode: result.reasonCode,
      })),
  }),
];

/** The setup's AutotradeSettings as GetAutotradeSettings answers it on this server (BrokerAuthorizationStatus off WL). */
function settingsOnServer(setup: SetupView, server: V4Server) {
  const settings: Partial<ReturnType<typeof settingsOf>> = settingsOf(setup);
  if (server === "WL") delete settings.BrokerAuthorizationStatus;
  return settings;
}

function reportRecordOf(row: SyncReportRow, settings: RawJson) {
  const { setup } = row;
  return {
    Id: setup.id,
    ReportType: row.reportType,
    PersonId: setup.person_id,
    Account: setup.account_number,
    StrategyId: setup.strategy_id,
    SignalId: row.signal?.id ?? null,
    StrategyName: setup.strategy_name,
    BrokerName: setup.broker_name,
    AccountQuantity: toNumber(row.accountQuantity),
    StrategyQuantity: toNumber(row.strategyQuantity),
    ScaledQuantity: row.scaledQuantity === null ? null : toNumber(row.scaledQuantity),
    SignalType: row.signal?.signalType ?? null,
    InSync: row.inSync,
    NotInSyncReason: row.notInSyncReason,
    ServiceSymbol: serviceSymbolOf(row.instrument),
    ExchangeSymbol: exchangeSymbolOf(row.instrument),
    AutotradeSettings: settings,
  };
}
