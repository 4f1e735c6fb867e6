import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
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
  });
}
