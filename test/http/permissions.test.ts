import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import { pathOf, type V4Server } from "../../src/http/v4/operation.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import { insertBrokerAccount } from "../../src/services/broker-accounts.js";
import { setStrategyPrice } from "../../src/services/commerce-admin.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { linkVariant } from "../../src/services/strategy-mux.js";
import {
  BACKENDS,
  type CallOptions,
  type Population,
  type PopulationRole,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * The permission matrix: every operation of the table, on every server that
 * lists it, called by every role on objects of its own site and of another.
 * An operation without cases here fails the test, so new operations must say
 * who may call them.
 */
const ROLES: readonly PopulationRole[] = ["admin", "wlAdminA", "wlAdminB", "geoAdmin", "personA", "personB", "expired"];

interface Case {
  readonly name: string;
  readonly request: (p: Population) => CallOptions;
  readonly expect: (who: PopulationRole, server: V4Server) => number;
}

const everyoneWithAValidKey = (who: PopulationRole) => (who === "expired" ? 401 : 200);
const adminsOnly = (who: PopulationRole) => (who === "expired" ? 401 : who === "admin" ? 200 : 403);
/** Only these callers succeed; every other valid key gets 403. */
const only =
  (...allowed: PopulationRole[]) =>
  (who: PopulationRole) =>
    who === "expired" ? 401 : allowed.includes(who) ? 200 : 403;
/** The administrators of person A (site A lies in the geo-site) and of person B (site B). */
const administratorsOfA = only("admin", "wlAdminA", "geoAdmin");
const administratorsOfB = only("admin", "wlAdminB");
/** Who may trade person A's strategy and read its orders: A and A's administrators. */
const TRADERS_OF_A: readonly PopulationRole[] = ["admin", "wlAdminA", "geoAdmin", "personA"];
/** A's public strategy: its traders succeed, every other valid key may see it but gets 403. */
const tradersOfA = only(...TRADERS_OF_A);
/**
 * A's private strategy: its traders succeed; to every other valid key it does
 * not exist (404, as for an id that names none), so ids reveal nothing.
 */
const tradersOfPrivateA = (who: PopulationRole) => (who === "expired" ? 401 : TRADERS_OF_A.includes(who) ? 200 : 404);
/** A's private strategy, where its traders get this status too (404 for a signal that does not exist). */
const tradersOfPrivateAGet = (status: number) => (who: PopulationRole) => {
  const expected = tradersOfPrivateA(who);
  return expected === 200 ? status : expected;
};
const orderOf = (strategyId: () => number, extra: Record<string, unknown> = {}) => ({
  Order: {
    StrategyId: strategyId(),
    OrderType: "2",
    Side: "1",
    TIF: "1",
    OrderQuantity: 1,
    Limit: 1,
    ServiceSymbol: { FullSymbol: "MSFT" },
    ...extra,
  },
});

let signups = 0;
/** A private strategy of person A's, made before the matrix runs. */
let strategyOfA = 0;
/** A public strategy of person A's, made by A's site administrator before the matrix runs. */
let publicStrategyOfA = 0;
/** A public, priced strategy of person B's, in site A's resale catalog before the matrix runs. */
let marketStrategyOfB = 0;
/** Person B's checkout of A's public strategy, made before the matrix runs. */
let checkoutOfB = 0;
/** Site A's autotrade approval request for person A, made before the matrix runs. */
let approvalOfA = 0;
const RULE575_WINDOW = { StartDate: "2026-03-01T00:00:00Z", EndDate: "2026-03-11T00:00:00Z" };
/** A strategy of person A's with a variant, made before the matrix runs. */
let muxParentOfA = 0;
/** Person A's watchlist, made before the matrix runs. */
let watchListOfA = 0;
let watchListsMade = 0;
const orderOfA = (extra: Record<string, unknown> = {}) => orderOf(() => strategyOfA, extra);
const newCustomer = (extra: Record<string, unknown> = {}) => {
  signups += 1;
  return {
    FirstName: "Matrix",
    LastName: `Signup${signups}`,
    ScreenName: `matrix signup ${signups}`,
    Email: `matrix-signup-${signups}@example.org`,
    Password: "correct horse battery",
    Language: "eng",
    CountryCode: "US",
    DivisionCode: "NY",
    ...extra,
  };
};

const kycSubmission = (userToken: string) => ({
  UserToken: userToken,
  FirstName: "Kay",
  LastName: "Whysee",
  Email: "kyc@example.net",
  Phone: "+14155552671",
  IsPhoneVerified: true,
  Street: "1 Main St",
  City: "Springfield",
  Province: "IL",
  PostCode: "62701",
  Country: "US",
});

/**
 * StartSim and StopSim on person A: white-label admins of A's site and service admins naming it.
 * Site B's admin acting on its own site does not know A (404); naming site A is not its to name (403).
 */
const simCases = (request: (p: Population) => CallOptions): readonly Case[] => {
  const onSiteA = (p: Population): CallOptions => {
    const base = request(p);
    return base.body
      ? { body: { ...(base.body as object), WhiteLabelSiteId: p.siteA } }
      : { query: { ...base.query, WhiteLabelSiteId: String(p.siteA) } };
  };
  return [
    { name: "site A named", request: onSiteA, expect: only("admin", "wlAdminA") },
    {
      name: "the caller's own site",
      request,
      expect: (who) => ({ expired: 401, admin: 400, wlAdminA: 200, wlAdminB: 404 })[who as string] ?? 403,
    },
  ];
};

/** A person's plan subscriptions: private to the person and their administrators. */
const planSubscriptionCases: readonly Case[] = [
  {
    name: "person A's",
    request: (p) => ({ query: { PersonId: String(p.people.personA) } }),
    expect: only("admin", "wlAdminA", "geoAdmin", "personA"),
  },
  {
    name: "person B's",
    request: (p) => ({ query: { PersonId: String(p.people.personB) } }),
    expect: only("admin", "wlAdminB", "personB"),
  },
];

const CASES: Readonly<Record<string, readonly Case[]>> = {
  Hello: [{ name: "greeting", request: () => ({ body: { Name: "Matrix" } }), expect: everyoneWithAValidKey }],
  GetAccessKey: [{ name: "own key", request: () => ({}), expect: everyoneWithAValidKey }],
  GetWhiteLabelSiteUsers: [
    {
      name: "site A",
      request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteA) } }),
      expect: (who) => ({ admin: 200, wlAdminA: 200, expired: 401 })[who as string] ?? 403,
    },
    {
      name: "site B",
      request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteB) } }),
      expect: (who) => ({ admin: 200, wlAdminB: 200, expired: 401 })[who as string] ?? 403,
    },
    {
      name: "the caller's own site",
      request: () => ({}),
      expect: (who, server) => {
        if (who === "expired") return 401;
        if (who === "admin") return 400; // an admin has no site of its own: WhiteLabelSiteId is required
        if (who === "wlAdminA" || who === "wlAdminB") return server === "GEO" ? 400 : 200;
        return 403;
      },
    },
  ],
  AddProfile: [
    {
      name: "on the caller's own site",
      request: () => ({ body: newCustomer() }),
      expect: only("admin", "wlAdminA", "wlAdminB", "geoAdmin"),
    },
    {
      name: "on site A",
      request: (p) => ({ body: newCustomer({ WhiteLabelSiteId: p.siteA, IPAddress: "203.0.113.7" }) }),
      expect: administratorsOfA,
    },
    {
      name: "on site B",
      request: (p) => ({ body: newCustomer({ WhiteLabelSiteId: p.siteB, IPAddress: "203.0.113.8" }) }),
      expect: administratorsOfB,
    },
  ],
  UpdateProfile: [
    {
      name: "person A",
      request: (p) => ({ body: { PersonId: p.people.personA, City: "Springfield" } }),
      expect: (who, server) =>
        who === "expired"
          ? 401
          : server !== "GEN"
            ? 501
            : ["admin", "wlAdminA", "geoAdmin", "personA"].includes(who)
              ? 200
              : 403,
    },
    {
      name: "person B",
      request: (p) => ({ body: { PersonId: p.people.personB, City: "Shelbyville" } }),
      expect: (who, server) =>
        who === "expired" ? 401 : server !== "GEN" ? 501 : ["admin", "wlAdminB", "personB"].includes(who) ? 200 : 403,
    },
  ],
  GetProfile: [
    {
      name: "person A",
      request: (p) => ({ query: { PersonId: String(p.people.personA) } }),
      expect: everyoneWithAValidKey,
    },
    {
      name: "person B",
      request: (p) => ({ query: { PersonId: String(p.people.personB) } }),
      expect: everyoneWithAValidKey,
    },
  ],
  SearchProfiles: [
    { name: "everyone in scope", request: () => ({}), expect: only("admin", "wlAdminA", "wlAdminB", "geoAdmin") },
    {
      name: "site B",
      request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteB) } }),
      expect: administratorsOfB,
    },
  ],
  GetGeoSiteUsers: [
    { name: "the geo-site", request: () => ({ query: { GeoSite: "Geo Europe" } }), expect: only("admin", "geoAdmin") },
  ],
  GetGeoSites: [{ name: "all", request: () => ({}), expect: everyoneWithAValidKey }],
  GetPhoneAlreadyExists: [
    {
      name: "a number",
      request: () => ({ query: { Phone: "+14155552671" } }),
      expect: only("admin", "wlAdminA", "wlAdminB", "geoAdmin"),
    },
  ],
  GetKYCScore: [
    {
      name: "person A",
      request: (p) => ({ query: { PersonId: String(p.people.personA), UserToken: p.userTokens.personA } }),
      expect: administratorsOfA,
    },
    {
      name: "person B",
      request: (p) => ({ query: { PersonId: String(p.people.personB), UserToken: p.userTokens.personB } }),
      expect: administratorsOfB,
    },
  ],
  UpdateKYCScore: [
    {
      name: "person A",
      request: (p) => ({ body: { UserToken: p.userTokens.personA, Score: 70 } }),
      expect: administratorsOfA,
    },
    {
      name: "person B",
      request: (p) => ({ body: { UserToken: p.userTokens.personB, Score: 40 } }),
      expect: administratorsOfB,
    },
  ],
  GetKYCInfo: [
    {
      name: "an unknown token",
      request: () => ({ query: { UserToken: "no-such-token" } }),
      expect: (who) =>
        who === "expired" ? 401 : ["admin", "wlAdminA", "wlAdminB", "geoAdmin"].includes(who) ? 404 : 403,
    },
    { name: "person A", request: (p) => ({ query: { UserToken: p.userTokens.personA } }), expect: administratorsOfA },
    { name: "person B", request: (p) => ({ query: { UserToken: p.userTokens.personB } }), expect: administratorsOfB },
  ],
  AddKYCInfo: [
    { name: "person A", request: (p) => ({ body: kycSubmission(p.userTokens.personA) }), expect: administratorsOfA },
    { name: "person B", request: (p) => ({ body: kycSubmission(p.userTokens.personB) }), expect: administratorsOfB },
  ],
  GetWlInstrumentationExport: [
    {
      name: "the caller's own site",
      request: () => ({ query: { StartDate: "2026-01-01T00:00:00Z", EndDate: "2026-03-01T00:00:00Z" } }),
      expect: (who) =>
        who === "expired" ? 401 : who === "admin" ? 400 : who === "wlAdminA" || who === "wlAdminB" ? 200 : 403,
    },
    {
      name: "site A",
      request: (p) => ({
        query: {
          StartDate: "2026-01-01T00:00:00Z",
          EndDate: "2026-03-01T00:00:00Z",
          WhiteLabelSiteId: String(p.siteA),
        },
      }),
      expect: only("admin", "wlAdminA"),
    },
  ],
  GetSupportedSymbols: [
    { name: "the catalogue", request: () => ({ query: { Limit: "5" } }), expect: everyoneWithAValidKey },
  ],
  AddStrategy: [
    {
      name: "for the caller",
      request: () => ({ body: { StrategyName: "Matrix Strategy", StartingCapital: 10000 } }),
      expect: everyoneWithAValidKey,
    },
  ],
  UpdateStrategy: [
    {
      name: "person A's private strategy",
      request: () => ({ body: { StrategyId: strategyOfA, Name: "Matrix Renamed" } }),
      expect: (who, server) => {
        if (who === "expired") return 401;
        if (server !== "GEN") return 501;
        if (who === "admin" || who === "personA") return 200;
        return TRADERS_OF_A.includes(who) ? 403 : 404;
      },
    },
    {
      name: "person A's public strategy",
      request: () => ({ body: { StrategyId: publicStrategyOfA, Name: "Matrix Public Renamed" } }),
      expect: (who, server) =>
        who === "expired" ? 401 : server !== "GEN" ? 501 : who === "admin" || who === "personA" ? 200 : 403,
    },
  ],
  ReviewStrategyDescriptions: [
    {
      name: "nothing waiting",
      request: () => ({ body: { StrategyId: strategyOfA, Approve: true } }),
      expect: (who) => (who === "expired" ? 401 : who === "admin" ? 409 : 403),
    },
  ],
  GetSubscribedStrategies: [
    {
      name: "person A",
      request: (p) => ({ query: { PersonId: String(p.people.personA) } }),
      expect: only("admin", "wlAdminA", "geoAdmin", "personA"),
    },
    {
      name: "person B",
      request: (p) => ({ query: { PersonId: String(p.people.personB) } }),
      expect: only("admin", "wlAdminB", "personB"),
    },
  ],
  GetSubscribers: [
    {
      name: "A's private strategy",
      request: () => ({ query: { StrategyId: String(strategyOfA) } }),
      expect: tradersOfPrivateA,
    },
    {
      // Another white-label site's administrator reads its own customers' subscriptions only.
      name: "A's public strategy",
      request: () => ({ query: { StrategyId: String(publicStrategyOfA) } }),
      expect: only(...TRADERS_OF_A, "wlAdminB"),
    },
  ],
  GetSubscriptionRevenue: [
    {
      name: "dates alone",
      request: () => ({ query: { StartDate: "2026-01-01T00:00:00Z" } }),
      expect: (who) => (who === "expired" ? 401 : 400),
    },
    {
      // Scoped, not refused: each caller sees the rows it may (none but the owner's and the admins').
      name: "A's public strategy",
      request: () => ({ query: { StrategyId: String(publicStrategyOfA) } }),
      expect: everyoneWithAValidKey,
    },
    {
      name: "site B's sales",
      request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteB) } }),
      expect: (who) => (who === "expired" ? 401 : who === "wlAdminA" ? 403 : 200),
    },
  ],
  SetClock: [{ name: "future", request: () => ({ body: { Now: "2031-01-01T00:00:00Z" } }), expect: adminsOnly }],
  SetQuote: [
    {
      name: "a stock",
      request: () => ({ body: { Symbol: "MSFT", Bid: 400, Ask: 400.05, Last: 400 } }),
      expect: adminsOnly,
    },
  ],
  AdvanceClock: [{ name: "no move", request: () => ({ body: { Seconds: 0 } }), expect: adminsOnly }],
  SetPaymentOutcome: [{ name: "approve", request: () => ({ body: { Outcome: "approve" } }), expect: adminsOnly }],
  CreateSubscriptionCheckout: [
    {
      name: "A's public strategy, priced",
      request: () => ({ body: { StrategyId: publicStrategyOfA } }),
      // The owner cannot subscribe to their own strategy.
      expect: (who) => (who === "expired" ? 401 : who === "personA" ? 400 : 200),
    },
    {
      name: "A's private strategy",
      request: () => ({ body: { StrategyId: strategyOfA } }),
      // Those who may see it learn it takes no subscriptions; to the others it does not exist.
      expect: (who) => (who === "personA" ? 400 : tradersOfPrivateA(who) === 200 ? 409 : tradersOfPrivateA(who)),
    },
  ],
  GetSubscriptionCheckoutStatus: [
    {
      name: "person B's checkout",
      request: () => ({ query: { IntentId: String(checkoutOfB) } }),
      expect: (who) => (who === "expired" ? 401 : who === "personB" || who === "admin" ? 200 : 404),
    },
  ],
  NewStrategyOrder: [
    { name: "a limit buy on A's private strategy", request: () => ({ body: orderOfA() }), expect: tradersOfPrivateA },
    {
      name: "a limit buy on A's public strategy",
      request: () => ({ body: orderOf(() => publicStrategyOfA) }),
      expect: tradersOfA,
    },
  ],
  ReplaceStrategyOrder: [
    {
      name: "a signal that does not exist",
      request: () => ({ body: orderOfA({ CancelReplaceSignalId: 999_999 }) }),
      expect: tradersOfPrivateAGet(404),
    },
  ],
  CancelStrategyOrder: [
    {
      name: "a signal that does not exist",
      request: () => ({ query: { StrategyId: String(strategyOfA), SignalId: "999999" } }),
      expect: tradersOfPrivateAGet(404),
    },
  ],
  GetStrategyActiveOrders: [
    {
      name: "A's private strategy",
      request: () => ({ query: { StrategyIds: String(strategyOfA) } }),
      expect: tradersOfPrivateA,
    },
    {
      name: "A's public strategy",
      request: () => ({ query: { StrategyIds: String(publicStrategyOfA) } }),
      expect: tradersOfA,
    },
  ],
  GetStrategyHistoricalOrders: [
    {
      name: "A's private strategy",
      request: () => ({ query: { StrategyId: String(strategyOfA) } }),
      expect: tradersOfPrivateA,
    },
  ],
  GetStrategyOpenPositions: [
    {
      name: "A's private strategy",
      request: () => ({ query: { StrategyIds: String(strategyOfA) } }),
      expect: tradersOfPrivateA,
    },
  ],
  GetStrategyHistoricalClosedTrades: [
    {
      name: "A's private strategy",
      request: () => ({ query: { StrategyId: String(strategyOfA), CommissionPlan: "Default" } }),
      expect: tradersOfPrivateA,
    },
  ],
  GetStrategyDetails: [
    {
      name: "A's private strategy",
      request: () => ({ query: { StrategyId: String(strategyOfA) } }),
      expect: tradersOfPrivateA,
    },
    {
      name: "A's public strategy",
      request: () => ({ query: { StrategyId: String(publicStrategyOfA) } }),
      expect: everyoneWithAValidKey,
    },
  ],
  SearchStrategies: [{ name: "everything visible", request: () => ({}), expect: everyoneWithAValidKey }],
  GetLeaderBoard: [
    { name: "futures", request: () => ({ query: { SecurityType: "FUT" } }), expect: everyoneWithAValidKey },
  ],
  SetLeaderBoard: [{ name: "cleared", request: () => ({ body: { StrategyIds: [] } }), expect: adminsOnly }],
  GetStrategyHistoricalEquity: [
    {
      name: "A's private strategy",
      request: () => ({ query: { StrategyId: String(strategyOfA) } }),
      expect: tradersOfPrivateA,
    },
  ],
  GetStrategyHistoricalDailyEquity: [
    {
      name: "A's private strategy",
      request: () => ({ query: { StrategyId: String(strategyOfA) } }),
      expect: tradersOfPrivateA,
    },
  ],
  SetDesiredPositions: [
    {
      name: "flat on A's private strategy",
      request: () => ({ body: { StrategyId: strategyOfA, Positions: [] } }),
      expect: tradersOfPrivateA,
    },
    {
      name: "flat on A's public strategy",
      request: () => ({ body: { StrategyId: publicStrategyOfA, Positions: [] } }),
      expect: tradersOfA,
    },
  ],
  StartSim: simCases((p) => ({ body: { PersonId: p.people.personA, StrategyIds: [publicStrategyOfA] } })),
  StopSim: simCases((p) => ({
    query: { PersonId: String(p.people.personA), StrategyId: String(publicStrategyOfA) },
  })),
  GetSimResults: [
    {
      name: "person A's",
      request: (p) => ({ query: { PersonId: String(p.people.personA) } }),
      expect: only("admin", "wlAdminA", "geoAdmin", "personA"),
    },
    { name: "the caller's own", request: () => ({}), expect: everyoneWithAValidKey },
  ],
  GetInvestorPlanSubscriptions: planSubscriptionCases,
  GetManagerPlanSubscriptions: planSubscriptionCases,
  GetAutotradePlans: [
    {
      name: "the caller's own site",
      request: () => ({}),
      expect: (who) => (who === "expired" ? 401 : who === "admin" ? 400 : who === "geoAdmin" ? 403 : 200),
    },
    {
      name: "site A",
      request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteA) } }),
      expect: only("admin", "wlAdminA", "personA"),
    },
  ],
  ...whiteLabelCommerceCases(),
  ...webhookCases(),
  ...autotradeSetupCases(),
  ...watchlistCases(),
  ...autotradeAccountCases(),
  ...autotradeAdminCases(),
  ...autotradeSyncCases(),
};

