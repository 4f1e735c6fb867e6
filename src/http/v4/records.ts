import { Type } from "@sinclair/typebox";
import { CHECKOUT_STATUSES } from "../../core/checkout.js";
import { DateTime, Nullable } from "./schemas.js";

/** Result records of the v4 API, named and shaped as in API.md "Records (v4)". */

export const AccessKeyRecord = Type.Object(
  {
    Id: Type.Integer(),
    AccessKey: Type.String(),
    PersonId: Type.Integer(),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    GeoSiteId: Nullable(Type.Integer()),
    Role: Type.String({ description: "ServiceAdmin, WhiteLabelAdmin, GeoSiteAdmin or Person" }),
    Message: Type.String(),
    CreateDate: DateTime(),
    DeleteDate: Nullable(DateTime({ description: "The key's expiration; null when it does not expire" })),
    Comment: Nullable(Type.String()),
  },
  { title: "AccessKey" },
);

const siteMemberFields = (title: string) =>
  Type.Object(
    {
      Id: Type.Integer(),
      Alias: Nullable(Type.String()),
      FirstName: Type.String(),
      LastName: Type.String(),
      Email: Type.String(),
      Phone: Nullable(Type.String()),
      Language: Nullable(Type.String()),
      IsWhiteLabelSiteAdmin: Type.Boolean(),
      WhiteLabelSiteId: Nullable(Type.Integer()),
      WhiteLabelPermissions: Type.String({ description: "Admin for site administrators, Member for customers" }),
      CountryCode: Nullable(Type.String()),
      DivisionCode: Nullable(Type.String()),
      Created: DateTime(),
      LastLoggedIn: Nullable(DateTime()),
      LastIP: Nullable(Type.String()),
      IsEmailValidated: Type.Boolean(),
      IsAlive: Type.Boolean(),
      IsManager: Type.Boolean(),
      IsInvestor: Type.Boolean(),
      GeoSite: Nullable(Type.String()),
      IsGeoSiteAdmin: Type.Boolean(),
    },
    { title },
  );

export const WhiteLabelSiteMemberRecord = siteMemberFields("WhiteLabelSiteMember");
export const GeoSiteMemberRecord = siteMemberFields("GeoSiteMember");

export const ClockRecord = Type.Object({ Now: DateTime() }, { title: "ServiceClock" });

export const QuoteRecord = Type.Object(
  {
    Symbol: Type.String(),
    Bid: Type.Number(),
    Ask: Type.Number(),
    Last: Type.Number(),
    BidSize: Nullable(Type.Number()),
    AskSize: Nullable(Type.Number()),
    Time: DateTime(),
  },
  { title: "Quote" },
);

export const ApprovedAccountRecord = Type.Object(
  {
    PersonId: Type.Integer(),
    AddedDate: DateTime(),
    Account: Type.String(),
    BrokerId: Type.Integer(),
    ConnectionType: Type.Integer({ description: "0 Autotrade, 1 BrokerTransmit" }),
    AddedByPersonId: Type.Integer(),
  },
  { title: "ApprovedAccount" },
);

export const PersonRecord = Type.Object(
  {
    Id: Type.Integer(),
    Alias: Nullable(Type.String()),
    FirstName: Nullable(Type.String()),
    LastName: Nullable(Type.String()),
    Email: Nullable(Type.String()),
    Phone: Nullable(Type.String()),
    IsPhoneVerified: Nullable(Type.Boolean()),
    Language: Nullable(Type.String({ description: "ISO 639-3" })),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    CountryCode: Nullable(Type.String({ description: "ISO 3166-1 alpha-2" })),
    DivisionCode: Nullable(Type.String({ description: "ISO 3166-2, e.g. US-CA" })),
    Created: DateTime(),
    LastLoggedIn: Nullable(DateTime()),
    LastIP: Nullable(Type.String()),
    IsEmailValidated: Nullable(Type.Boolean()),
    IsAlive: Type.Boolean(),
    ApprovedAccounts: Nullable(Type.Array(ApprovedAccountRecord)),
    IsManager: Type.Boolean(),
    IsInvestor: Type.Boolean(),
    GeoSite: Nullable(Type.String()),
    IsGeoSiteAdmin: Nullable(Type.Boolean()),
    SupportCompanyName: Nullable(Type.String()),
    SupportSiteURL: Nullable(Type.String()),
    SupportEmail: Nullable(Type.String()),
    UserToken: Nullable(
      Type.String({ description: "The private KYC token; shown to the person's administrators only" }),
    ),
    Icon: Type.Optional(Type.String({ description: "Only with IncludeIconInResponse: an image data URI" })),
  },
  {
    title: "Person",
    description: "Private fields are null unless the caller is the person or an administrator of the person's site.",
  },
);

