import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { SYNC_MARKETS, settingsOfText } from "../../../core/autotrade/settings.js";
import { type ErrorEntry, refuse } from "../../../core/errors.js";
import { startAutotrade, stopAutotrade, stopWhiteLabelAutotrade } from "../../../services/autotrade-control.js";
import {
  autotradedStrategies,
  autotraders,
  autotradeSettings,
  brokers,
  type SetupView,
} from "../../../services/autotrade-reads.js";
import { setAutotradeSettings } from "../../../services/autotrade-settings.js";
import { AutotradedStrategyRecord, AutotradeSettingsRecord, BrokerRecord } from "../autotrade-records.js";
import { SETTINGS_FIELDS, settingsChangeOf, syncToOpenOf } from "../autotrade-settings-input.js";
import { START_AUTOTRADE_FIELDS } from "../autotrade-start-input.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { readDecimal } from "../orders-wire.js";
import { Id } from "../schemas.js";

/** Autotrade setups under /Autotrade (API.md 4.2, 4.3): brokers, settings, starting and stopping. */

const INT32_MAX = 2_147_483_647;
export const BrokerId = (description?: string) => Type.Integer({ minimum: 1, maximum: INT32_MAX, description });
export const AccountNumber = (description?: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const autotradeSetupOperations = [
  defineOperation({
    id: "GetBrokers",
    method: "GET",
    path: "/Autotrade/GetBrokers",
    servers: ["WL", "GEN", "GEO"],
    summary: "The brokers the service autotrades through, enabled ones only unless IncludeDisabled.",
    input: Type.Object({
      IncludeDisabled: Type.Optional(Type.Boolean({ description: "false (default): enabled brokers only" })),
    }),
    result: BrokerRecord,
    permission: anyCaller,
    paginated: false,
    example: { IncludeDisabled: true },
    handler: async (ctx, input) =>
      (await brokers(ctx, input.IncludeDisabled ?? false)).map((row) => ({
        Id: row.id,
        Name: row.name,
        IsEnabled: row.is_enabled === 1,
        ConnectionName: row.connection_name,
      })),
  }),
  defineOperation({
    id: "StartAutotrade",
    method: "POST",
    path: "/Autotrade/StartAutotrade",
    servers: ["GEN", "GEO"],
    summary:
      "Starts autotrading the strategy in the person's brokerage account, or modifies the live setup (DoNotJoinOpenPositions only on a new one). The person must follow the strategy with a live subscription or own it. The person and their administrators. Answers a bare true.",
    input: Type.Object(START_AUTOTRADE_FIELDS),
    result: Type.Boolean(),
    permission: anyCaller,
    paginated: false,
    bareBooleanOn: ["GEN", "GEO"],
    example: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: EXAMPLE.customerId,
      StrategyId: EXAMPLE.strategyId,
      BrokerId: EXAMPLE.brokerId,
      ScalingPercentage: 50,
      EnableStocks: true,
      MaxStocksDollars: 20_000,
    },
    handler: async (ctx, input) => {
      const errors: ErrorEntry[] = [];
      const scalingPercentage = readDecimal(input.ScalingPercentage, "ScalingPercentage", errors);
      const first = errors[0];
      if (first) throw refuse(first.name, first);
      await startAutotrade(ctx, {
        ...input,
        personId: input.PersonId,
        account: input.Account,
        brokerId: input.BrokerId,
        strategyId: input.StrategyId,
        scalingPercentage,
        // "Set" is true: clients that always send false may modify a setup.
        doNotJoinOpenPositions: input.DoNotJoinOpenPositions === true ? true : undefined,
        siteId: null,
      });
      return [true];
    },
  }),
  defineOperation({
    id: "GetAutotradeSettings",
    method: "GET",
    path: "/Autotrade/GetAutotradeSettings",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "The person's live autotrade setups (of one account if named) with every setting, oldest first; a stop requested and not yet applied shows as disabled with the reason Stop requested. The person and their administrators.",
    input: Type.Object({ PersonId: Id(), Account: Type.Optional(AccountNumber()) }),
    result: AutotradeSettingsRecord,
    permission: anyCaller,
    paginated: false,
    fieldServers: { BrokerAuthorizationStatus: ["GEN", "GEO"] },
    example: { PersonId: EXAMPLE.customerId, Account: EXAMPLE.autotradeAccount },
    handler: async (ctx, input) => (await autotradeSettings(ctx, input.PersonId, input.Account)).map(settingsOf),
  }),
  defineOperation({
    id: "SetAutotradeSettings",
    method: "PUT",
    path: "/Autotrade/SetAutotradeSettings",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Sets the enablement flags, and the follower's settings given, of the live setups of the person's account (every account when none is named; BrokerId and StrategyId narrow), in one transaction. Enabling clears the disabled reason. PersonId defaults to the caller. The settings beside the spec's flags are additions, named as AutotradeSettings names them; what StartAutotrade sets (classes, maxima, scaling) changes only by a start. The person and their administrators.",
    input: Type.Object({
      Account: Type.Optional(AccountNumber()),
      PersonId: Type.Optional(Id({ description: "Default: the caller" })),
      BrokerId: Type.Optional(BrokerId()),
      StrategyId: Type.Optional(Id({ description: "An addition to the spec's body: only the setup following it" })),
      IsAutotradeEnabled: Type.Optional(Type.Boolean()),
      IsAutoSyncEnabled: Type.Optional(Type.Boolean()),
      IsConfirmationNeeded: Type.Optional(
        Type.Boolean({
          description:
            "An addition to the spec's body: true holds each copy until the customer confirms it on the page whose address their notice gives",
        }),
      ),
      ...SETTINGS_FIELDS,
    }),
    result: Type.Boolean(),
    permission: anyCaller,
    paginated: false,
    example: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: EXAMPLE.customerId,
      BrokerId: EXAMPLE.brokerId,
      IsAutotradeEnabled: true,
      IsAutoSyncEnabled: true,
    },
    handler: async (ctx, input) => {
      await setAutotradeSettings(ctx, {
        personId: input.PersonId ?? Number(ctx.caller.personId),
        account: input.Account,
        brokerId: input.BrokerId,
        strategyId: input.StrategyId,
        autotradeEnabled: input.IsAutotradeEnabled,
        syncEnabled: input.IsAutoSyncEnabled,
        confirmationNeeded: input.IsConfirmationNeeded,
        settings: settingsChangeOf(input),
        syncToOpen: syncToOpenOf(input),
      });
      return [true];
    },
  }),
  defineOperation({
    id: "GetAutotradedStrategies",
    method: "GET",
    path: "/Autotrade/GetAutotradedStrategies",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "The strategies the person autotrades (live setups, of one account if named), oldest first. The person and their administrators.",
    input: Type.Object({ PersonId: Id(), Account: Type.Optional(AccountNumber()) }),
    result: AutotradedStrategyRecord,
    permission: anyCaller,
    paginated: true,
    example: { PersonId: EXAMPLE.customerId },
    handler: async (ctx, input, page) => {
      const result = await autotradedStrategies(ctx, input.PersonId, input.Account, page);
      return { ...result, items: result.items.map(autotradedStrategyOf) };
    },
  }),
  defineOperation({
    id: "GetAutotraders",
    method: "GET",
    path: "/Autotrade/GetAutotraders",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Live autotrade setups matching every filter, oldest first: a strategy owner sees those on own strategies, a white-label administrator also its site's customers', a geo-site administrator its members', service admins all.",
    input: Type.Object({
      StrategyId: Type.Optional(Id()),
      BrokerId: Type.Optional(BrokerId()),
      WhiteLabelSiteId: Type.Optional(Id({ description: "Only customers of this site" })),
    }),
    result: AutotradedStrategyRecord,
    permission: anyCaller,
    paginated: true,
    example: { StrategyId: EXAMPLE.strategyId },
    handler: async (ctx, input, page) => {
      const result = await autotraders(
        ctx,
        { strategyId: input.StrategyId, brokerId: input.BrokerId, whiteLabelSiteId: input.WhiteLabelSiteId },
        page,
      );
      return { ...result, items: result.items.map(autotradedStrategyOf) };
    },
  }),
  defineOperation({
    id: "StopAutotrade",
    method: "DELETE",
    path: "/Autotrade/StopAutotrade",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Requests a stop of the setup: answered at once, applied when the copier next works the account (shown as Stop requested until then); repeating it is safe. On WL positions are always left open, pending approval requests are retired and the customer is notified. The person and their administrators. Answers a bare true.",
    input: Type.Object({
      Account: AccountNumber(),
      PersonId: Id(),
      StrategyId: Id(),
      BrokerId: Type.Optional(BrokerId("Required on GEN")),
      LeavePositionsOpen: Type.Optional(Type.Boolean({ description: "Default false; WL always leaves them open" })),
      TerminateStrategySubscription: Type.Optional(
        Type.Boolean({ description: "Default false: true also ends the strategy subscription when the stop applies" }),
      ),
    }),
    inputOn: {
      GEN: Type.Object({
        Account: AccountNumber(),
        PersonId: Id(),
        StrategyId: Id(),
        BrokerId: BrokerId(),
        LeavePositionsOpen: Type.Optional(Type.Boolean({ description: "Default false" })),
        TerminateStrategySubscription: Type.Optional(
          Type.Boolean({
            description: "Default false: true also ends the strategy subscription when the stop applies",
          }),
        ),
      }),
    },
    result: Type.Boolean(),
    permission: anyCaller,
    paginated: false,
    bareBooleanOn: ["WL", "GEN", "GEO"],
    example: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: EXAMPLE.customerId,
      StrategyId: EXAMPLE.strategyId,
      BrokerId: EXAMPLE.brokerId,
      LeavePositionsOpen: true,
    },
    handler: async (ctx, input) => {
      const stop = {
        personId: input.PersonId,
        account: input.Account,
        strategyId: input.StrategyId,
        brokerId: input.BrokerId ?? null,
        leavePositionsOpen: input.LeavePositionsOpen ?? false,
        terminateSubscription: input.TerminateStrategySubscription ?? false,
      };
      if (ctx.server === "WL") await stopWhiteLabelAutotrade(ctx, stop);
      else await stopAutotrade(ctx, stop);
      return [true];
    },
  }),
];

