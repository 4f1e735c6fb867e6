import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { alterSubscription, charged, customer, days, priced, subscribed } from "../helpers/subscriptions.js";
import { assertRefused, MARKET_OPEN, newStrategy } from "../helpers/trading.js";

/**
 * GetSubscribedStrategies, GetSubscribers and GetSubscriptionRevenue through
 * HTTP: who reads what, the fields of each lane, ActiveOnly, the revenue
 * window, pages, and every refusal.
 */
for (const backend of BACKENDS) {
  describe(`subscription reads (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let now: number;
    /** Person A's public strategy at 49 a month, and a private one. */
    let publicId: number;
    let privateId: number;
    /** A customer of site A. */
    let carol: { personId: number; key: string };
    const ids: Record<string, number> = {};

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      await setClock(service, MARKET_OPEN);
      now = service.app.runtime.clock.nowMs();
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: population.keys.wlAdminA,
        body: {
          StrategyName: "Priced Public",
          StartingCapital: 100000,
          StrategyOwnerPersonId: population.people.personA,
          InitialSiteVisibility: true,
        },
      });
      publicId = made.json.Results[0].StrategyId;
      await priced(service, publicId, "49");
      privateId = await newStrategy(service, population.keys.personA, 100_000, "Private One");
      carol = await customer(service, "carol", population.siteA);
      // Person B (site B) bought the public strategy from site B's catalog: 49 wholesale + 10 markup.
      ids.resale = (
        await subscribed(service, population.people.personB, publicId, {
          platform_id: null,
          kind: "real",
          lane: "resale",
          site_id: population.siteB,
          price_cents: 4900,
          base_price_cents: 4900,
          markup_cents: 1000,
          billing_interval: "month",
          billing_interval_count: 1,
          paid_until: now + days(30),
          next_charge_at: now + days(30),
          next_charge_cents: 4900,
          failure_count: 1,
          last_failure_reason: "card declined",
          last_failure_at: now - days(1),
          last_charge_at: now,
          last_charge_cents: 4900,
        })
      ).id;
      // Carol pays the service directly, 500.00 a year.
      ids.direct = (
        await subscribed(service, carol.personId, publicId, {
          platform_id: null,
          kind: "real",
          lane: "direct",
          price_cents: 50000,
          base_price_cents: 50000,
          billing_interval: "year",
          billing_interval_count: 1,
          paid_until: now + days(365),
          next_charge_at: now + days(365),
          next_charge_cents: 50000,
          last_charge_at: now - days(3),
          last_charge_cents: 50000,
        })
      ).id;
      // Carol simulates the private strategy, and once followed it for free (ended).
      ids.simulated = (
        await subscribed(service, carol.personId, privateId, {
          platform_id: null,
          kind: "simulated",
          lane: "free",
          start_equity: "100000",
        })
      ).id;
      const old = await subscribed(service, population.people.personB, privateId, { platform_id: null, kind: "paper" });
      ids.ended = old.id;
      await alterSubscription(service, old.id, { ended_at: now - 1, live_key: null, end_reason: "unsubscribed" });
      await charged(service, ids.resale, now - days(40), 1);
      await charged(service, ids.resale, now, 2);
      await charged(service, ids.direct, now - days(3), 1);
    });
    after(() => service.close());

    const get = (server: "WL" | "GEN" | "GEO", path: string, key: string, query: Record<string, string>) =>
      service.call(server, "GET", path, { key, query });
    const subscribedStrategies = (key: string, query: Record<string, string>, server: "WL" | "GEN" | "GEO" = "GEN") =>
      get(server, "/General/GetSubscribedStrategies", key, query);
    const subscribers = (key: string, query: Record<string, string>, server: "WL" | "GEN" = "WL") =>
      get(server, "/Strategies/GetSubscribers", key, query);
    const revenue = (key: string, query: Record<string, string>, server: "WL" | "GEN" = "WL") =>
      get(server, "/Strategies/GetSubscriptionRevenue", key, query);

    test("GetSubscribedStrategies: the person's live subscriptions with their price and billing on GEN and GEO", async () => {
      const r = await subscribedStrategies(population.keys.personB, { PersonId: String(population.people.personB) });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.Results.length, 1, "the ended one only with ActiveOnly false");
      const [row] = r.json.Results;
      assert.deepEqual(row, {
        Id: ids.resale,
        PersonId: population.people.personB,
        StrategyId: publicId,
        StrategyName: "Priced Public",
        IsSimulation: false,
        IsPaperTrade: false,
        IsAlive: true,
        StartDate: MARKET_OPEN.replace("Z", ".000Z"),
        EndDate: null,
        MonthlyCost: 59,
        NextChargeDate: new Date(now + days(30)).toISOString(),
        NextBillingPrice: 49,
        BillingInterval: "month",
        BillingIntervalCount: 1,
        IsCancelPending: false,
        BillingFailureCount: 1,
        LastBillingFailureReason: "card declined",
        LastBillingFailureAt: new Date(now - days(1)).toISOString(),
      });
      for (const server of ["GEO", "WL"] as const) {
        const other = await subscribedStrategies(
          population.keys.personB,
          { PersonId: String(population.people.personB) },
          server,
        );
        assert.equal(other.status, 200, other.text);
        const fields = Object.keys(other.json.Results[0]);
        assert.equal(fields.includes("NextChargeDate"), server === "GEO", `${server}: ${fields}`);
        assert.equal(fields.includes("BillingFailureCount"), server === "GEO");
        assert.equal(other.json.Results[0].MonthlyCost, 59);
      }
      const all = await subscribedStrategies(population.keys.personB, {
        PersonId: String(population.people.personB),
        ActiveOnly: "false",
      });
      assert.deepEqual(
        all.json.Results.map((s: { Id: number; IsAlive: boolean; IsPaperTrade: boolean }) => [
          s.Id,
          s.IsAlive,
          s.IsPaperTrade,
        ]),
        [
          [ids.resale, true, false],
          [ids.ended, false, true],
        ],
      );
    });

    test("GetSubscribedStrategies: an annual price is shown a month at a time; a simulation is marked and costs nothing", async () => {
      const r = await subscribedStrategies(population.keys.wlAdminA, { PersonId: String(carol.personId) });
      assert.equal(r.status, 200, r.text);
      const [direct, simulated] = r.json.Results;
      assert.deepEqual(
        [direct.Id, direct.MonthlyCost, direct.BillingInterval, direct.NextBillingPrice],
        [ids.direct, 41.67, "year", 500],
      );
      assert.deepEqual([simulated.Id, simulated.IsSimulation, simulated.MonthlyCost], [ids.simulated, true, 0]);
      assert.equal(simulated.NextChargeDate, null);
      const paged = await subscribedStrategies(carol.key, { PersonId: String(carol.personId), Limit: "1" });
      assert.equal(paged.json.Results[0].Id, ids.direct);
      const next = await subscribedStrategies(carol.key, {
        PersonId: String(carol.personId),
        Limit: "1",
        Cursor: paged.json.Pagination.next_cursor,
      });
      assert.equal(next.json.Results[0].Id, ids.simulated);
    });

    test("GetSubscribedStrategies refusals: another person, another site's admin, no such person, bad input", async () => {
      const query = { PersonId: String(population.people.personB) };
      assertRefused(await subscribedStrategies(population.keys.personA, query), 403, "1002", "PersonId");
      assertRefused(await subscribedStrategies(population.keys.wlAdminA, query), 403, "1002", "PersonId");
      assertRefused(await subscribedStrategies(population.keys.geoAdmin, query), 403, "1002", "PersonId");
      assert.equal((await subscribedStrategies(population.keys.wlAdminB, query)).status, 200);
      assertRefused(await subscribedStrategies(population.keys.admin, { PersonId: "999999" }), 404, "2013", "PersonId");
      assertRefused(await subscribedStrategies(population.keys.admin, {}), 400, "1102", "PersonId");
      assertRefused(
        await subscribedStrategies(population.keys.admin, { ...query, ActiveOnly: "maybe" }),
        400,
        "1101",
        "ActiveOnly",
      );
    });

    test("GetSubscribers: the owner reads every subscription with its revenue fields; ActiveOnly leaves the ended out", async () => {
      const r = await subscribers(population.keys.personA, { StrategyId: String(publicId) });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.resale, ids.direct],
      );
      assert.deepEqual(r.json.Results[0], {
        Id: ids.resale,
        StrategyId: publicId,
        StrategyName: "Priced Public",
        PersonId: population.people.personB,
        SubscriptionId: ids.resale,
        SubscriberId: population.people.personB,
        IsStrategyOwner: false,
        Alias: null,
        FirstName: "personB",
        LastName: "Tester",
        Email: "personb@example.com",
        StartDate: MARKET_OPEN.replace("Z", ".000Z"),
        EndDate: null,
        BasePrice: 49,
        Markup: 10,
        Cost: 59,
        LastTransactionDate: MARKET_OPEN.replace("Z", ".000Z"),
        LastTransactionAmount: 49,
        IsResale: true,
        WhiteLabelSiteId: population.siteB,
        GeoSiteId: null,
      });
      assert.deepEqual(
        [r.json.Results[1].IsResale, r.json.Results[1].Cost, r.json.Results[1].GeoSiteId],
        [false, 500, population.geo],
      );
      const hidden = await subscribers(population.keys.personA, { StrategyId: String(privateId) });
      assert.deepEqual(
        hidden.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.simulated, ids.ended],
      );
      const live = await subscribers(
        population.keys.personA,
        { StrategyId: String(privateId), ActiveOnly: "true" },
        "GEN",
      );
      assert.deepEqual(
        live.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.simulated],
      );
    });

    test("GetSubscribers: another site's administrator reads its own customers only; others are refused", async () => {
      const siteB = await subscribers(population.keys.wlAdminB, { StrategyId: String(publicId) });
      assert.equal(siteB.status, 200, siteB.text);
      assert.deepEqual(
        siteB.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.resale],
      );
      const siteA = await subscribers(population.keys.wlAdminA, { StrategyId: String(publicId) });
      assert.equal(siteA.json.Results.length, 2, "the owner's site administrator reads them all");
      assertRefused(await subscribers(population.keys.personB, { StrategyId: String(publicId) }), 403, "1002");
      assertRefused(await subscribers(population.keys.wlAdminB, { StrategyId: String(privateId) }), 404, "2013");
      assertRefused(await subscribers(population.keys.admin, { StrategyId: "999999" }), 404, "2013", "StrategyId");
      assertRefused(await subscribers(population.keys.admin, {}), 400, "1102", "StrategyId");
      assertRefused(await subscribers(population.keys.admin, { StrategyId: "0" }), 400, "1101", "StrategyId");
    });

    test("GetSubscriptionRevenue: paid subscriptions only, charged in the window, within the caller's scope", async () => {
      const owner = await revenue(population.keys.personA, {
        StrategyOwnerPersonId: String(population.people.personA),
      });
      assert.equal(owner.status, 200, owner.text);
      assert.deepEqual(
        owner.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.resale, ids.direct],
        "the simulation and the paper subscription bring nothing",
      );
      const window = {
        StrategyId: String(publicId),
        StartDate: new Date(now - days(45)).toISOString(),
        EndDate: new Date(now - days(30)).toISOString(),
      };
      const early = await revenue(population.keys.personA, window, "GEN");
      assert.deepEqual(
        early.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.resale],
      );
      const recent = await revenue(population.keys.personA, {
        StrategyId: String(publicId),
        StartDate: new Date(now - days(5)).toISOString(),
        EndDate: new Date(now).toISOString(),
      });
      assert.deepEqual(
        recent.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.direct],
        "EndDate is exclusive: the charge at now falls outside",
      );
      const stranger = await revenue(population.keys.personB, { StrategyId: String(publicId) });
      assert.deepEqual(stranger.json.Results, [], "a person sees the revenue of strategies they own");
      const siteB = await revenue(population.keys.wlAdminB, { StrategyId: String(publicId) });
      assert.deepEqual(
        siteB.json.Results.map((s: { SubscriptionId: number; IsResale: boolean }) => [s.SubscriptionId, s.IsResale]),
        [[ids.resale, true]],
      );
      const admin = await revenue(population.keys.admin, { SubscriberPersonId: String(carol.personId) });
      assert.deepEqual(
        admin.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.direct],
      );
      const named = await revenue(population.keys.admin, { WhiteLabelSiteId: String(population.siteB) });
      assert.deepEqual(
        named.json.Results.map((s: { SubscriptionId: number }) => s.SubscriptionId),
        [ids.resale],
      );
    });

    test("GetSubscriptionRevenue refusals: the dates alone, a window backwards, another site", async () => {
      const alone = await revenue(population.keys.personA, {});
      assertRefused(alone, 400, "1102", "StrategyId");
      assert.match(alone.json.ResponseStatus.Errors[0].Message, /StrategyOwnerPersonId, SubscriberPersonId/);
      assertRefused(
        await revenue(population.keys.admin, { StartDate: "2026-01-01T00:00:00Z", EndDate: "2026-02-01T00:00:00Z" }),
        400,
        "1102",
        "StrategyId",
      );
      assertRefused(
        await revenue(population.keys.admin, {
          StrategyId: String(publicId),
          StartDate: "2026-02-01T00:00:00Z",
          EndDate: "2026-01-01T00:00:00Z",
        }),
        400,
        "1101",
        "EndDate",
      );
      assertRefused(
        await revenue(population.keys.wlAdminA, { WhiteLabelSiteId: String(population.siteB) }),
        403,
        "1002",
        "WhiteLabelSiteId",
      );
      assertRefused(
        await revenue(population.keys.admin, { StrategyId: String(publicId), StartDate: "yesterday" }),
        400,
        "1101",
        "StartDate",
      );
    });
  });
}