export const AddPersonResponseRecord = Type.Object(
  {
    PersonId: Type.Integer(),
    CSRF: Nullable(Type.String({ description: "Issued by AddProfile only" })),
    UserToken: Nullable(Type.String({ description: "The person's private KYC token; issued by AddProfile only" })),
  },
  { title: "AddPersonResponse" },
);

export const GeoSiteRecord = Type.Object(
  {
    Id: Type.Integer(),
    GeoSIteId: Type.String({ description: "The geo-site's name: what GeoSite parameters take" }),
    Domain: Nullable(Type.String()),
  },
  { title: "GeoSite" },
);

export const KycScoreRecord = Type.Object(
  {
    Id: Type.Integer(),
    PersonId: Type.Integer(),
    Created: DateTime(),
    Approved: Nullable(DateTime()),
    Started: Nullable(DateTime()),
    Finished: Nullable(DateTime()),
    RedirectedToKYCTimes: Type.Integer(),
    Score: Nullable(Type.Integer()),
  },
  { title: "KYCScore" },
);

export const KycInfoRecord = Type.Object(
  {
    Id: Type.Integer(),
    PersonId: Type.Integer(),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    Phone: Type.String(),
    IsPhoneVerified: Type.Boolean(),
    Street: Type.String(),
    City: Type.String(),
    Province: Type.String(),
    PostCode: Type.String(),
    Country: Type.String(),
    PhotoId1: Nullable(Type.String({ description: "Reference to a document held by the site's KYC provider" })),
    PhotoId1Title: Nullable(Type.String()),
    PhotoId2: Nullable(Type.String()),
    PhotoId2Title: Nullable(Type.String()),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    GeoSite: Nullable(Type.String()),
    SiteURL: Nullable(Type.String()),
  },
  { title: "KYCInfo" },
);

export const InstrumentationExportRecord = Type.Object(
  {
    WhiteLabelSiteId: Type.Integer(),
    StartDate: DateTime(),
    EndDate: DateTime(),
    SessionEvents: Type.Array(
      Type.Object({
        EventType: Type.String({ description: "KeySession: a key's first use, or first use after 30 minutes" }),
        PersonId: Type.Integer(),
        AccessKeyId: Type.Integer(),
        Server: Type.String(),
        IPAddress: Type.String(),
        EventDate: DateTime(),
      }),
    ),
    Subscriptions: Type.Array(
      Type.Object({
        SubscriptionId: Type.Integer(),
        PersonId: Type.Integer(),
        StrategyId: Type.Integer(),
        Kind: Type.String({ description: "real, simulated or paper" }),
        Lane: Type.String({
          description: "free, grant (owned strategy), resale (catalog, billed to the house account) or direct",
        }),
        WhiteLabelSiteId: Nullable(Type.Integer({ description: "The site that sold or granted it" })),
        Price: Type.Number({ description: "What the payer pays each interval, in dollars" }),
        BasePrice: Type.Number(),
        Markup: Type.Number(),
        BillingInterval: Nullable(Type.String({ description: "month or year" })),
        BillingIntervalCount: Nullable(Type.Integer()),
        StartDate: DateTime(),
        EndDate: Nullable(DateTime()),
        EndReason: Nullable(Type.String()),
        PaidUntil: Nullable(DateTime({ description: "The end of the paid or granted term" })),
        NextChargeDate: Nullable(DateTime()),
        NextBillingPrice: Nullable(Type.Number()),
        IsCancelPending: Type.Boolean(),
        BillingFailureCount: Type.Integer(),
        LastBillingFailureReason: Nullable(Type.String()),
        LastBillingFailureAt: Nullable(DateTime()),
        LastTransactionDate: Nullable(DateTime()),
        LastTransactionAmount: Nullable(Type.Number()),
      }),
      { description: "Subscriptions live at any time in the window: sold or granted by the site, or of its customers" },
    ),
    AutotradeAccountStability: Type.Array(
      Type.Object({
        EventId: Type.Integer(),
        EventType: Type.String({
          description:
            "Linked, Delinked, Restricted, AutotradeDisabled, AutotradeEnabled, AutoSyncDisabled, AutoSyncEnabled, ApprovalGranted or ApprovalDeleted",
        }),
        PersonId: Type.Integer(),
        Account: Type.String(),
        BrokerId: Type.Integer(),
        Reason: Nullable(Type.String()),
        EventDate: DateTime(),
      }),
      { description: "Stability events of the site's customers' brokerage accounts in the window, as they happened" },
    ),
    Executions: Type.Array(
      Type.Object({
        ExecutionId: Type.Integer(),
        PersonId: Type.Integer(),
        Account: Type.String(),
        BrokerId: Type.Integer(),
        StrategyId: Type.Integer(),
        SignalId: Nullable(
          Type.Integer({ description: "The strategy order copied; null for the service's own closes" }),
        ),
        OrderPurpose: Type.String({
          description: "copy, close (following the strategy flat, or a stop), auto_stop or manual",
        }),
        Symbol: Type.String(),
        SymbolType: Type.String(),
        Side: Type.String({ description: "buy or sell" }),
        Quantity: Type.Number(),
        Price: Type.Number(),
        BrokerExecutionId: Type.String(),
        ExecutionDate: DateTime(),
      }),
      { description: "Fills in the site's customers' brokerage accounts in the window" },
    ),
  },
  { title: "WlInstrumentationExport" },
);