/**
 * Webhook endpoints: site A's administrators and service admins (naming the site); another site's
 * administrator naming site A is refused (403), and without naming it acts on its own site. Each
 * registration is of a URL of its own; the removal is of a URL no site registered (404 to those who may).
 */
function webhookCases(): Record<string, readonly Case[]> {
  let registrations = 0;
  const url = () => `https://hooks.example.com/matrix/${++registrations}`;
  return {
    RegisterWebhook: [
      {
        name: "on site A",
        request: (p) => ({ body: { Url: url(), WhiteLabelSiteId: p.siteA } }),
        expect: only("admin", "wlAdminA"),
      },
      {
        name: "on the caller's own site",
        request: () => ({ body: { Url: url() } }),
        expect: (who) => ({ expired: 401, admin: 400, wlAdminA: 200, wlAdminB: 200 })[who as string] ?? 403,
      },
    ],
    UnregisterWebhook: [
      {
        name: "an unregistered URL on site A",
        request: (p) => ({ query: { Url: "https://hooks.example.com/never", WhiteLabelSiteId: String(p.siteA) } }),
        expect: (who) => ({ expired: 401, admin: 404, wlAdminA: 404 })[who as string] ?? 403,
      },
    ],
  };
}

/**
 * White-label commerce: site A's administrators and service admins (naming the site) only; another
 * site's administrator naming site A is refused (403), and without naming it acts on its own site,
 * where site A's customer does not exist (404).
 */
