import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey } from "../../src/services/keys.js";
import { createPerson } from "../../src/services/people.js";
import { legacyCall, sitePlatform } from "../helpers/legacy.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { assertRefused, cancelOrder, MARKET_OPEN, newOrder, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * One read rule for a strategy's orders, positions and trades on both APIs:
 * whoever reads a strategy's signals through v3 reads its orders and
 * positions through v4, and the reverse; reading never lets anyone trade.
 */
for (const backend of BACKENDS) {
  describe(`read rights on v3 and v4 alike (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let platformId: number;
    let platformKey: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      ({ platformId, platformKey } = await sitePlatform(service, population));
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "RRX", 50, 50.05);
    });
    after(() => service.close());

    const v3 = (command: string, body: Record<string, unknown>, apikey: string, path?: string) =>
      legacyCall(service, command, body, apikey, path);
    const v4 = (operation: string, query: Record<string, string>, key: string) =>
      service.call("GEN", "GET", `/Strategies/${operation}`, { key, query });

    /** The strategy's reads through v4 and v3 by this key: v4 statuses and v3 ok flags. */
    const reads = async (systemid: number, key: string) => ({
      activeOrders: (await v4("GetStrategyActiveOrders", { StrategyIds: String(systemid) }, key)).status,
      openPositions: (await v4("GetStrategyOpenPositions", { StrategyIds: String(systemid) }, key)).status,
      historicalOrders: (await v4("GetStrategyHistoricalOrders", { StrategyId: String(systemid) }, key)).status,
      retrieveSignalsWorking: (await v3("retrieveSignalsWorking", { systemid }, key)).ok,
      retrieveSignalsAll: (await v3("retrieveSignalsAll", { systemid }, key)).ok,
      requestAllTrades_overview: (await v3("requestAllTrades_overview", { systemid }, key)).ok,
    });
    const readable = {
      activeOrders: 200,
      openPositions: 200,
      historicalOrders: 200,
      retrieveSignalsWorking: 1,
      retrieveSignalsAll: 1,
      requestAllTrades_overview: 1,
    };
    /** A public strategy's reads by a key that may not read its orders: v4 says 403. */
    const unreadable = {
      activeOrders: 403,
      openPositions: 403,
      historicalOrders: 403,
      retrieveSignalsWorking: 0,
      retrieveSignalsAll: 0,
      requestAllTrades_overview: 0,
    };
    /** A private strategy's reads by such a key: to v4 it is not there (404). */
    const hidden = { ...unreadable, activeOrders: 404, openPositions: 404, historicalOrders: 404 };

    /** A strategy of person A with a resting order and an open position. */
    async function tradedStrategy(isPublic: boolean) {
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: ADMIN_KEY,
        body: {
          StrategyName: "Read Rights",
          StartingCapital: 100000,
          StrategyOwnerPersonId: population.people.personA,
          InitialSiteVisibility: isPublic,
        },
      });
      assert.equal(made.status, 200, made.text);
      const systemid = made.json.Results[0].StrategyId as number;
      const resting = await placed(
        service,
        population.keys.personA,
        stockOrder(systemid, "RRX", "buy", 1, { OrderType: "2", Limit: 40 }),
      );
      await placed(service, population.keys.personA, stockOrder(systemid, "RRX", "buy", 10));
      return { systemid, resting: resting.SignalId };
    }

    /** A person of site A besides the owner, with a World key and a key of the site's platform. */
    async function siteMember(email: string) {
      const runtime = service.app.runtime;
      const { personId } = await createPerson(runtime, {
        email,
        firstName: "Member",
        lastName: "Tester",
        role: "person",
        siteId: population.siteA,
      });
      const world = (await createKey(runtime, { personId })).accessKey;
      const platform = (await createKey(runtime, { personId, platformId })).accessKey;
      return { personId, world, platform };
    }

    test("a subscriber reads orders, positions and trades through both APIs until the subscription ends; never trades", async () => {
      const { systemid, resting } = await tradedStrategy(true);
      const subscriber = population.keys.personB;
      assert.deepEqual(await reads(systemid, subscriber), unreadable, "not yet a subscriber");

      const joined = await v3("subscribeToStrategy", { systemid }, subscriber);
      assert.equal(joined.ok, 1, JSON.stringify(joined));
      assert.deepEqual(await reads(systemid, subscriber), readable);
      const active = await v4("GetStrategyActiveOrders", { StrategyIds: String(systemid) }, subscriber);
      const working = await v3("retrieveSignalsWorking", { systemid }, subscriber);
      assert.deepEqual(
        active.json.Results.map((o: { SignalId: number }) => String(o.SignalId)),
        working.response.map((s: { signal_id: string }) => s.signal_id),
        "the same working orders on both APIs",
      );
      assert.deepEqual(
        working.response.map((s: { signal_id: string }) => s.signal_id),
        [String(resting)],
      );
      const held = await v4("GetStrategyOpenPositions", { StrategyIds: String(systemid) }, subscriber);
      assert.equal(held.json.Results[0].Quantity, 10);

      // The commands not open to subscribers stay closed, and reading is not trading.
      const trades = await v3("requestTrades", { systemid }, subscriber);
      assert.deepEqual([trades.ok, trades.error?.title], [0, "Unable to access this systemid"]);
      assertRefused(await newOrder(service, subscriber, stockOrder(systemid, "RRX", "buy", 1)), 403, "1002");
      assertRefused(await cancelOrder(service, subscriber, systemid, resting), 403, "1002");
      const signal = await v3(
        "submitSignal",
        { systemid, signal: { action: "BTO", quant: 1, symbol: "RRX", typeofsymbol: "stock" } },
        subscriber,
      );
      assert.deepEqual([signal.ok, signal.error?.title], [0, "Unable to access this systemid"]);
      const cancel = await v3("cancelSignal", { systemid, signalid: resting }, subscriber);
      assert.equal(cancel.ok, 0);

      const left = await v3("unsubscribeFromStrategy", { systemid, actionType: "unsubscribe_immediate" }, subscriber);
      assert.equal(left.ok, 1, JSON.stringify(left));
      assert.deepEqual(await reads(systemid, subscriber), unreadable, "a lapsed subscription stops both");
    });

    test("a strategy that does not exist is 404 on v4 and out of reach on v3", async () => {
      const key = population.keys.personB;
      assertRefused(await v4("GetStrategyActiveOrders", { StrategyIds: "987654321" }, key), 404, "2013");
      assertRefused(await v4("GetStrategyOpenPositions", { StrategyIds: "987654321" }, key), 404, "2013");
      for (const command of ["retrieveSignalsWorking", "retrieveSignalsAll", "requestAllTrades_overview"]) {
        const r = await v3(command, { systemid: 987654321 }, key);
        assert.deepEqual([r.ok, r.error?.title], [0, "Unable to access this systemid"], command);
      }
    });

    test("a private strategy's subscriber reads its record through v4 as through v3", async () => {
      const { systemid } = await tradedStrategy(false);
      const member = await siteMember("private-follower@example.com");
      const closed = () =>
        service.call("WL", "GET", "/Strategies/GetStrategyHistoricalClosedTrades", {
          key: member.world,
          query: { StrategyId: String(systemid) },
        });
      assertRefused(await closed(), 404, "2013");
      assertRefused(
        await v4("GetStrategyHistoricalDailyEquity", { StrategyId: String(systemid) }, member.world),
        404,
        "2013",
      );
      assert.equal((await v3("retrieveSystemEquity", { systemid }, member.world)).ok, 0);

      // A private system is followed through a key that reaches it: here, the site's platform.
      const joined = await v3(
        "subscribeToStrategy",
        { systemid, personid: member.personId },
        platformKey,
        `/platform/apiv3/${platformId}/subscribeToStrategy`,
      );
      assert.equal(joined.ok, 1, JSON.stringify(joined));
      assert.equal((await closed()).status, 200);
      const daily = await v4("GetStrategyHistoricalDailyEquity", { StrategyId: String(systemid) }, member.world);
      assert.equal(daily.status, 200, daily.text);
      assert.equal((await v3("retrieveSystemEquity", { systemid }, member.world)).ok, 1);
      assert.deepEqual(await reads(systemid, member.world), readable);
      // Now that it sees the strategy, trading it is refused as not allowed, no longer as absent.
      assertRefused(await newOrder(service, member.world, stockOrder(systemid, "RRX", "buy", 1)), 403, "1002");
    });

    test("a platform key reads on v4 what it reaches in Private Platform context; trading stays with those who may trade", async () => {
      const { systemid } = await tradedStrategy(false);
      const member = await siteMember("platform-reader@example.com");
      const inPlatform = await v3(
        "retrieveSignalsWorking",
        { systemid },
        member.platform,
        `/platform/apiv3/${platformId}/retrieveSignalsWorking`,
      );
      assert.equal(inPlatform.ok, 1, JSON.stringify(inPlatform));
      assert.equal(
        (await v4("GetStrategyActiveOrders", { StrategyIds: String(systemid) }, member.platform)).status,
        200,
      );
      assert.equal(
        (await v4("GetStrategyOpenPositions", { StrategyIds: String(systemid) }, member.platform)).status,
        200,
      );
      // World context is the key's own account: no platform there.
      const inWorld = await v3("retrieveSignalsWorking", { systemid }, member.platform);
      assert.deepEqual([inWorld.ok, inWorld.error?.title], [0, "Unable to access this systemid"]);
      // The same person's key without the platform reaches nothing of person A's.
      assert.deepEqual(await reads(systemid, member.world), hidden);
      assertRefused(await newOrder(service, member.world, stockOrder(systemid, "RRX", "buy", 1)), 404, "2013");
      // v4 trading is for those who may trade the strategy, whatever the key reads.
      assertRefused(await newOrder(service, member.platform, stockOrder(systemid, "RRX", "buy", 1)), 403, "1002");
    });

    test("site administrators read their members' strategies through v3 as through v4, and act only through a platform", async () => {
      const { systemid } = await tradedStrategy(false);
      assert.deepEqual(await reads(systemid, population.keys.wlAdminA), readable);
      assert.deepEqual(await reads(systemid, population.keys.geoAdmin), readable, "site A lies in the geo-site");
      assert.deepEqual(await reads(systemid, population.keys.wlAdminB), hidden);
      const trades = await v3("requestTradesOpen", { systemid }, population.keys.wlAdminA);
      assert.equal(trades.ok, 1, JSON.stringify(trades));
      assert.equal(trades.response.length, 1);
      const signal = await v3(
        "submitSignal",
        { systemid, signal: { action: "BTO", quant: 1, symbol: "RRX", typeofsymbol: "stock" } },
        population.keys.wlAdminA,
      );
      assert.deepEqual([signal.ok, signal.error?.title], [0, "Unable to access this systemid"], "World context");
    });
  });
}