export const SupportedSymbolRecord = Type.Object(
  {
    SymbolType: Type.String({ description: "future, forex or stock" }),
    Symbol: Type.String({ description: "Futures: @ + root (add month code and two-digit year); forex: the pair" }),
    Description: Type.String(),
    SecurityType: Type.String({ description: "FUT, FOR or CS" }),
    SecurityExchange: Type.String({ description: "MIC for futures, DEFAULT otherwise" }),
    Currency: Type.String(),
    PriceMultiplier: Type.Number({ description: "Money per point per contract or unit" }),
    TickSize: Type.Number(),
    ContractMonths: Nullable(Type.String({ description: "Futures: listed month codes (F=Jan ... Z=Dec)" })),
  },
  { title: "SupportedSymbol" },
);

export const StrategyIdRecord = Type.Object({ StrategyId: Type.Integer() }, { title: "StrategyId" });

export const StrategyReviewRecord = Type.Object(
  { StrategyId: Type.Integer(), ReviewStatus: Type.String({ description: "approved or rejected" }) },
  { title: "StrategyDescriptionReview" },
);

export const ServiceSymbolRecord = Type.Object(
  {
    FullSymbol: Type.String({ description: "AAPL, AAPL261218C00150000, @ESM26, EURUSD" }),
    SymbolType: Type.String({ description: "stock, option, future or forex" }),
    Underlying: Nullable(Type.String()),
    Expiry: Nullable(Type.String({ description: "Options YYYY-MM-DD; futures the contract month YYYY-MM" })),
    PutOrCall: Nullable(Type.String({ description: "put or call" })),
    StrikePrice: Nullable(Type.Number()),
    Description: Type.String(),
  },
  { title: "ServiceSymbol" },
);

export const ExchangeSymbolRecord = Type.Object(
  {
    Symbol: Type.String(),
    Currency: Type.String({ description: "ISO 4217" }),
    SecurityExchange: Type.String({ description: "DEFAULT, or the MIC of a futures exchange" }),
    SecurityType: Type.String({ description: "CS, FUT, OPT or FOR" }),
    MaturityMonthYear: Nullable(Type.String({ description: "YYYYMM (futures) or YYYYMMDD (options)" })),
    PutOrCall: Nullable(Type.Integer({ description: "0 put, 1 call" })),
    StrikePrice: Type.Number({ description: "0 when none" }),
    PriceMultiplier: Type.Number(),
  },
  { title: "ExchangeSymbol" },
);

export const OrderStatusRecord = Type.Object(
  {
    Id: Type.Integer(),
    OrderId: Type.String(),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    SignalId: Type.Integer(),
    AvgPx: Nullable(Type.Number()),
    OrderType: Type.String({ description: "1 Market, 2 Limit, 3 Stop" }),
    Side: Type.String({ description: "1 Buy, 2 Sell" }),
    OpenClose: Type.String({ description: "O open, C close" }),
    OrderQuantity: Type.Number(),
    Limit: Nullable(Type.Number()),
    Stop: Nullable(Type.Number()),
    TIF: Type.String({ description: "0 Day, 1 Good-till-canceled" }),
    ProfitTarget: Nullable(Type.Number()),
    StopLoss: Nullable(Type.Number()),
    DoNotCreateOCAGroup: Type.Boolean(),
    CancelReplaceSignalId: Nullable(Type.Integer()),
    ParentSignalId: Nullable(Type.Integer()),
    ParkedUntilDate: Nullable(DateTime()),
    DoNotSyncToOpen: Type.Boolean(),
    ServiceSymbol: ServiceSymbolRecord,
    ExchangeSymbol: ExchangeSymbolRecord,
    RejectMessage: Nullable(Type.String()),
    BrokerId: Nullable(Type.Integer()),
    OrderStatus: Type.String({ description: "A, 0, 1, 2, 4, 5, 6, 8, C or E" }),
    FilledQuantity: Type.Number(),
    AvgFillPrice: Nullable(Type.Number()),
    PostedDate: DateTime(),
    SignalType: Type.Integer({
      description:
        "1 sent by the owner, 4 profit-target exit, 5 stop-loss exit, 6 made by SetDesiredPositions, 7 the service's close of a position whose contract expired",
    }),
    Info: Nullable(Type.String()),
  },
  { title: "OrderStatus" },
);