function whiteLabelCommerceCases(): Record<string, readonly Case[]> {
  const siteAOnly = only("admin", "wlAdminA");
  const onOwnSite = (ownSiteB: number) => (who: PopulationRole) =>
    who === "expired" ? 401 : who === "admin" ? 400 : who === "wlAdminA" ? 200 : who === "wlAdminB" ? ownSiteB : 403;
  const grantOfA = (p: Population, extra: Record<string, unknown> = {}) => ({
    body: {
      PersonId: p.people.personA,
      StrategyId: publicStrategyOfA,
      IdempotencyKey: "matrix-grant",
      Months: 1,
      ...extra,
    },
  });
  const stopOfA = (p: Population, extra: Record<string, string> = {}) => ({
    query: { PersonId: String(p.people.personA), StrategyId: String(publicStrategyOfA), ...extra },
  });
  return {
    GetSiteCatalog: [
      { name: "site A", request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteA) } }), expect: siteAOnly },
      { name: "the caller's own site", request: () => ({}), expect: onOwnSite(200) },
    ],
    GetRule575Status: [
      {
        name: "site A",
        request: (p) => ({ query: { ...RULE575_WINDOW, WhiteLabelSiteId: String(p.siteA) } }),
        expect: siteAOnly,
      },
      { name: "the caller's own site", request: () => ({ query: RULE575_WINDOW }), expect: onOwnSite(200) },
    ],
    GetStrategyMuxStatus: [
      {
        name: "site A's families",
        request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteA) } }),
        expect: siteAOnly,
      },
      { name: "the caller's own site's", request: () => ({}), expect: onOwnSite(200) },
    ],
    UpdateSiteCatalog: [
      {
        name: "B's strategy into site A's catalog",
        request: (p) => ({ body: { StrategyIds: [marketStrategyOfB], Action: "Add", WhiteLabelSiteId: p.siteA } }),
        expect: siteAOnly,
      },
    ],
    WhiteLabelUpdateSiteCatalogPricing: [
      {
        name: "site A's catalog strategy",
        request: (p) => ({ body: { StrategyId: marketStrategyOfB, MonthlyMarkup: 5, WhiteLabelSiteId: p.siteA } }),
        expect: siteAOnly,
      },
    ],
    WhiteLabelStartSubscription: [
      { name: "grant to A on site A", request: (p) => grantOfA(p, { WhiteLabelSiteId: p.siteA }), expect: siteAOnly },
      { name: "grant to A on the caller's own site", request: (p) => grantOfA(p), expect: onOwnSite(404) },
    ],
    WhiteLabelStopSubscription: [
      {
        name: "A's grant on site A",
        request: (p) => stopOfA(p, { WhiteLabelSiteId: String(p.siteA) }),
        expect: siteAOnly,
      },
      { name: "A's grant on the caller's own site", request: (p) => stopOfA(p), expect: onOwnSite(404) },
    ],
    SetBrokerFault: [
      {
        // Past the permission only the service admin learns the simulated broker has no such account.
        name: "an account the broker does not have",
        request: () => ({ body: { Account: "NO-SUCH-ACCOUNT", Fault: "clear" } }),
        expect: (who) => (who === "expired" ? 401 : who === "admin" ? 404 : 403),
      },
    ],
    ...approvalCases(siteAOnly, onOwnSite(404)),
  };
}

