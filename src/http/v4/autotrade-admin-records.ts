import { Type } from "@sinclair/typebox";
import { NullableNumber, NullableText } from "./autotrade-records.js";
import { DateTime, Nullable } from "./schemas.js";

/** Result records of the autotrade administration operations (issue 14), named and shaped as in API.md "Records (v4)". */

const AlwaysNull = (what: string) =>
  Nullable(Type.Integer({ description: `Always null: the service keeps no ${what}` }));

export const AccountRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The brokerage account" }),
    PersonId: Type.Integer(),
    Account: Type.String(),
    BrokerName: Type.String(),
    BrokerId: Type.Integer(),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    Language: NullableText(),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    GeoSite: NullableText("The name of the holder's geo-site"),
    CountryCode: NullableText(),
    DivisionCode: NullableText(),
    AuthenticatedDate: DateTime({ description: "When the account was linked at the service" }),
  },
  { title: "Account" },
);

export const AutotradedAccountRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The autotrade setup" }),
    PersonId: Type.Integer(),
    Account: Type.String(),
    BrokerId: Type.Integer(),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    IsSyncEnabled: Type.Boolean(),
    IsAutotrading: Type.Boolean({
      description:
        "The copier copies into the account now: enabled, no stop requested, linked, the broker enabled, approved where the geo-site requires it",
    }),
    IsAutotradeDisabled: Type.Boolean({ description: "Disabled, or a stop requested and not yet applied" }),
    IsAutotradeDisabledReason: NullableText(),
    SyncDisabledReason: NullableText(),
    SettingsLastUpdateUTC: DateTime(),
  },
  { title: "AutotradedAccount" },
);

const KINDS = ["Autotraded", "Brokertransmit", "Platformtransmit"] as const;
const CLASSES = ["Stocks", "Futures", "Options", "Forex", "Crypto"] as const;

export const AutotradeStatsRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The snapshot" }),
    DateUtc: DateTime({ description: "The UTC day of the snapshot (its midnight)" }),
    Account: Type.String(),
    PersonId: Type.Integer(),
    BrokerId: Type.Integer(),
    IB: AlwaysNull("introducing brokers"),
    SalesRep: AlwaysNull("sales representatives"),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    GeoSiteId: Nullable(Type.Integer()),
    NetLiquidationValue: NullableNumber(),
    LastBrokerNetLiquidationUpdateUtc: Nullable(DateTime()),
    FirstBrokerActivationDateUTC: Nullable(DateTime()),
    ...Object.fromEntries(
      KINDS.flatMap((kind) =>
        CLASSES.map((cls) => [
          `${kind}${cls}Strategies`,
          Type.Integer({
            description:
              kind === "Autotraded"
                ? `Active setups of the account trading ${cls.toLowerCase()}${cls === "Crypto" ? " (always 0: no crypto instruments)" : ""}`
                : "Always 0: the service autotrades only (no broker or platform transmit)",
          }),
        ]),
      ),
    ),
    UniqueAutotradedStrategies: Type.Integer({ description: "Strategies the account autotrades (active setups)" }),
    UniqueBrokertransmitStrategies: Type.Integer({ description: "Always 0" }),
    UniquePlatformtransmitStrategies: Type.Integer({ description: "Always 0" }),
    IsSyncEnabled: Type.Boolean(),
    IsManualConfirmationEnabled: Type.Boolean(),
    IsDisabled: Type.Boolean({ description: "No active setup of the account has autotrade enabled" }),
    Currency: Type.String(),
    Email: Type.String(),
    FirstName: Type.String(),
    LastName: Type.String(),
    IsBrokerEnabled: Type.Boolean({ description: "The broker is enabled and has the account linked" }),
  },
  { title: "AutotradeStats" },
);

export const PendingAccountRecord = Type.Object(
  {
    Id: Type.Integer({ description: "WL: the approval request; GEO: the autotrade setup" }),
    Status: Type.String({
      description:
        "WL: the approval request's status (PendingCustomer, Processing, PendingBroker); GEO: PendingApproval, or Declined when the geo-site deleted the account's approval",
    }),
    DeclinedUTC: Nullable(DateTime({ description: "GEO: when the approval was deleted" })),
    UtcDate: DateTime({ description: "Since when it waits" }),
    Account: Type.String(),
    PersonId: Type.Integer(),
    BrokerName: Type.String(),
    BrokerId: Type.Integer(),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    Country: NullableText(),
    State: NullableText(),
    Language: NullableText(),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    GeoSiteId: Nullable(Type.Integer()),
    SiteDomain: NullableText(),
    Connection: Type.String(),
    IntroducingBrokerId: AlwaysNull("introducing brokers"),
    IntroducingBroker: NullableText("Always null"),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    SalesRepId: AlwaysNull("sales representatives"),
    SalesRep: NullableText("Always null"),
    IsTradeLeader: Type.Boolean(),
    FirstBrokerActivationDate: Nullable(DateTime()),
    NetLiquidationValue: NullableNumber("Null while the account has not reached the service"),
    NetLiquidationValueDate: Nullable(DateTime()),
    EnabledFutures: Type.Boolean(),
    EnabledForex: Type.Boolean(),
    EnabledStocks: Type.Boolean(),
    EnabledOptions: Type.Boolean(),
  },
  { title: "PendingAccount" },
);

export const ApprovedAccountDTORecord = Type.Object(
  {
    Id: Type.Integer({ description: "The approval" }),
    Account: Type.String(),
    PersonId: Type.Integer(),
    BrokerId: Type.Integer(),
    WhiteLabelSiteId: Nullable(Type.Integer({ description: "The person's white-label site" })),
    GeoSite: Type.String({ description: "The approving geo-site's name" }),
    IsCFD: Type.Boolean(),
    IsDeleted: Type.Boolean(),
  },
  { title: "ApprovedAccountDTO" },
);