export const PositionRecord = Type.Object(
  {
    StrategyId: Type.Integer(),
    Quantity: Type.Number({ description: "Signed: below zero is short" }),
    AvgPx: Type.Number(),
    ServiceSymbol: ServiceSymbolRecord,
    ExchangeSymbol: ExchangeSymbolRecord,
    StrategyName: Type.String(),
    Currency: Type.String(),
    OpenedDate: DateTime(),
  },
  { title: "Position" },
);

export const SignalIdRecord = Type.Object(
  {
    SignalId: Type.Integer(),
    ProfitTargetSignalId: Nullable(Type.Integer()),
    StopLossSignalId: Nullable(Type.Integer()),
    ExitSignalsOCAGroupId: Nullable(Type.Integer()),
    ParkedUntilDate: Nullable(DateTime()),
  },
  { title: "SignalId" },
);

/** An order row of SetDesiredPositions: rejected orders have no SignalId. */
const DesiredPositionsOrderRecord = Type.Object(
  {
    SignalId: Nullable(Type.Integer()),
    OrderStatus: Type.String(),
    OrderType: Type.String(),
    Side: Type.String(),
    OpenClose: Type.String(),
    OrderQuantity: Type.Number(),
    Limit: Nullable(Type.Number()),
    Stop: Nullable(Type.Number()),
    TIF: Type.String(),
    FilledQuantity: Type.Number(),
    AvgFillPrice: Nullable(Type.Number()),
    PostedDate: Nullable(DateTime()),
    ServiceSymbol: ServiceSymbolRecord,
    ExchangeSymbol: ExchangeSymbolRecord,
    RejectMessage: Nullable(Type.String()),
  },
  { title: "DesiredPositionsOrder" },
);

export const SetDesiredPositionsRecord = Type.Object(
  {
    NewSignals: Type.Array(DesiredPositionsOrderRecord),
    CanceledSignals: Type.Array(DesiredPositionsOrderRecord),
    RejectedSignals: Type.Array(DesiredPositionsOrderRecord),
  },
  { title: "SetDesiredPositionsResult" },
);

export const ClosedTradeRecord = Type.Object(
  {
    Id: Type.Integer(),
    TradeId: Type.Integer(),
    StrategyId: Type.Integer(),
    OpenDate: DateTime(),
    CloseDate: DateTime(),
    AvgOpenFillPrice: Type.Number(),
    AvgCloseFillPrice: Type.Number(),
    OpenedQuantity: Type.Number(),
    ClosedQuantity: Type.Number(),
    OpenSide: Type.String({ description: "1 Buy (a long trade), 2 Sell (a short one)" }),
    CloseSide: Type.String({ description: "1 Buy, 2 Sell" }),
    ProfitLoss: Type.Number({ description: "Dollars, after the CommissionPlan's commissions" }),
    Commission: Type.Number({ description: "Dollars, under the CommissionPlan" }),
    MaxDrawdown: Type.Number({ description: "The worst open profit while the trade was open, dollars (0 or below)" }),
    MaxDrawdown_DateCalculated: DateTime({ description: "When the excursion was last evaluated" }),
    MaxDrawdown_WorstPrice: Nullable(Type.Number()),
    MaxDrawdown_WorstPriceDate: Nullable(DateTime()),
    MaxDrawdown_StrategyEquity: Nullable(Type.Number()),
    MaxDrawdown_EntryPrice: Nullable(Type.Number()),
    MaxDrawdown_OpenQuantity: Nullable(Type.Number()),
    ServiceSymbol: ServiceSymbolRecord,
    ExchangeSymbol: ExchangeSymbolRecord,
  },
  { title: "ClosedTrade" },
);

export const SecurityTypesEnabledRecord = Type.Object(
  { Stocks: Type.Boolean(), Options: Type.Boolean(), Futures: Type.Boolean(), Forex: Type.Boolean() },
  { title: "SecurityTypesEnabled", description: "The kinds of instrument the strategy has traded" },
);