/** The WL autotrade approval flow: as white-label commerce, on person A's own strategy. */
function approvalCases(siteAOnly: Case["expect"], onOwnSite: Case["expect"]): Record<string, readonly Case[]> {
  const startForA = (p: Population, extra: Record<string, unknown> = {}) => ({
    body: {
      Account: "MATRIX-A",
      PersonId: p.people.personA,
      StrategyId: publicStrategyOfA,
      BrokerId: 1,
      ScalingPercentage: 100,
      ...extra,
    },
  });
  const start: readonly Case[] = [
    { name: "for A on site A", request: (p) => startForA(p, { WhiteLabelSiteId: p.siteA }), expect: siteAOnly },
    { name: "for A on the caller's own site", request: (p) => startForA(p), expect: onOwnSite },
  ];
  return {
    "StartAutotrade on WL": start,
    WhiteLabelStartAutotrade: start,
    GetAutotradeApprovalStatus: [
      {
        name: "A's request on site A",
        request: (p) => ({ query: { ApprovalRequestId: String(approvalOfA), WhiteLabelSiteId: String(p.siteA) } }),
        expect: siteAOnly,
      },
      {
        name: "A's request on the caller's own site",
        request: () => ({ query: { ApprovalRequestId: String(approvalOfA) } }),
        expect: onOwnSite,
      },
    ],
  };
}