const dateOrNull = (ms: number | null) => (ms === null ? null : new Date(ms));

function autotradedStrategyOf(row: SetupView) {
  return {
    Id: row.id,
    PersonId: row.person_id,
    Account: row.account_number,
    ScalingPercentage: Number(row.scaling_percentage),
    StrategyId: row.strategy_id,
    StrategyName: row.strategy_name,
    BrokerId: row.broker_id,
    BrokerName: row.broker_name,
    StartDate: new Date(row.started_at),
    LastModified: new Date(row.updated_at),
  };
}

/** The reason a setup shows while its stop is requested and not yet applied (API.md States). */
export const STOP_REQUESTED = "Stop requested";

/** A setup's AutotradeSettings record (GetAutotradeSettings; nested in each sync report row). */
export function settingsOf(row: SetupView) {
  const settings = settingsOfText(row.settings);
  const willSync = JSON.parse(row.sync_to_open) as Record<string, boolean | undefined>;
  const lastSync = JSON.parse(row.last_sync) as Record<string, number | null | undefined>;
  const stopRequested = row.status === "stop_requested";
  return {
    Id: row.id,
    PersonId: row.person_id,
    FirstName: row.first_name,
    LastName: row.last_name,
    Email: row.email,
    Country: row.country_code,
    State: row.division_code,
    Language: row.language,
    SiteDomain: row.site_domain,
    BrokerId: row.broker_id,
    Connection: row.connection_name,
    IntroducingBrokerId: null,
    IntroducingBroker: null,
    StrategyId: row.strategy_id,
    StrategyName: row.strategy_name,
    Account: row.account_number,
    AccountType: row.account_type,
    BrokerUserID: settings.brokerUsername ?? row.broker_username,
    Currency: row.currency,
    SalesRepId: null,
    SalesRep: null,
    IsTradeLeader: settings.isTradeLeader,
    IsManualDiscardedPosition: settings.isManualDiscardedPosition,
    IgnoreManualOrders: settings.ignoreManualOrders,
    IsConfirmationNeeded: row.is_confirmation_needed === 1,
    IsSyncEnabled: row.is_sync_enabled === 1,
    IsBrokerEnabled: row.broker_is_enabled === 1 && row.is_linked === 1,
    IsAutotradeDisabled: row.is_autotrade_enabled !== 1 || stopRequested,
    VirtualLimitOrdersEnabled: settings.virtualLimitOrders,
    Approved: row.approved === 1 && row.account_approved === 1,
    ClosingOrdersOnly: settings.closingOrdersOnly,
    ...Object.fromEntries(SYNC_MARKETS.map((market) => [`WillSyncToOpen${market}`, willSync[market] === true])),
    ...Object.fromEntries(SYNC_MARKETS.map((market) => [`LastSync${market}`, dateOrNull(lastSync[market] ?? null)])),
    IsAutotradeDisabledReason: stopRequested ? STOP_REQUESTED : row.autotrade_disabled_reason,
    SyncDisabledReason: row.sync_disabled_reason,
    BrokerAuthorizationStatus: row.is_linked === 1 ? "Authorized" : "Delinked",
    FirstBrokerActivationDate: dateOrNull(row.first_activation_at),
    NetLiquidationValue: row.net_liquidation === null ? null : Number(row.net_liquidation),
    NetLiquidationValueDate: dateOrNull(row.net_liquidation_at),
    ScalingPercentage: Number(row.scaling_percentage),
    SettingsLastUpdateUTC: new Date(row.updated_at),
    EnabledFutures: settings.futures.enabled,
    FuturesLong: settings.futures.long,
    FuturesShort: settings.futures.short,
    MinFutures: settings.futures.min,
    MaxFutures: settings.futures.max,
    EnabledForex: settings.forex.enabled,
    ForexEnabledLong: settings.forex.long,
    ForexEnabledShort: settings.forex.short,
    ForexLotSize: settings.forex.lotSize,
    MinForex: settings.forex.min,
    MaxForex: settings.forex.max,
    EnabledStocks: settings.stocks.enabled,
    StocksLong: settings.stocks.long,
    StocksShort: settings.stocks.short,
    TradeStocksAsCFD: settings.stocks.asCfd,
    MaxStocksDollars: settings.stocks.maxDollars,
    EnabledOptions: settings.options.enabled,
    OptionsLong: settings.options.long,
    OptionsShort: settings.options.short,
    MinOptions: settings.options.min,
    MaxOptions: settings.options.max,
  };
}