const Fraction = (description: string) =>
  Nullable(Type.Number({ description: `${description}; a fraction (0.05 = 5%)` }));

export const MonthlyResultRecord = Type.Object(
  {
    Month: Type.String({ description: "YYYY-MM" }),
    StartEquity: Type.Number({ description: "Equity at the previous month's last close (starting cash first)" }),
    EndEquity: Type.Number({ description: "Equity at the month's last close, after the CommissionPlan's commissions" }),
    Return: Fraction("EndEquity / StartEquity − 1"),
    ReturnWithoutCommissions: Fraction("The same without any commissions"),
    BenchmarkStart: Type.Number(),
    BenchmarkEnd: Type.Number(),
    BenchmarkReturn: Fraction("The S&P 500 proxy's return over the month"),
  },
  { title: "MonthlyResult" },
);

export const DailyResultRecord = Type.Object(
  {
    Date: Type.String({ description: "The trading day, YYYY-MM-DD (New York)" }),
    Equity: Type.Number({ description: "Equity at the close, after the CommissionPlan's commissions" }),
    EquityWithoutCommissions: Type.Number(),
    Return: Fraction("Against the previous close (starting cash first)"),
    ReturnWithoutCommissions: Fraction("The same without any commissions"),
    Benchmark: Type.Number({ description: "The S&P 500 proxy (SPY) at the close; 0 when unknown" }),
    BenchmarkReturn: Fraction("The S&P 500 proxy's return on the day"),
  },
  { title: "DailyResult" },
);

const equityResult = (title: string, entry: typeof MonthlyResultRecord | typeof DailyResultRecord) =>
  Type.Object(
    {
      StrategyId: Type.Integer(),
      StrategyName: Type.String(),
      StartDate: DateTime(),
      SecurityTypesEnabled: SecurityTypesEnabledRecord,
      MonthlyCost: Type.Number(),
      StrategyOwnerId: Type.Integer(),
      MonthlyResults: Type.Array(entry),
    },
    { title },
  );

export const MonthlyEquityRecord = equityResult("Equity", MonthlyResultRecord);
export const DailyEquityRecord = equityResult("DailyEquity", DailyResultRecord);

const Stat = (description: string) => Nullable(Type.Number({ description }));

export const StrategyDetailsRecord = Type.Object(
  {
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    ShortDescription: Nullable(Type.String()),
    LongDescription: Nullable(Type.String()),
    IsAlive: Type.Boolean(),
    IsResellable: Type.Boolean({ description: "Public strategies may be resold by white-label sites" }),
    StartDate: DateTime(),
    PrimarySecurityTypes: Type.Array(Type.String(), { description: "CS, FUT, OPT, FOR: the most traded first" }),
    SecurityTypesEnabled: SecurityTypesEnabledRecord,
    MonthlyCost: Type.Number(),
    StrategyOwnerId: Type.Integer(),
    StrategyOwnerName: Type.String({ description: "The owner's screen name, or first name and initial" }),
    SuggestedCapital: Type.Number({ description: "The starting capital" }),
    LastModified: DateTime(),
    Score: Nullable(Type.Number({ description: "Not scored yet: null" })),
    IsTradeOwnSystem: Type.Boolean(),
    TradeOwnSystemPercent: Type.Number(),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    IsPrivate: Type.Boolean(),
    AUM: Type.Number(),
    AUM_NumberOfAccounts: Type.Integer(),
    Return: Stat("Fraction: cumulative, or annualized once the record holds a year (ReturnLabel)"),
    ReturnLabel: Nullable(Type.String({ description: "Cumulative or Annualized" })),
    Equity: Type.Number(),
    Cash: Type.Number(),
    StartingCash: Type.Number(),
    ProfitFactor: Stat("Sum of winners / |sum of losers|"),
    CashDividends: Type.Number(),
    BuyingPower: Type.Number(),
    MarginUsed: Type.Number(),
    AgeInDays: Type.Integer(),
    ModelAccountValue: Type.Number(),
    NumTrades: Type.Integer(),
    NumWinners: Type.Integer(),
    NumLosers: Type.Integer(),
    PercentWinTrades: Stat("Fraction of closed trades that won"),
    SumDollarWinners: Type.Number(),
    SumDollarLosers: Type.Number(),
    NumMonths: Type.Integer(),
    WinMonthsInUI: Nullable(Type.String({ description: "winning/all months, e.g. 7/12" })),
    WinMonths: Type.Integer(),
    WinMonthsRatio: Stat("Fraction of months that won"),
    MaxDrawdown: Stat("Largest fall from a running peak, a positive fraction of the peak"),
    MaxDrawdownDays: Stat("Calendar days from the peak to the trough"),
    MaxDrawdownStartDate: Nullable(Type.String({ description: "YYYY-MM-DD: the peak" })),
    MaxDrawdownEndDate: Nullable(Type.String({ description: "YYYY-MM-DD: the trough" })),
    AvgWinDollars: Stat("Dollars"),
    AvgLossDollars: Stat("Dollars, negative"),
    AvgTradeDuration: Stat("Days"),
    CorrelationSP500: Stat("Pearson correlation of daily returns"),
    SP500Return: Stat("Fraction, labelled like Return"),
    ReturnVsSP500: Stat("Return − SP500Return"),
    AvgLeverage: Stat("Mean of exposure / equity at the closes"),
    MaxLeverage: Stat("Largest exposure / equity at a close"),
    CorrelationToSP500: Stat("The same as CorrelationSP500"),
    Alpha: Stat("Jensen's alpha, annualized"),
    Beta: Stat("Against the S&P 500 proxy's daily returns"),
    Treynor: Stat("Annualized excess return / beta"),
    Sortino: Stat("Annualized"),
    Sharpe: Stat("Annualized"),
    Calmar: Stat("Annualized return / max drawdown"),
    NoSubsAllowed: Type.Boolean(),
    LatestTrade: Nullable(DateTime()),
  },
  { title: "StrategyDetails" },
);