/** Person A's brokerage account, autotrading A's public strategy (A holds a grant of it). */
const AUTOTRADE_ACCOUNT_OF_A = "MATRIX-A";
const autotradeStartOfA = (p: Population) => ({
  body: {
    Account: AUTOTRADE_ACCOUNT_OF_A,
    PersonId: p.people.personA,
    StrategyId: publicStrategyOfA,
    BrokerId: 1,
    ScalingPercentage: 100,
  },
});

/**
 * Autotrade setups: a person's setups are the person's and their administrators'; GetAutotraders
 * answers every caller, bounded by what each may see; GetBrokers is for every key.
 */
function autotradeSetupCases(): Record<string, readonly Case[]> {
  const ofA = only("admin", "wlAdminA", "geoAdmin", "personA");
  const personA = (p: Population) => p.people.personA;
  const queryOfA = (p: Population, extra: Record<string, string> = {}) => ({
    query: { PersonId: String(personA(p)), ...extra },
  });
  return {
    GetBrokers: [
      { name: "every broker", request: () => ({ query: { IncludeDisabled: "true" } }), expect: everyoneWithAValidKey },
    ],
    StartAutotrade: [
      {
        name: "A's account on A's public strategy",
        request: (p) => autotradeStartOfA(p),
        expect: ofA,
      },
    ],
    GetAutotradeSettings: [{ name: "person A's", request: (p) => queryOfA(p), expect: ofA }],
    SetAutotradeSettings: [
      {
        name: "person A's account",
        request: (p) => ({ body: { PersonId: personA(p), Account: AUTOTRADE_ACCOUNT_OF_A, IsAutotradeEnabled: true } }),
        expect: ofA,
      },
    ],
    GetAutotradedStrategies: [{ name: "person A's", request: (p) => queryOfA(p), expect: ofA }],
    GetAutotraders: [
      {
        name: "of A's public strategy",
        request: () => ({ query: { StrategyId: String(publicStrategyOfA) } }),
        expect: everyoneWithAValidKey,
      },
    ],
    StopAutotrade: [
      {
        name: "A's setup",
        request: (p) =>
          queryOfA(p, { Account: AUTOTRADE_ACCOUNT_OF_A, StrategyId: String(publicStrategyOfA), BrokerId: "1" }),
        expect: ofA,
      },
    ],
  };
}

