import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPerson } from "../../src/services/people.js";
import { subscribe } from "../../src/services/subscriptions.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/** StartSim, StopSim and GetSimResults through the API, as a white-label site and its customers use them. */

for (const backend of BACKENDS) {
  describe(`simulated subscriptions (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** Public strategy of site B's customer, trading AAPL. */
    let publicB = 0;
    /** Private strategy of site B's customer: site A does not know it. */
    let privateB = 0;
    /** Private strategy of another customer of site A: site A may simulate it. */
    let privateA = 0;
    let deadOne = 0;
    /** Person A's own strategy. */
    let ownA = 0;
    /** Public strategy person A subscribes to for real. */
    let followedForReal = 0;
    let realSubscription = "";

    const wl = (method: string, path: string, key: string, input: Record<string, unknown>) =>
      service.call(
        "WL",
        method,
        `/Autotrade/${path}`,
        method === "POST" ? { key, body: input } : { key, query: queryOf(input) },
      );
    const queryOf = (input: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(input).map(([k, v]) => [k, String(v)]));
    const startSim = (key: string, input: Record<string, unknown>) => wl("POST", "StartSim", key, input);
    const stopSim = (key: string, input: Record<string, unknown>) => wl("DELETE", "StopSim", key, input);
    const results = (key: string, query: Record<string, unknown> = {}, server: "WL" | "GEN" | "GEO" = "WL") =>
      service.call(server, "GET", "/Autotrade/GetSimResults", { key, query: queryOf(query) });

    const publicStrategy = async (ownerPersonId: number, name: string) => {
      const r = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        body: {
          StrategyName: name,
          StartingCapital: 100_000,
          StrategyOwnerPersonId: ownerPersonId,
          InitialSiteVisibility: true,
        },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0].StrategyId as number;
    };

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      p = await populate(service);
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 200, 200.05);
      await setQuote(service, "SPY", 500, 500.02);
      publicB = await publicStrategy(p.people.personB, "Public B");
      await placed(service, p.keys.personB, stockOrder(publicB, "AAPL", "buy", 100));
      privateB = await newStrategy(service, p.keys.personB, 50_000, "Private B");
      const { personId: otherA } = await createPerson(service.app.runtime, {
        email: "other-a@example.com",
        firstName: "Other",
        lastName: "Customer",
        role: "person",
        siteId: p.siteA,
      });
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: p.keys.wlAdminA,
        body: { StrategyName: "Private A", StartingCapital: 20_000, StrategyOwnerPersonId: otherA },
      });
      assert.equal(made.status, 200, made.text);
      privateA = made.json.Results[0].StrategyId;
      deadOne = await publicStrategy(p.people.personB, "Retired B");
      await service.storage.db.updateTable("strategies").set({ is_alive: 0 }).where("id", "=", deadOne).execute();
      ownA = await publicStrategy(p.people.personA, "Own A");
      followedForReal = await publicStrategy(p.people.personB, "Followed B");
      realSubscription = await subscribe(service.app.runtime, followedForReal, p.people.personA, null);
    });
    after(() => service?.close());

    test("StartSim starts what it can and lists the rest in Skipped with reasons", async () => {
      const r = await startSim(p.keys.wlAdminA, {
        PersonId: p.people.personA,
        StrategyIds: [publicB, privateB, privateA, deadOne, ownA, followedForReal, 987_654],
      });
      assert.equal(r.status, 200, r.text);
      const [outcome] = r.json.Results;
      assert.equal(outcome.PersonId, p.people.personA);
      assert.deepEqual(
        outcome.Started.map((s: { StrategyId: number }) => s.StrategyId),
        [publicB, privateA],
      );
      const details = await service.call("WL", "GET", "/Strategies/GetStrategyDetails", {
        query: { StrategyId: String(publicB) },
      });
      assert.equal(details.status, 200, details.text);
      assert.equal(outcome.Started[0].StartEquity, details.json.Results[0].Equity);
      assert.equal(outcome.Started[1].StartEquity, 20_000);
      assert.equal(outcome.Started[0].StartDate, "2026-03-10T14:00:00.000Z");
      const real = await service.storage.db
        .selectFrom("subscriptions")
        .select("id")
        .where("guid", "=", realSubscription)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        outcome.Skipped.map((s: { StrategyId: number; Reason: string; SubscriptionId: number | null }) => [
          s.StrategyId,
          s.Reason,
          s.SubscriptionId,
        ]),
        [
          [privateB, "not_found", null],
          [deadOne, "not_alive", null],
          [ownA, "own_strategy", null],
          [987_654, "not_found", null],
          [followedForReal, "already_subscribed", real.id],
        ],
      );
      const stored = await service.storage.db
        .selectFrom("subscriptions")
        .select(["kind", "lane", "site_id", "price_cents", "paid_until"])
        .where("id", "=", outcome.Started[0].SubscriptionId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(stored, { kind: "simulated", lane: "free", site_id: p.siteA, price_cents: 0, paid_until: null });

      const again = await startSim(p.keys.wlAdminA, { PersonId: p.people.personA, StrategyIds: [publicB] });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.json.Results[0].Started, []);
      assert.deepEqual(again.json.Results[0].Skipped[0], {
        StrategyId: publicB,
        Reason: "already_simulated",
        Message: `Strategy ${publicB} is already simulated`,
        SubscriptionId: outcome.Started[0].SubscriptionId,
      });
    });

    test("StartSim refusals: the list's size, the site, the customer, the caller", async () => {
      const customer = p.people.personA;
      assertRefused(
        await startSim(p.keys.wlAdminA, { PersonId: customer, StrategyIds: [1, 2, 3, 4, 5, 6, 7, 8, 9] }),
        400,
        "StrategyIds",
      );
      assertRefused(await startSim(p.keys.wlAdminA, { PersonId: customer, StrategyIds: [] }), 400, "StrategyIds");
      assertRefused(await startSim(p.keys.wlAdminA, { StrategyIds: [publicB] }), 400, "PersonId", "1102");
      assertRefused(await startSim(p.keys.wlAdminA, { PersonId: "x", StrategyIds: [publicB] }), 400, "PersonId");
      // Another site's customer does not exist for this site.
      assertRefused(
        await startSim(p.keys.wlAdminA, { PersonId: p.people.personB, StrategyIds: [publicB] }),
        404,
        "PersonId",
        "2013",
      );
      assertRefused(
        await startSim(p.keys.wlAdminA, { PersonId: customer, StrategyIds: [publicB], WhiteLabelSiteId: p.siteB }),
        403,
        "WhiteLabelSiteId",
      );
      // A service admin names the site; the customer must belong to it.
      assertRefused(
        await startSim(p.keys.admin, { PersonId: customer, StrategyIds: [publicB] }),
        400,
        "WhiteLabelSiteId",
      );
      assertRefused(
        await startSim(p.keys.admin, { PersonId: customer, StrategyIds: [publicB], WhiteLabelSiteId: p.siteB }),
        404,
        "PersonId",
      );
      assertRefused(await startSim(p.keys.personA, { PersonId: customer, StrategyIds: [publicB] }), 403);
      assertRefused(await startSim(p.keys.geoAdmin, { PersonId: customer, StrategyIds: [publicB] }), 403);
      const r = await service.call("GEN", "POST", "/Autotrade/StartSim", {
        key: p.keys.wlAdminA,
        body: { PersonId: customer, StrategyIds: [publicB] },
      });
      assert.equal(r.status, 404, "StartSim is a white-label operation");
    });

    test("GetSimResults: measured since the start, ready after the first close", async () => {
      const before = await results(p.keys.personA);
      assert.equal(before.status, 200, before.text);
      const fresh = before.json.Results.find((x: { StrategyId: number }) => x.StrategyId === publicB);
      assert.equal(fresh.IsResultReady, false);
      assert.equal(fresh.EndEquity, null);
      assert.equal(fresh.TotalReturn, null);
      assert.equal(fresh.Account, null);
      assert.equal(fresh.ScalingFactor, 1);
      assert.equal(fresh.FirstName, "personA");

      await setQuote(service, "AAPL", 210, 210.05);
      await setClock(service, "2026-03-10T21:00:00Z");
      const after = await results(p.keys.personA);
      const ready = after.json.Results.find((x: { StrategyId: number }) => x.StrategyId === publicB);
      assert.equal(ready.IsResultReady, true);
      assert.ok(ready.EndEquity > ready.StartEquity, after.text);
      assert.equal(ready.TotalDelta, ready.EndEquity - ready.StartEquity);
      assert.ok(Math.abs(ready.TotalReturn - ready.TotalDelta / ready.StartEquity) < 1e-12);
      assert.equal(ready.EndDate, null);

      // GEO shows no SubscriptionId nor IsResultReady; GEN and WL do.
      const geo = await results(p.keys.personA, {}, "GEO");
      assert.equal(geo.status, 200, geo.text);
      assert.ok(geo.json.Results.length > 0);
      for (const row of geo.json.Results) {
        assert.equal("SubscriptionId" in row, false);
        assert.equal("IsResultReady" in row, false);
      }
      const gen = await results(p.keys.personA, {}, "GEN");
      assert.equal(typeof gen.json.Results[0].SubscriptionId, "number");
    });

    test("GetSimResults: who sees what", async () => {
      const ids = (r: Awaited<ReturnType<typeof results>>) =>
        r.json.Results.map((x: { PersonId: number; StrategyId: number }) => `${x.PersonId}:${x.StrategyId}`).sort();
      const mine = ids(await results(p.keys.personA));
      assert.equal(mine.length, 2);
      assert.deepEqual(ids(await results(p.keys.wlAdminA)), mine);
      assert.deepEqual(ids(await results(p.keys.geoAdmin)), mine);
      assert.deepEqual(ids(await results(p.keys.admin, { WhiteLabelSiteId: p.siteA })), mine);
      assert.deepEqual(ids(await results(p.keys.admin, { PersonId: p.people.personA })), mine);
      assert.deepEqual(ids(await results(p.keys.wlAdminB)), []);
      assert.deepEqual(ids(await results(p.keys.personB)), []);
      assertRefused(await results(p.keys.personB, { PersonId: p.people.personA }), 403, "PersonId");
      assertRefused(await results(p.keys.wlAdminB, { PersonId: p.people.personA }), 403, "PersonId");
      assertRefused(await results(p.keys.wlAdminB, { WhiteLabelSiteId: p.siteA }), 403, "WhiteLabelSiteId");
      assertRefused(await results(p.keys.personA, { PersonId: 987_654 }), 404, "PersonId");
      assertRefused(await results(p.keys.personA, { MaxAccountDays: 366 }), 400, "MaxAccountDays");
      assertRefused(await results(p.keys.personA, { MaxAccountDays: 0 }), 400, "MaxAccountDays");
      assertRefused(await results(p.keys.personA, { MinLoginDays: -1 }), 400, "MinLoginDays");
      assertRefused(await results(p.keys.personA, { ActiveOnly: "maybe" }), 400, "ActiveOnly");
    });

    test("GetSimResults filters: MinLoginDays by the customer's last sign-in", async () => {
      const now = Date.parse("2026-03-10T21:00:00Z");
      await service.storage.db
        .updateTable("persons")
        .set({ last_logged_in: now - 2 * 86_400_000 })
        .where("id", "=", p.people.personA)
        .execute();
      assert.equal((await results(p.keys.wlAdminA, { MinLoginDays: 1 })).json.Results.length, 0);
      assert.equal((await results(p.keys.wlAdminA, { MinLoginDays: 3 })).json.Results.length, 2);
    });

    test("StopSim ends the simulation; again is a no-op; a real subscription is refused", async () => {
      const stopped = await stopSim(p.keys.wlAdminA, { PersonId: p.people.personA, StrategyId: publicB });
      assert.equal(stopped.status, 200, stopped.text);
      const [first] = stopped.json.Results;
      assert.equal(typeof first.SubscriptionId, "number");
      assert.equal(first.EndDate, "2026-03-10T21:00:00.000Z");
      const again = await stopSim(p.keys.wlAdminA, { PersonId: p.people.personA, StrategyId: publicB });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.json.Results[0], {
        PersonId: p.people.personA,
        StrategyId: publicB,
        SubscriptionId: null,
        EndDate: null,
      });

      const real = await stopSim(p.keys.wlAdminA, { PersonId: p.people.personA, StrategyId: followedForReal });
      assertRefused(real, 409, "StrategyId", "1202");
      assert.equal(typeof real.json.ResponseStatus.Errors[0].Meta.SubscriptionId, "number");
      const stillLive = await service.storage.db
        .selectFrom("subscriptions")
        .select("ended_at")
        .where("guid", "=", realSubscription)
        .executeTakeFirstOrThrow();
      assert.equal(stillLive.ended_at, null);

      assertRefused(
        await stopSim(p.keys.wlAdminB, { PersonId: p.people.personA, StrategyId: publicB }),
        404,
        "PersonId",
      );
      assertRefused(await stopSim(p.keys.personA, { PersonId: p.people.personA, StrategyId: publicB }), 403);
      assertRefused(await stopSim(p.keys.wlAdminA, { PersonId: p.people.personA }), 400, "StrategyId");

      // Ended simulations leave the active list and stay in the history, measured at the last close before the end.
      await setQuote(service, "AAPL", 220, 220.05);
      await setClock(service, "2026-03-11T21:00:00Z");
      const active = await results(p.keys.personA);
      assert.deepEqual(
        active.json.Results.map((x: { StrategyId: number }) => x.StrategyId),
        [privateA],
      );
      const history = await results(p.keys.personA, { ActiveOnly: false });
      const ended = history.json.Results.find((x: { StrategyId: number }) => x.StrategyId === publicB);
      assert.equal(ended.EndDate, "2026-03-10T21:00:00.000Z");
      assert.equal(ended.IsResultReady, true);
      const marks = await service.call("WL", "GET", "/Strategies/GetStrategyHistoricalDailyEquity", {
        query: { StrategyId: String(publicB), CommissionPlan: "Default" },
      });
      assert.equal(ended.EndEquity, marks.json.Results[0].MonthlyResults[0].Equity);

      // A stopped simulation may start afresh.
      const restarted = await startSim(p.keys.wlAdminA, {
        PersonId: p.people.personA,
        StrategyIds: [publicB, publicB],
      });
      assert.equal(restarted.json.Results[0].Started.length, 1, restarted.text);
      // The same id twice in one call: the second finds the first live.
      assert.deepEqual(
        restarted.json.Results[0].Skipped.map((s: { StrategyId: number; Reason: string }) => [s.StrategyId, s.Reason]),
        [[publicB, "already_simulated"]],
      );
      assert.notEqual(restarted.json.Results[0].Started[0].SubscriptionId, first.SubscriptionId);
    });

    test("GetSimResults: MaxAccountDays leaves out older simulations", async () => {
      await setClock(service, "2026-03-14T21:00:00Z");
      const all = await results(p.keys.personA, { ActiveOnly: false });
      assert.equal(all.json.Results.length, 3);
      const recent = await results(p.keys.personA, { ActiveOnly: false, MaxAccountDays: 3 });
      assert.deepEqual(
        recent.json.Results.map((x: { StrategyId: number }) => x.StrategyId),
        [publicB],
      );
    });
  });
}