export const StrategyBasicDetailsRecord = Type.Object(
  {
    Id: Type.Integer(),
    StrategyId: Type.Integer(),
    IsAlive: Type.Boolean(),
    IsPrivate: Type.Boolean(),
    StrategyName: Type.String(),
    StartDate: DateTime(),
    SecurityTypesEnabled: SecurityTypesEnabledRecord,
    MonthlyCost: Type.Number(),
    StrategyOwnerId: Type.Integer(),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    IsTradeOwnSystem: Type.Boolean(),
    IsResellable: Type.Boolean(),
  },
  { title: "StrategyBasicDetails" },
);

export const SubscribedStrategyRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The subscription's id" }),
    PersonId: Type.Integer(),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    IsSimulation: Type.Boolean(),
    IsPaperTrade: Type.Boolean(),
    IsAlive: Type.Boolean({ description: "Live now: not ended, or ending later" }),
    StartDate: DateTime(),
    EndDate: Nullable(DateTime({ description: "When it ended or ends (the end of a grant or of a stopped term)" })),
    MonthlyCost: Type.Number({
      description:
        "What it costs the subscriber a month: resold, base price plus the site's markup; direct, its price spread over the months of its interval; 0 for grants and free ones",
    }),
    NextChargeDate: Nullable(DateTime({ description: "null: nothing more is charged" })),
    NextBillingPrice: Nullable(Type.Number()),
    BillingInterval: Nullable(Type.String({ description: "month or year; null when not billed" })),
    BillingIntervalCount: Nullable(Type.Integer()),
    IsCancelPending: Type.Boolean({ description: "Billing stopped; access runs to the end of the term" }),
    BillingFailureCount: Type.Integer(),
    LastBillingFailureReason: Nullable(Type.String()),
    LastBillingFailureAt: Nullable(DateTime()),
  },
  { title: "SubscribedStrategy" },
);

export const StrategySubscriberRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The subscription's id (as SubscriptionId)" }),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    PersonId: Type.Integer({ description: "The subscriber" }),
    SubscriptionId: Type.Integer(),
    SubscriberId: Type.Integer({ description: "The subscriber's person id (as PersonId)" }),
    IsStrategyOwner: Type.Boolean({ description: "The subscriber owns the strategy" }),
    Alias: Nullable(Type.String()),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    StartDate: DateTime(),
    EndDate: Nullable(DateTime()),
    BasePrice: Type.Number({ description: "The strategy's monthly price when the subscription started (dollars)" }),
    Markup: Type.Number({ description: "The reselling site's monthly markup (dollars)" }),
    Cost: Type.Number({ description: "BasePrice + Markup" }),
    LastTransactionDate: Nullable(DateTime({ description: "The last settled charge" })),
    LastTransactionAmount: Nullable(Type.Number()),
    IsResale: Type.Boolean(),
    WhiteLabelSiteId: Nullable(Type.Integer({ description: "The subscriber's white-label site" })),
    GeoSiteId: Nullable(Type.Integer({ description: "The subscriber's geo-site" })),
  },
  { title: "StrategySubscriber" },
);