/** Person A's paper account at the simulated broker, which ResetPaperTrade resets. */
const PAPER_ACCOUNT_OF_A = "MATRIX-A-PAPER";

/**
 * Autotrade account orders and positions (issue 14): A's accounts are A's and A's administrators'.
 * Where the caller may act, the answer is the operation's own (the orders named exist nowhere: 404);
 * an account of someone the caller may not act on is not there for it (404 when no person is named).
 */
function autotradeAccountCases(): Record<string, readonly Case[]> {
  const ofA = only("admin", "wlAdminA", "geoAdmin", "personA");
  const ofAAnswering = (status: number) => (who: PopulationRole) => {
    const expected = ofA(who);
    return expected === 200 ? status : expected;
  };
  const owned = (p: Population, extra: Record<string, string> = {}) => ({
    query: { Account: AUTOTRADE_ACCOUNT_OF_A, PersonId: String(p.people.personA), ...extra },
  });
  const noOrder = (p: Population, extra: Record<string, unknown> = {}) => ({
    body: { Account: AUTOTRADE_ACCOUNT_OF_A, PersonId: p.people.personA, OrderId: "987654321", ...extra },
  });
  return {
    GetAutotradeActiveOrders: [{ name: "A's account", request: (p) => owned(p), expect: ofA }],
    GetAutotradeHistoricalOrders: [{ name: "A's account", request: (p) => owned(p), expect: ofA }],
    GetDashBoard: [{ name: "A's account", request: (p) => owned(p), expect: ofA }],
    GetAutoTradeOpenPositions: [
      {
        name: "A's account, no person named",
        request: () => ({ query: { Account: AUTOTRADE_ACCOUNT_OF_A } }),
        expect: (who) => (who === "expired" ? 401 : ofA(who) === 200 ? 200 : 404),
      },
    ],
    NewAutotradeOrder: [
      {
        name: "an exit of a strategy A's account does not autotrade (404 on Order.StrategyId)",
        request: (p) => ({
          body: {
            Account: AUTOTRADE_ACCOUNT_OF_A,
            PersonId: p.people.personA,
            ...orderOfA({ Side: "2", Limit: 300 }),
          },
        }),
        expect: ofAAnswering(404),
      },
    ],
    CancelAutotradeOrder: [
      {
        name: "an order A's account never had",
        request: (p) => owned(p, { OrderId: "987654321" }),
        expect: ofAAnswering(404),
      },
    ],
    ReplaceAutotradeOrder: [
      { name: "an order A's account never had", request: (p) => noOrder(p, { Price: 10 }), expect: ofAAnswering(404) },
    ],
    ResetPaperTrade: [
      {
        name: "A's paper account",
        request: (p) => ({ body: { Account: PAPER_ACCOUNT_OF_A, PersonId: p.people.personA } }),
        expect: ofA,
      },
    ],
  };
}

