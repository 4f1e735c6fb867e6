import { Type } from "@sinclair/typebox";
import { anyCaller, onlyRoles } from "../../../core/access.js";
import { SECURITY_TYPE_CODES, type SecurityTypeCode } from "../../../core/autotrade/stats.js";
import { LIMITS } from "../../../core/profile.js";
import { searchAccounts } from "../../../services/account-search.js";
import { autotradeStats, MAX_STATS_ROWS, type StatsRow } from "../../../services/autotrade-stats.js";
import { searchAutotradedAccounts } from "../../../services/autotraded-accounts.js";
import { type PendingView, pendingAccounts } from "../../../services/pending-accounts.js";
import {
  AccountRecord,
  AutotradedAccountRecord,
  AutotradeStatsRecord,
  PendingAccountRecord,
} from "../autotrade-admin-records.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { DateTime, Id } from "../schemas.js";
import { AccountNumber, BrokerId, STOP_REQUESTED } from "./autotrade-setups.js";

/**
 * Autotrade administration under /Autotrade (API.md 4.2, issue 14):
 * searching brokerage accounts and autotraded accounts, the accounts' daily
 * statistics, and the accounts waiting for an autotrade approval.
 */

const siteAdministrators = onlyRoles("admin", "whitelabel-admin", "geo-admin");
const text = (max: number, description?: string) =>
  Type.Optional(Type.String({ maxLength: max, ...(description ? { description } : {}) }));
const SecurityType = Type.Optional(
  Type.Union(
    SECURITY_TYPE_CODES.map((code) => Type.Literal(code)),
    { description: "CS stocks, FUT futures, OPT options, FOR forex: accounts autotrading that class" },
  ),
);
const date = (ms: number | null) => (ms === null ? null : new Date(ms));
const amount = (text: string | null) => (text === null ? null : Number(text));
const toDate = (text: string | undefined) => (text === undefined ? undefined : new Date(text));