export const StartSimResultRecord = Type.Object(
  {
    PersonId: Type.Integer(),
    Started: Type.Array(
      Type.Object({
        StrategyId: Type.Integer(),
        SubscriptionId: Type.Integer(),
        StartDate: DateTime(),
        StartEquity: Type.Number({ description: "The strategy's equity when the simulation started" }),
      }),
    ),
    Skipped: Type.Array(
      Type.Object({
        StrategyId: Type.Integer(),
        Reason: Type.String({
          description:
            "not_found (no such strategy, or private to another site), not_alive, own_strategy (the customer owns it), already_subscribed (a live real or paper subscription), already_simulated",
        }),
        Message: Type.String(),
        SubscriptionId: Nullable(Type.Integer({ description: "The live subscription in the way, if any" })),
      }),
    ),
  },
  { title: "StartSimResult" },
);

export const StopSimResultRecord = Type.Object(
  {
    PersonId: Type.Integer(),
    StrategyId: Type.Integer(),
    SubscriptionId: Nullable(
      Type.Integer({ description: "The simulation this call ended; null when none was live (a no-op)" }),
    ),
    EndDate: Nullable(DateTime()),
  },
  { title: "StopSimResult" },
);

export const SimResultRecord = Type.Object(
  {
    PersonId: Type.Integer(),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    Account: Nullable(Type.String({ description: "Always null: a simulation trades no account" })),
    StrategyId: Type.Integer(),
    StrategyName: Type.String(),
    StartDate: DateTime(),
    EndDate: Nullable(DateTime()),
    StartEquity: Nullable(Type.Number()),
    EndEquity: Nullable(
      Type.Number({ description: "Equity now (at the last mark before EndDate once ended); null until ready" }),
    ),
    TotalReturn: Nullable(Type.Number({ description: "A fraction: 0.05 is 5 %; null until ready" })),
    TotalDelta: Nullable(Type.Number({ description: "EndEquity − StartEquity in dollars; null until ready" })),
    ScalingFactor: Type.Number(),
    SubscriptionId: Type.Optional(Type.Integer()),
    IsResultReady: Type.Optional(
      Type.Boolean({ description: "True once the strategy has been marked at a close after the start" }),
    ),
  },
  { title: "SimResult" },
);

export const PlanSubscriptionRecord = Type.Object(
  {
    Id: Type.Integer(),
    PersonId: Type.Integer(),
    LicenseType: Type.String(),
    LicenseTypeId: Type.Integer(),
    StartDate: DateTime(),
    EndDate: Nullable(DateTime({ description: "Null: runs until stopped" })),
    IsRecurring: Type.Boolean(),
    Cost: Type.Number({ description: "Monthly, in dollars" }),
  },
  { title: "Subscription" },
);

export const AutotradePlansRecord = Type.Object(
  {
    WhiteLabelSiteId: Type.Integer(),
    AutotradeFeePolicy: Type.String({
      description: "CustomerPays (default): the customer pays the AutoTrading licence; SitePays: the site does",
    }),
    Plans: Type.Array(
      Type.Object({
        Id: Type.Integer(),
        WhiteLabelSiteId: Nullable(Type.Integer({ description: "Null: a service-wide plan" })),
        LicenseType: Type.String(),
        LicenseTypeId: Type.Integer(),
        MonthlyCost: Type.Number(),
        IsRecurring: Type.Boolean(),
      }),
    ),
  },
  { title: "AutotradePlans" },
);

/** A strategy of a white-label site's resale catalog (GetSiteCatalog; the spec does not show its fields). */
export const SiteCatalogEntryRecord = Type.Object(
  {
    WhiteLabelSiteId: Type.Integer(),
    StrategyId: Type.Integer(),
    StrategyName: Type.String({ description: "The strategy's original name" }),
    DisplayName: Nullable(Type.String({ description: "The site's own name for it; null: shown as StrategyName" })),
    ShortDescription: Nullable(Type.String({ description: "The site's, where it set one; else the strategy's" })),
    LongDescription: Nullable(Type.String({ description: "The site's, where it set one; else the strategy's" })),
    BaseMonthlyCost: Type.Number({
      description: "Dollars: the owner's monthly price, the wholesale price the site pays",
    }),
    MonthlyMarkup: Type.Number({ description: "Dollars the site adds" }),
    MonthlyCost: Type.Number({
      description: "Dollars: BaseMonthlyCost + MonthlyMarkup, what the site's customers see",
    }),
    AddedDate: DateTime(),
    LastModified: DateTime(),
  },
  { title: "SiteCatalogEntry" },
);