/** AutoSync's operations act on a person's account: the person and their administrators. */
function autotradeSyncCases(): Record<string, readonly Case[]> {
  const ofA = only("admin", "wlAdminA", "geoAdmin", "personA");
  return {
    GetAutotradeSyncStatusReport: [
      {
        name: "person A's account",
        request: (p) => ({ query: { PersonId: String(p.people.personA), Account: AUTOTRADE_ACCOUNT_OF_A } }),
        expect: ofA,
      },
    ],
    SyncPositionsToOpen: [
      {
        name: "person A's account",
        request: (p) => ({
          body: {
            PersonId: p.people.personA,
            Account: AUTOTRADE_ACCOUNT_OF_A,
            BrokerId: 1,
            StrategyIds: [publicStrategyOfA],
          },
        }),
        expect: ofA,
      },
    ],
  };
}

/**
 * Watchlists: every key reads the Leaderboard list and keeps lists of its own; a person's list
 * is theirs alone (to anyone else, administrators included, it does not exist).
 */
function watchlistCases(): Record<string, readonly Case[]> {
  const personAOnly = (who: PopulationRole) => (who === "expired" ? 401 : who === "personA" ? 200 : 404);
  const listOfA = () => String(watchListOfA);
  return {
    GetWatchLists: [{ name: "the caller's", request: () => ({}), expect: everyoneWithAValidKey }],
    GetWatchListMembers: [
      { name: "the Leaderboard list", request: () => ({ query: { WatchListId: "1" } }), expect: everyoneWithAValidKey },
      { name: "person A's list", request: () => ({ query: { WatchListId: listOfA() } }), expect: personAOnly },
    ],
    ManageWatchList: [
      {
        name: "a list of the caller's own",
        request: () => ({ body: { Name: `Matrix list ${++watchListsMade}` } }),
        expect: everyoneWithAValidKey,
      },
      {
        name: "person A's list",
        request: () => ({ body: { WatchListId: watchListOfA, StrategyIds: [publicStrategyOfA] } }),
        expect: personAOnly,
      },
    ],
    DeleteWatchList: [
      {
        name: "a member of person A's list",
        request: () => ({ query: { WatchListId: listOfA(), StrategyIds: String(publicStrategyOfA) } }),
        expect: personAOnly,
      },
    ],
  };
}

/**
 * Autotrade administration (issue 14): the searches answer every key, bounded by what each may
 * see; the statistics and pending accounts are for site administrators; the geo-sites' approvals
 * are for geo-site administrators (of person A, whose site lies in the geo-site) and service
 * admins. Removals are of an account never approved: past the permission, 404.
 */
function autotradeAdminCases(): Record<string, readonly Case[]> {
  const siteAdministrators = only("admin", "wlAdminA", "wlAdminB", "geoAdmin");
  const approveA: Case = {
    name: "person A's account",
    request: (p) => ({ body: { Account: AUTOTRADE_ACCOUNT_OF_A, PersonId: p.people.personA, BrokerId: 1 } }),
    expect: only("admin", "geoAdmin"),
  };
  const removeNever: Case = {
    name: "an account never approved",
    request: () => ({ query: { Account: "NEVER-APPROVED" } }),
    expect: (who) => (who === "expired" ? 401 : who === "admin" || who === "geoAdmin" ? 404 : 403),
  };
  return {
    SearchAccounts: [
      {
        name: "person A's account",
        request: () => ({ query: { Account: AUTOTRADE_ACCOUNT_OF_A } }),
        expect: everyoneWithAValidKey,
      },
    ],
    SearchAutotradedAccounts: [
      {
        name: "of A's public strategy",
        request: () => ({ query: { StrategyId: String(publicStrategyOfA) } }),
        expect: everyoneWithAValidKey,
      },
    ],
    GetAutotradeStats: [{ name: "the caller's site", request: () => ({ query: {} }), expect: siteAdministrators }],
    GetPendingAccounts: [{ name: "the caller's site", request: () => ({ query: {} }), expect: siteAdministrators }],
    AddApprovedAutotradeAccount: [approveA],
    DeleteApprovedAutotradeAccount: [removeNever],
    AddApprovedBrokerTransmitAccount: [approveA],
    DeleteApprovedBrokerTransmitAccount: [removeNever],
  };
}

/** The private data each caller may see: its own, and that of the people it administers. */
const VISIBLE: Readonly<Record<PopulationRole, readonly PopulationRole[]>> = {
  admin: ROLES,
  wlAdminA: ["wlAdminA", "personA"],
  wlAdminB: ["wlAdminB", "personB"],
  geoAdmin: ["geoAdmin", "wlAdminA", "personA"],
  personA: ["personA"],
  personB: ["personB"],
  expired: [],
};

