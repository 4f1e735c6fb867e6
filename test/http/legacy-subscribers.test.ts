import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { legacyCall, sitePlatform } from "../helpers/legacy.js";
import {
  ADMIN_KEY,
  advanceClock,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { alterSubscription, customer, days, priced, subscribed } from "../helpers/subscriptions.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`legacy subscribers (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let platformId: number;
    let platformKey: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      ({ platformId, platformKey } = await sitePlatform(service, population));
      await setClock(service, MARKET_OPEN);
    });
    after(() => service.close());

    const v3 = (command: string, body: Record<string, unknown>, apikey: string, path?: string) =>
      legacyCall(service, command, body, apikey, path);

    test("a person follows a public system, reads its signals as a subscriber, and leaves", async () => {
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: ADMIN_KEY,
        body: {
          StrategyName: "Followed",
          StartingCapital: 100000,
          StrategyOwnerPersonId: population.people.personA,
          InitialSiteVisibility: true,
        },
      });
      const systemid = made.json.Results[0].StrategyId as number;
      await setQuote(service, "AAPL", 200, 200.05);
      await placed(
        service,
        population.keys.personA,
        stockOrder(systemid, "AAPL", "buy", 1, { OrderType: "2", Limit: 190 }),
      );
      const before = await v3("retrieveSignalsWorking", { systemid }, population.keys.personB);
      assert.equal(before.ok, 0, "not yet a subscriber");
      const joined = await v3("subscribeToStrategy", { systemid }, population.keys.personB);
      assert.equal(joined.ok, 1, JSON.stringify(joined));
      const again = await v3("subscribeToStrategy", { systemid }, population.keys.personB);
      assert.equal(again.success.subscription_guid, joined.success.subscription_guid, "one live subscription");
      const read = await v3("retrieveSignalsWorking", { systemid }, population.keys.personB);
      assert.equal(read.ok, 1, JSON.stringify(read));
      assert.equal(read.response.length, 1);
      const trade = await v3(
        "submitSignal",
        { systemid, signal: { action: "BTO", quant: 1, symbol: "AAPL", typeofsymbol: "stock" } },
        population.keys.personB,
      );
      assert.equal(trade.ok, 0, "subscribers read; they do not trade");
      const list = await v3("getListSubscribers", { systemid }, population.keys.personA);
      assert.equal(list.ok, 1);
      const [row] = list.response.listSubscribers;
      assert.equal(row.subscriber_personid, String(population.people.personB));
      assert.equal(row.subscription_status, "active");
      assert.equal(row.subscriber_email, "personb@example.com");
      const notOwner = await v3("getListSubscribers", { systemid }, population.keys.personB);
      assert.equal(notOwner.ok, 0, "only the owner lists subscribers");
      const left = await v3(
        "unsubscribeFromStrategy",
        { systemid, actionType: "unsubscribe_immediate" },
        population.keys.personB,
      );
      assert.equal(left.success.subscription_guid, joined.success.subscription_guid);
      assert.equal((await v3("retrieveSignalsWorking", { systemid }, population.keys.personB)).ok, 0);
      const ended = await v3("getListSubscribers", { systemid }, population.keys.personA);
      assert.equal(ended.response.listSubscribers[0].subscription_status, "ended");
    });

    test("a private system is followed only through a key that reaches it; platform keys act for their site", async () => {
      const hidden = await newStrategy(service, population.keys.personA);
      const stranger = await v3("subscribeToStrategy", { systemid: hidden }, population.keys.personB);
      assert.equal(stranger.ok, 0);
      const path = `/platform/apiv3/${platformId}/subscribeToStrategy`;
      const managed = await v3(
        "subscribeToStrategy",
        { systemid: hidden, personid: population.people.personA },
        platformKey,
        path,
      );
      assert.equal(managed.ok, 1, JSON.stringify(managed));
      const outside = await v3(
        "subscribeToStrategy",
        { systemid: hidden, personid: population.people.personB },
        platformKey,
        path,
      );
      assert.equal(outside.ok, 0, "person B is not of the platform's site");
      assert.equal(outside.error.title, "Unable to access this person");
      const list = await v3("getListSubscribers", { systemid: hidden }, population.keys.personA);
      assert.equal(list.response.listSubscribers[0].isPrivateSubManagement, "1");
      const notFollowing = await v3(
        "unsubscribeFromStrategy",
        { systemid: hidden, actionType: "unsubscribe_immediate" },
        population.keys.personB,
      );
      assert.deepEqual([notFollowing.ok, notFollowing.error.title], [0, "Not found"]);
      const otherAction = await v3(
        "unsubscribeFromStrategy",
        { systemid: hidden, actionType: "unsubscribe_later" },
        population.keys.personA,
      );
      assert.deepEqual([otherAction.ok, otherAction.error.title], [0, "Invalid value"]);
    });
    const publicSystem = async (name: string) => {
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: ADMIN_KEY,
        body: {
          StrategyName: name,
          StartingCapital: 100000,
          StrategyOwnerPersonId: population.people.personA,
          InitialSiteVisibility: true,
        },
      });
      return made.json.Results[0].StrategyId as number;
    };

    test("a paid system is not followed for free; a platform subscribes its own site's customer as a grant it bills itself", async () => {
      const systemid = await publicSystem("Paid Legacy");
      await priced(service, systemid, "49");
      const free = await v3("subscribeToStrategy", { systemid }, population.keys.personB);
      assert.deepEqual([free.ok, free.error.title], [0, "Refused"]);
      assert.match(free.error.message, /49 a month: subscribe through the checkout/);
      const byAdmin = await v3("subscribeToStrategy", { systemid, personid: population.people.personB }, ADMIN_KEY);
      assert.equal(byAdmin.ok, 0, "a service admin's key is no platform billing its customer");
      const path = `/platform/apiv3/${platformId}/subscribeToStrategy`;
      const bob = await customer(service, "legacy-bob", population.siteA);
      const granted = await v3("subscribeToStrategy", { systemid, personid: bob.personId }, platformKey, path);
      assert.equal(granted.ok, 1, JSON.stringify(granted));
      const row = await service.storage.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("guid", "=", granted.success.subscription_guid)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        [row.lane, row.kind, row.site_id, row.platform_id, row.price_cents, row.paid_until, row.ended_at],
        ["grant", "real", population.siteA, platformId, 0, null, null],
      );
      assert.equal((await v3("retrieveSignalsWorking", { systemid }, bob.key)).ok, 1, "the grant gives access");
      const listed = await v3("listAllSystems", {}, bob.key);
      assert.deepEqual(
        listed.response.map((s: { system_id: string }) => Number(s.system_id)),
        [systemid],
        "a system with real-time access",
      );
      const [entry] = (await v3("getListSubscribers", { systemid }, population.keys.personA)).response.listSubscribers;
      assert.deepEqual(
        [entry.isPrivateSubManagement, entry.custom_subscription_guid, entry.custom_subscription_amount],
        ["1", row.guid, "0.00"],
      );
    });

    test("getListSubscribers fills the price and billing of each subscription; listAllSystems leaves simulations out", async () => {
      const systemid = await publicSystem("Billed Legacy");
      await priced(service, systemid, "49");
      const now = service.app.runtime.clock.nowMs();
      const payer = await customer(service, "legacy-payer", population.siteB);
      const paid = await subscribed(service, payer.personId, systemid, {
        platform_id: null,
        kind: "real",
        lane: "resale",
        site_id: population.siteB,
        price_cents: 4900,
        base_price_cents: 4900,
        markup_cents: 500,
        billing_interval: "month",
        billing_interval_count: 1,
        paid_until: now + days(30),
        next_charge_at: now + days(30),
        next_charge_cents: 4900,
        failure_count: 2,
      });
      const sim = await customer(service, "legacy-sim", population.siteB);
      await subscribed(service, sim.personId, systemid, { platform_id: null, kind: "simulated" });
      const list = await v3("getListSubscribers", { systemid }, population.keys.personA);
      assert.equal(list.ok, 1, JSON.stringify(list));
      const [row, simulated] = list.response.listSubscribers;
      assert.deepEqual(
        {
          guid: row.subscription_guid,
          amount: row.custom_subscription_amount,
          goodUntil: row.custom_subscription_good_until_time,
          remaining: row.custom_subscription_num_bill_periods_remaining,
          failed: row.recurring_billing_num_failed_transacts,
          next: row.recurring_next_billing_amount_default,
          off: row.recurring_billing_turned_off_when,
          managed: row.isPrivateSubManagement,
        },
        {
          guid: paid.guid,
          amount: "49.00",
          goodUntil: "2026-04-09 10:00:00",
          remaining: "",
          failed: "2",
          next: "49.00",
          off: "",
          managed: "0",
        },
      );
      assert.deepEqual(
        [simulated.custom_subscription_amount, simulated.recurring_next_billing_amount_default],
        ["", ""],
      );
      assert.deepEqual(
        (await v3("listAllSystems", {}, payer.key)).response.map((s: { system_id: string }) => Number(s.system_id)),
        [systemid],
      );
      assert.deepEqual(
        (await v3("listAllSystems", {}, sim.key)).response,
        [],
        "a simulation gives no real-time access",
      );

      // Stopping at the end of the term: billing stops now, access runs until the paid period ends.
      const stop = { systemid, personid: payer.personId, actionType: "unsubscribe_end_of_term" };
      const stopped = await v3("unsubscribeFromStrategy", stop, payer.key);
      assert.equal(stopped.success.subscription_guid, paid.guid);
      assert.equal((await v3("unsubscribeFromStrategy", stop, payer.key)).ok, 1, "repeating it changes nothing");
      const [after] = (await v3("getListSubscribers", { systemid }, population.keys.personA)).response.listSubscribers;
      assert.deepEqual(
        [
          after.subscription_status,
          after.recurring_next_billing_amount_default,
          after.custom_subscription_num_bill_periods_remaining,
          after.recurring_billing_turned_off_when,
        ],
        ["active", "", "0", "2026-04-09 10:00:00"],
      );
      assert.equal((await v3("retrieveSignalsWorking", { systemid }, payer.key)).ok, 1, "paid access runs on");
      await advanceClock(service, 31 * 86_400);
      assert.equal((await v3("retrieveSignalsWorking", { systemid }, payer.key)).ok, 0, "the term is over");
      assert.deepEqual((await v3("listAllSystems", {}, payer.key)).response, []);
      await setClock(service, MARKET_OPEN);
    });

    test("unsubscribeFromStrategy: end of term without a term ends now; a lapsed subscription gives no access; bad values refused", async () => {
      const systemid = await publicSystem("Free Legacy");
      const joined = await v3("subscribeToStrategy", { systemid }, population.keys.personB);
      assert.equal(joined.ok, 1);
      const badPositions = await v3(
        "unsubscribeFromStrategy",
        { systemid, autoTradePositionsAndOrders: "sell_everything" },
        population.keys.personB,
      );
      assert.deepEqual([badPositions.ok, badPositions.error.title], [0, "Invalid value"]);
      const left = await v3(
        "unsubscribeFromStrategy",
        { systemid, actionType: "unsubscribe_end_of_term", autoTradePositionsAndOrders: "leave_in_place" },
        population.keys.personB,
      );
      assert.equal(left.ok, 1, JSON.stringify(left));
      assert.equal(
        (await v3("retrieveSignalsWorking", { systemid }, population.keys.personB)).ok,
        0,
        "free: ended now",
      );

      const lapsing = await customer(service, "legacy-lapsing", population.siteB);
      const row = await subscribed(service, lapsing.personId, systemid, {
        platform_id: null,
        kind: "real",
        lane: "direct",
        price_cents: 4900,
        paid_until: service.app.runtime.clock.nowMs() + days(1),
      });
      assert.equal((await v3("retrieveSignalsWorking", { systemid }, lapsing.key)).ok, 1);
      await alterSubscription(service, row.id, { paid_until: service.app.runtime.clock.nowMs() - 1 });
      assert.equal((await v3("retrieveSignalsWorking", { systemid }, lapsing.key)).ok, 0, "lapsed: no access");
    });

    test("subscribing supersedes a live simulated subscription with a real one", async () => {
      const systemid = await publicSystem("Simulated First");
      const sim = await customer(service, "legacy-superseded", population.siteB);
      const simulated = await subscribed(service, sim.personId, systemid, { platform_id: null, kind: "simulated" });
      assert.equal((await v3("retrieveSignalsWorking", { systemid }, sim.key)).ok, 0);
      const joined = await v3("subscribeToStrategy", { systemid }, sim.key);
      assert.notEqual(joined.success.subscription_guid, simulated.guid);
      assert.equal((await v3("retrieveSignalsWorking", { systemid }, sim.key)).ok, 1);
      const old = await service.storage.db
        .selectFrom("subscriptions")
        .select(["end_reason", "live_key"])
        .where("id", "=", simulated.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(old, { end_reason: "superseded", live_key: null });
    });
  });
}