/** One strategy's result of UpdateSiteCatalog. */
export const SiteCatalogUpdateRecord = Type.Object(
  {
    StrategyId: Type.Integer(),
    Success: Type.Boolean(),
    Result: Type.Union(
      [
        Type.Literal("added"),
        Type.Literal("already_in_catalog"),
        Type.Literal("removed"),
        Type.Literal("not_in_catalog"),
        Type.Literal("refused"),
      ],
      { description: "added, already_in_catalog, removed and not_in_catalog succeed; refused does not" },
    ),
    Reason: Nullable(Type.String({ description: "Why it was refused" })),
    ActiveSubscriberCount: Nullable(
      Type.Integer({ description: "Remove: the site's customers with a live resold subscription; null on Add" }),
    ),
  },
  { title: "SiteCatalogUpdateResult" },
);

/** What WhiteLabelStartSubscription and WhiteLabelStopSubscription answer. */
export const WhiteLabelSubscriptionRecord = Type.Object(
  {
    SubscriptionId: Type.Integer(),
    PersonId: Type.Integer(),
    StrategyId: Type.Integer(),
    Lane: Type.Union([Type.Literal("Owned"), Type.Literal("Resold")], {
      description:
        "Owned: a finite access grant, no charge; Resold: monthly at the wholesale price to the house account",
    }),
    IsIdempotentReplay: Type.Boolean(),
    IsFirstChargeSuccessful: Nullable(
      Type.Boolean({ description: "Resold: whether the first charge settled; Owned: null" }),
    ),
    StartDate: DateTime(),
    AccessUntil: Nullable(DateTime({ description: "Access ends here (Owned: the grant's end; Resold: paid until)" })),
    EndDate: Nullable(DateTime({ description: "When the subscription ends; null: open-ended" })),
    IsCancelPending: Type.Boolean(),
    NextChargeDate: Nullable(DateTime()),
    NextBillingPrice: Nullable(Type.Number({ description: "Dollars, charged to the house account" })),
    WholesaleMonthly: Nullable(Type.Number({ description: "Resold: dollars a month to the house account" })),
    LastBillingFailureReason: Nullable(Type.String()),
  },
  { title: "WhiteLabelSubscription" },
);

export const SubscriptionCheckoutRecord = Type.Object(
  {
    IntentId: Type.Integer(),
    Status: Type.Union(
      CHECKOUT_STATUSES.map((status) => Type.Literal(status)),
      { description: "The checkout's state; the transitions are in docs/decisions.md" },
    ),
    StatusDetail: Type.String(),
    ApprovalUrl: Nullable(
      Type.String({
        description:
          "While the customer has a step to take (PendingCustomer, RequiresAction): the page's path on the general server, /Checkout/<token>; null otherwise",
      }),
    ),
    WebCheckoutUrl: Nullable(Type.String({ description: "The same page as ApprovalUrl" })),
    Price: Type.Number({ description: "Dollars per billing interval" }),
    Currency: Type.Literal("USD"),
    BillingInterval: Type.Union([Type.Literal("month"), Type.Literal("year")]),
    BillingIntervalCount: Type.Integer(),
    StrategyId: Type.Integer(),
    SubscriptionId: Nullable(Type.Integer({ description: "Once Active" })),
    TrialDays: Type.Integer({ description: "0: the checkout charges the first period at consent" }),
  },
  { title: "SubscriptionCheckout" },
);

export const PaymentOutcomeRecord = Type.Object(
  {
    Outcome: Type.Union([Type.Literal("approve"), Type.Literal("decline"), Type.Literal("require_action")]),
    Reason: Nullable(Type.String()),
  },
  { title: "PaymentOutcome" },
);

export const WebhookRegistrationRecord = Type.Object(
  {
    Url: Type.String({ description: "As registered, in canonical form (how DELETE finds it)" }),
    WhiteLabelSiteId: Type.Integer(),
    Secret: Type.String({
      description:
        "The signing secret of Webhook-Signature (docs/webhooks.md). Answered this once: keep it; registering the URL again rotates it",
    }),
    CreatedAt: DateTime({ description: "When the URL was registered (a rotation keeps it)" }),
    IsSecretRotated: Type.Boolean({ description: "The URL was registered already and has a new secret" }),
  },
  { title: "WebhookRegistration" },
);

export const WebhookUnregistrationRecord = Type.Object(
  {
    Url: Type.String(),
    WhiteLabelSiteId: Type.Integer(),
    CreatedAt: DateTime(),
    DeletedAt: DateTime(),
    CanceledDeliveries: Type.Integer({ description: "Deliveries still owed to the endpoint, now never sent" }),
  },
  { title: "WebhookUnregistration" },
);