export const autotradeAdminOperations = [
  defineOperation({
    id: "SearchAccounts",
    method: "GET",
    path: "/Autotrade/SearchAccounts",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Brokerage accounts matching every given filter (text filters match any part, without regard to case), oldest first: the caller's own, a white-label administrator's site's customers', a geo-site administrator's members', every one for service admins.",
    input: Type.Object({
      Account: Type.Optional(AccountNumber("Any part of the account number")),
      PersonId: Type.Optional(Id()),
      BrokerId: Type.Optional(BrokerId()),
      FirstName: text(LIMITS.name.max),
      LastName: text(LIMITS.name.max),
      Email: text(LIMITS.email),
      WhiteLabelSiteId: Type.Optional(Id()),
      CountryCode: text(2),
      IPAddress: text(45, "Any part of the holder's last address"),
      Phone: text(16, "Matches verified numbers only"),
    }),
    result: AccountRecord,
    permission: anyCaller,
    paginated: true,
    example: { LastName: "ortiz", WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input, page) => {
      const result = await searchAccounts(
        ctx,
        {
          account: input.Account,
          personId: input.PersonId,
          brokerId: input.BrokerId,
          firstName: input.FirstName,
          lastName: input.LastName,
          email: input.Email,
          whiteLabelSiteId: input.WhiteLabelSiteId,
          countryCode: input.CountryCode,
          ipAddress: input.IPAddress,
          phone: input.Phone,
        },
        page,
      );
      return {
        ...result,
        items: result.items.map((row) => ({
          Id: row.account_id,
          PersonId: row.person_id,
          Account: row.account_number,
          BrokerName: row.broker_name,
          BrokerId: row.broker_id,
          FirstName: row.first_name,
          LastName: row.last_name,
          Email: row.email,
          Language: row.language,
          WhiteLabelSiteId: row.white_label_site_id,
          GeoSite: row.geo_name,
          CountryCode: row.country_code,
          DivisionCode: row.division_code,
          AuthenticatedDate: new Date(row.created_at),
        })),
      };
    },
  }),
  defineOperation({
    id: "SearchAutotradedAccounts",
    method: "GET",
    path: "/Autotrade/SearchAutotradedAccounts",
    servers: ["WL", "GEO"],
    summary:
      "Live autotrade setups matching every filter, oldest first; at least one filter. Seen as GetAutotraders sees them: a strategy owner those on own strategies, a white-label administrator also its site's customers', a geo-site administrator its members', service admins all.",
    input: Type.Object({
      StrategyId: Type.Optional(Id()),
      BrokerId: Type.Optional(BrokerId()),
      AutoSyncEnabled: Type.Optional(Type.Boolean()),
      AutoTradeEnabled: Type.Optional(Type.Boolean({ description: "Enabled, no stop requested" })),
      AutoTradingNow: Type.Optional(Type.Boolean({ description: "IsAutotrading: the copier copies into it now" })),
      StartDate: Type.Optional(DateTime({ description: "Setups started at or after (UTC)" })),
      EndDate: Type.Optional(DateTime({ description: "Setups started before (UTC, exclusive)" })),
    }),
    result: AutotradedAccountRecord,
    permission: anyCaller,
    paginated: true,
    example: { StrategyId: EXAMPLE.strategyId, AutoTradingNow: true },
    handler: async (ctx, input, page) => {
      const result = await searchAutotradedAccounts(
        ctx,
        {
          strategyId: input.StrategyId,
          brokerId: input.BrokerId,
          autoSyncEnabled: input.AutoSyncEnabled,
          autoTradeEnabled: input.AutoTradeEnabled,
          autoTradingNow: input.AutoTradingNow,
          startDate: toDate(input.StartDate),
          endDate: toDate(input.EndDate),
        },
        page,
      );
      return {
        ...result,
        items: result.items.map((row) => {
          const stopRequested = row.status === "stop_requested";
          return {
            Id: row.id,
            PersonId: row.person_id,
            Account: row.account_number,
            BrokerId: row.broker_id,
            FirstName: row.first_name,
            LastName: row.last_name,
            Email: row.email,
            StrategyId: row.strategy_id,
            StrategyName: row.strategy_name,
            IsSyncEnabled: row.is_sync_enabled === 1,
            IsAutotrading: row.autotrading_now === 1,
            IsAutotradeDisabled: row.is_autotrade_enabled !== 1 || stopRequested,
            IsAutotradeDisabledReason: stopRequested ? STOP_REQUESTED : row.autotrade_disabled_reason,
            SyncDisabledReason: row.sync_disabled_reason,
            SettingsLastUpdateUTC: new Date(row.updated_at),
          };
        }),
      };
    },
  }),
  defineOperation({
    id: "GetAutotradeStats",
    method: "GET",
    path: "/Autotrade/GetAutotradeStats",
    servers: ["WL", "GEO"],
    summary: `Daily autotrade snapshots of the accounts of the caller's site (white-label administrators their customers', geo-site administrators their members', service admins every account), oldest day first; without StartDate and EndDate the latest day's. At most ${MAX_STATS_ROWS} snapshots: a larger answer is refused, narrow the window or filter.`,
    input: Type.Object({
      WhiteLabelSiteId: Type.Optional(Id()),
      GeoSite: text(253, "The geo-site's name or domain"),
      BrokerId: Type.Optional(BrokerId()),
      SecurityType,
      Disabled: Type.Optional(Type.Boolean({ description: "IsDisabled" })),
      AutoSync: Type.Optional(Type.Boolean({ description: "IsSyncEnabled" })),
      ManualConfirmation: Type.Optional(Type.Boolean({ description: "IsManualConfirmationEnabled" })),
      BrokerEnabled: Type.Optional(Type.Boolean({ description: "IsBrokerEnabled" })),
      StartDate: Type.Optional(DateTime({ description: "Days (DateUtc) from this instant on" })),
      EndDate: Type.Optional(DateTime({ description: "Days (DateUtc) before this instant" })),
    }),
    result: AutotradeStatsRecord,
    permission: siteAdministrators,
    paginated: false,
    // A day of 10,000 accounts is 10,000 entries: written field by field, dates as text already.
    preSerialized: true,
    example: { WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId, SecurityType: "CS" },
    handler: async (ctx, input) =>
      (
        await autotradeStats(ctx, {
          whiteLabelSiteId: input.WhiteLabelSiteId,
          geoSite: input.GeoSite,
          brokerId: input.BrokerId,
          securityType: input.SecurityType as SecurityTypeCode | undefined,
          disabled: input.Disabled,
          autoSync: input.AutoSync,
          manualConfirmation: input.ManualConfirmation,
          brokerEnabled: input.BrokerEnabled,
          startDate: toDate(input.StartDate),
          endDate: toDate(input.EndDate),
        })
      ).map(statsRecord),
  }),
  defineOperation({
    id: "GetPendingAccounts",
    method: "GET",
    path: "/Autotrade/GetPendingAccounts",
    servers: ["WL", "GEO"],
    summary:
      "Live accounts waiting for an autotrade approval, oldest first: on WL the white-label approval requests not yet final, on GEO the setups of accounts whose geo-site requires approval and has not given it. Each caller sees the people it administers.",
    input: Type.Object({
      WhiteLabelSiteId: Type.Optional(Id()),
      GeoSite: text(253, "The geo-site's name or domain"),
      BrokerId: Type.Optional(BrokerId()),
      SecurityType,
    }),
    result: PendingAccountRecord,
    permission: siteAdministrators,
    paginated: false,
    example: { BrokerId: EXAMPLE.brokerId },
    handler: async (ctx, input) =>
      (
        await pendingAccounts(ctx, ctx.server === "GEO" ? "GEO" : "WL", {
          whiteLabelSiteId: input.WhiteLabelSiteId,
          geoSite: input.GeoSite,
          brokerId: input.BrokerId,
          securityType: input.SecurityType as SecurityTypeCode | undefined,
        })
      ).map(pendingRecord),
  }),
];

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The service autotrades only: it neither transmits to brokers nor to platforms. */
const NOT_TRANSMITTED = Object.fromEntries(
  ["Brokertransmit", "Platformtransmit"].flatMap((kind) =>
    ["Stocks", "Futures", "Options", "Forex", "Crypto"].map((cls) => [`${kind}${cls}Strategies`, 0]),
  ),
);

