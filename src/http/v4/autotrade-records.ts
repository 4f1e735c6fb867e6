import { Type } from "@sinclair/typebox";
import { SYNC_MARKETS } from "../../core/autotrade/settings.js";
import { DateTime, Nullable } from "./schemas.js";

/** Result records of the v4 autotrade setup operations, named and shaped as in API.md "Records (v4)". */

export const BrokerRecord = Type.Object(
  {
    Id: Type.Integer(),
    Name: Type.String(),
    IsEnabled: Type.Boolean(),
    ConnectionName: Type.String(),
  },
  { title: "Broker" },
);

export const AutotradedStrategyRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The autotrade setup" }),
    PersonId: Type.Integer(),
    Account: Type.String(),
    ScalingPercentage: Type.Number(),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    BrokerId: Type.Integer(),
    BrokerName: Type.String(),
    StartDate: DateTime(),
    LastModified: DateTime(),
  },
  { title: "AutotradedStrategy" },
);

export const NullableText = (description?: string) => Nullable(Type.String(description ? { description } : {}));
export const NullableNumber = (description?: string) => Nullable(Type.Number(description ? { description } : {}));

export const AutotradeSettingsRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The autotrade setup" }),
    PersonId: Type.Integer(),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    Country: NullableText(),
    State: NullableText(),
    Language: NullableText(),
    SiteDomain: NullableText("The domain of the person's white-label site (else geo-site)"),
    BrokerId: Type.Integer(),
    Connection: Type.String(),
    IntroducingBrokerId: Nullable(
      Type.Integer({ description: "Always null: the service keeps no introducing brokers" }),
    ),
    IntroducingBroker: NullableText("Always null"),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    Account: Type.String(),
    AccountType: Type.Integer({ description: "1 live, 2 paper" }),
    BrokerUserID: NullableText(),
    Currency: Type.String(),
    SalesRepId: Nullable(Type.Integer({ description: "Always null: the service keeps no sales representatives" })),
    SalesRep: NullableText("Always null"),
    IsTradeLeader: Type.Boolean(),
    IsManualDiscardedPosition: Type.Boolean(),
    IgnoreManualOrders: Type.Boolean(),
    IsConfirmationNeeded: Type.Boolean(),
    IsSyncEnabled: Type.Boolean(),
    IsBrokerEnabled: Type.Boolean({ description: "The broker is enabled and has the account linked" }),
    IsAutotradeDisabled: Type.Boolean({ description: "Disabled, or a stop requested and not yet applied" }),
    VirtualLimitOrdersEnabled: Type.Boolean(),
    Approved: Type.Boolean(),
    ClosingOrdersOnly: Type.Boolean(),
    ...Object.fromEntries(SYNC_MARKETS.map((market) => [`WillSyncToOpen${market}`, Type.Boolean()])),
    ...Object.fromEntries(SYNC_MARKETS.map((market) => [`LastSync${market}`, Nullable(DateTime())])),
    IsAutotradeDisabledReason: NullableText('Why autotrade is disabled; "Stop requested" until a stop is applied'),
    SyncDisabledReason: NullableText(),
    BrokerAuthorizationStatus: Type.Optional(
      Type.String({ description: "GEN and GEO: Authorized, or Delinked when the broker delinked the account" }),
    ),
    FirstBrokerActivationDate: Nullable(DateTime()),
    NetLiquidationValue: NullableNumber(),
    NetLiquidationValueDate: Nullable(DateTime()),
    ScalingPercentage: Type.Number(),
    SettingsLastUpdateUTC: DateTime(),
    EnabledFutures: Type.Boolean(),
    FuturesLong: Type.Boolean(),
    FuturesShort: Type.Boolean(),
    MinFutures: Type.Number(),
    MaxFutures: NullableNumber("Contracts per position; null: no maximum"),
    EnabledForex: Type.Boolean(),
    ForexEnabledLong: Type.Boolean(),
    ForexEnabledShort: Type.Boolean(),
    ForexLotSize: Type.Number(),
    MinForex: Type.Number(),
    MaxForex: NullableNumber("Units of 1,000 currency units per position; null: no maximum"),
    EnabledStocks: Type.Boolean(),
    StocksLong: Type.Boolean(),
    StocksShort: Type.Boolean(),
    TradeStocksAsCFD: Type.Boolean(),
    MaxStocksDollars: NullableNumber("Whole dollars per position; null: no maximum"),
    EnabledOptions: Type.Boolean(),
    OptionsLong: Type.Boolean(),
    OptionsShort: Type.Boolean(),
    MinOptions: Type.Number(),
    MaxOptions: NullableNumber("Contracts per position; null: no maximum"),
  },
  { title: "AutotradeSettings" },
);