for (const backend of BACKENDS) {
  describe(`permission matrix (${backend})`, () => {
    let service: TestService;
    let population: Population;
    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
      const made = await service.call("GEN", "POST", "/Strategies/AddStrategy", {
        key: population.keys.personA,
        body: { StrategyName: "Person A Strategy", StartingCapital: 10000 },
      });
      strategyOfA = made.json.Results[0].StrategyId;
      const shown = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: population.keys.wlAdminA,
        body: {
          StrategyName: "Person A Public",
          StartingCapital: 10000,
          StrategyOwnerPersonId: population.people.personA,
          InitialSiteVisibility: true,
        },
      });
      publicStrategyOfA = shown.json.Results[0].StrategyId;
      const market = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: population.keys.wlAdminB,
        body: {
          StrategyName: "Person B Market",
          StartingCapital: 10000,
          StrategyOwnerPersonId: population.people.personB,
          InitialSiteVisibility: true,
        },
      });
      marketStrategyOfB = market.json.Results[0].StrategyId;
      await setStrategyPrice(service.app.runtime, marketStrategyOfB, 4900, null);
      const added = await service.call("WL", "POST", "/Strategies/UpdateSiteCatalog", {
        key: population.keys.wlAdminA,
        body: { StrategyIds: [marketStrategyOfB], Action: "Add" },
      });
      assert.equal(added.json.Results[0].Result, "added", added.text);
      const granted = await service.call("WL", "POST", "/Strategies/WhiteLabelStartSubscription", {
        key: population.keys.wlAdminA,
        body: {
          PersonId: population.people.personA,
          StrategyId: publicStrategyOfA,
          IdempotencyKey: "setup",
          Months: 6,
        },
      });
      assert.equal(granted.status, 200, granted.text);
      await service.storage.db
        .updateTable("strategies")
        .set({ monthly_cost: "25" })
        .where("id", "=", publicStrategyOfA)
        .execute();
      const checkout = await service.call("GEN", "POST", "/General/CreateSubscriptionCheckout", {
        key: population.keys.personB,
        body: { StrategyId: publicStrategyOfA },
      });
      checkoutOfB = checkout.json.Results[0].IntentId;
      const approval = await service.call("WL", "POST", "/Autotrade/StartAutotrade", {
        key: population.keys.wlAdminA,
        body: {
          Account: "MATRIX-A-SETUP",
          PersonId: population.people.personA,
          StrategyId: publicStrategyOfA,
          BrokerId: 1,
          ScalingPercentage: 100,
        },
      });
      assert.equal(approval.status, 200, approval.text);
      approvalOfA = approval.json.Results[0].ApprovalRequestId;
      await insertBrokerAccount(
        service.storage.db,
        {
          personId: population.people.personA,
          brokerId: 1,
          account: AUTOTRADE_ACCOUNT_OF_A,
          cash: decimal("50000"),
          paper: false,
        },
        service.app.runtime.clock.nowMs(),
      );
      const variant = async (name: string) => {
        const r = await service.call("GEN", "POST", "/Strategies/AddStrategy", {
          key: population.keys.personA,
          body: { StrategyName: name, StartingCapital: 10000 },
        });
        assert.equal(r.status, 200, r.text);
        return r.json.Results[0].StrategyId as number;
      };
      muxParentOfA = await variant("Person A Mux Parent");
      await linkVariant(service.app.runtime, { parentId: muxParentOfA, childId: await variant("Person A Mux Child") });
      const list = await service.call("WL", "POST", "/Strategies/ManageWatchList", {
        key: population.keys.personA,
        body: { Name: "A's list", StrategyIds: [publicStrategyOfA] },
      });
      assert.equal(list.status, 200, list.text);
      watchListOfA = list.json.Results[0].Id;
      await openSimulatedBrokerAccount(service.app.runtime, {
        personId: population.people.personA,
        brokerId: 1,
        account: PAPER_ACCOUNT_OF_A,
        cash: decimal("10000"),
        paper: true,
      });
      const autotraded = await service.call("GEN", "POST", "/Autotrade/StartAutotrade", {
        body: autotradeStartOfA(population).body,
      });
      assert.equal(autotraded.status, 200, autotraded.text);
    });
    after(() => service.close());

    for (const operation of OPERATIONS) {
      test(`${operation.id}`, async () => {
        // An operation whose rules differ per server (StartAutotrade: WL asks the customer) has cases per server set.
        const cases = CASES[`${operation.id} on ${operation.servers.join(" ")}`] ?? CASES[operation.id];
        assert.ok(cases, `the permission matrix has no cases for ${operation.id}`);
        for (const server of operation.servers) {
          for (const testCase of cases) {
            for (const who of ROLES) {
              const r = await service.call(server, operation.method, pathOf(operation, server), {
                ...testCase.request(population),
                key: population.keys[who],
              });
              const label = `${operation.id} ${testCase.name} on ${server} by ${who}`;
              assert.equal(r.status, testCase.expect(who, server), `${label}: ${r.text}`);
              for (const other of ROLES) {
                if (VISIBLE[who].includes(other)) continue;
                assert.equal(r.text.includes(`"${other.toLowerCase()}@example.com"`), false, `${label} leaks ${other}`);
                assert.equal(
                  r.text.includes(population.userTokens[other]),
                  false,
                  `${label} leaks ${other}'s UserToken`,
                );
              }
            }
          }
        }
      });
    }
  });
}