function statsRecord(row: StatsRow) {
  return {
    Id: row.id,
    DateUtc: iso(row.day_at),
    Account: row.account_number,
    PersonId: row.person_id,
    BrokerId: row.broker_id,
    IB: null,
    SalesRep: null,
    WhiteLabelSiteId: row.white_label_site_id,
    GeoSiteId: row.geo_site_id,
    NetLiquidationValue: amount(row.net_liquidation),
    LastBrokerNetLiquidationUpdateUtc: iso(row.net_liquidation_at),
    FirstBrokerActivationDateUTC: iso(row.first_activation_at),
    AutotradedStocksStrategies: row.autotraded_stocks,
    AutotradedFuturesStrategies: row.autotraded_futures,
    AutotradedOptionsStrategies: row.autotraded_options,
    AutotradedForexStrategies: row.autotraded_forex,
    AutotradedCryptoStrategies: row.autotraded_crypto,
    ...NOT_TRANSMITTED,
    UniqueAutotradedStrategies: row.autotraded_unique,
    UniqueBrokertransmitStrategies: 0,
    UniquePlatformtransmitStrategies: 0,
    IsSyncEnabled: row.is_sync_enabled === 1,
    IsManualConfirmationEnabled: row.is_manual_confirmation === 1,
    IsDisabled: row.is_disabled === 1,
    Currency: row.currency,
    Email: row.email,
    FirstName: row.first_name,
    LastName: row.last_name,
    IsBrokerEnabled: row.is_broker_enabled === 1,
  };
}

function pendingRecord(view: PendingView) {
  return {
    Id: view.id,
    Status: view.status,
    DeclinedUTC: date(view.declinedAt),
    UtcDate: new Date(view.since),
    Account: view.account,
    PersonId: view.personId,
    BrokerName: view.brokerName,
    BrokerId: view.brokerId,
    FirstName: view.firstName,
    LastName: view.lastName,
    Email: view.email,
    Country: view.country,
    State: view.state,
    Language: view.language,
    WhiteLabelSiteId: view.whiteLabelSiteId,
    GeoSiteId: view.geoSiteId,
    SiteDomain: view.siteDomain,
    Connection: view.connection,
    IntroducingBrokerId: null,
    IntroducingBroker: null,
    StrategyId: view.strategyId,
    StrategyName: view.strategyName,
    SalesRepId: null,
    SalesRep: null,
    IsTradeLeader: view.settings.isTradeLeader,
    FirstBrokerActivationDate: date(view.firstActivationAt),
    NetLiquidationValue: amount(view.netLiquidation),
    NetLiquidationValueDate: date(view.netLiquidationAt),
    EnabledFutures: view.settings.futures.enabled,
    EnabledForex: view.settings.forex.enabled,
    EnabledStocks: view.settings.stocks.enabled,
    EnabledOptions: view.settings.options.enabled,
  };
}
