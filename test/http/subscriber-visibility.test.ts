import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { legacyCall } from "../helpers/legacy.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { alterSubscription, customer, days, priced, subscribed } from "../helpers/subscriptions.js";
import { assertRefused, MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * Live signals, orders and positions of a strategy go to its owner, its
 * administrators and the subscribers whose subscription gives access (real,
 * live, paid up), on v4 and v3 alike. Simulated subscribers see aggregate
 * performance only; lapsed and ended ones see nothing more than strangers.
 */
for (const backend of BACKENDS) {
  describe(`subscriber visibility (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let publicId: number;
    let privateId: number;
    const keys: Record<"paying" | "simulating" | "lapsed" | "ended" | "stranger", string> = {
      paying: "",
      simulating: "",
      lapsed: "",
      ended: "",
      stranger: "",
    };

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      await setClock(service, MARKET_OPEN);
      const now = service.app.runtime.clock.nowMs();
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: population.keys.wlAdminA,
        body: {
          StrategyName: "Watched",
          StartingCapital: 100000,
          StrategyOwnerPersonId: population.people.personA,
          InitialSiteVisibility: true,
        },
      });
      publicId = made.json.Results[0].StrategyId;
      await priced(service, publicId, "49");
      privateId = await newStrategy(service, population.keys.personA, 100_000, "Watched Privately");
      await setQuote(service, "AAPL", 200, 200.05);
      for (const strategyId of [publicId, privateId]) {
        await placed(
          service,
          population.keys.personA,
          stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 190 }),
        );
      }
      const paidUp = {
        platform_id: null,
        kind: "real" as const,
        lane: "direct" as const,
        price_cents: 4900,
        base_price_cents: 4900,
        billing_interval: "month" as const,
        billing_interval_count: 1,
      };
      for (const name of Object.keys(keys) as (keyof typeof keys)[]) {
        const person = await customer(service, name, population.siteB);
        keys[name] = person.key;
        for (const strategyId of [publicId, privateId]) {
          if (name === "paying")
            await subscribed(service, person.personId, strategyId, { ...paidUp, paid_until: now + days(30) });
          if (name === "simulating") {
            await subscribed(service, person.personId, strategyId, { platform_id: null, kind: "simulated" });
          }
          if (name === "lapsed")
            await subscribed(service, person.personId, strategyId, { ...paidUp, paid_until: now - 1 });
          if (name === "ended") {
            const row = await subscribed(service, person.personId, strategyId, {
              ...paidUp,
              paid_until: now + days(30),
            });
            await alterSubscription(service, row.id, { ended_at: now - 1, end_reason: "immediate" });
          }
        }
      }
    });
    after(() => service.close());

    const v4Reads = (strategyId: number) =>
      [
        ["/Strategies/GetStrategyActiveOrders", { StrategyIds: String(strategyId) }],
        ["/Strategies/GetStrategyOpenPositions", { StrategyIds: String(strategyId) }],
        ["/Strategies/GetStrategyHistoricalOrders", { StrategyId: String(strategyId) }],
      ] as const;
    const v3Reads = ["retrieveSignalsWorking", "retrieveSignalsAll", "requestAllTrades_overview"];

    test("a paying real subscriber reads the orders and signals on v4 and v3; the owner does too", async () => {
      for (const key of [keys.paying, population.keys.personA]) {
        for (const strategyId of [publicId, privateId]) {
          for (const [path, query] of v4Reads(strategyId)) {
            const r = await service.call("WL", "GET", path, { key, query });
            assert.equal(r.status, 200, `${path}: ${r.text}`);
          }
          const working = await service.call("GEN", "GET", "/Strategies/GetStrategyActiveOrders", {
            key,
            query: { StrategyIds: String(strategyId) },
          });
          assert.equal(working.json.Results.length, 1);
          for (const command of v3Reads) {
            const r = await legacyCall(service, command, { systemid: strategyId }, key);
            assert.equal(r.ok, 1, `${command}: ${JSON.stringify(r)}`);
          }
        }
      }
    });

    test("simulated, lapsed and ended subscribers read no orders: 403 on a public strategy, 404 on a private one", async () => {
      for (const who of ["simulating", "lapsed", "ended", "stranger"] as const) {
        for (const [path, query] of v4Reads(publicId)) {
          assertRefused(await service.call("GEN", "GET", path, { key: keys[who], query }), 403, "1002");
        }
        for (const [path, query] of v4Reads(privateId)) {
          assertRefused(await service.call("WL", "GET", path, { key: keys[who], query }), 404, "2013");
        }
        for (const strategyId of [publicId, privateId]) {
          for (const command of v3Reads) {
            const r = await legacyCall(service, command, { systemid: strategyId }, keys[who]);
            assert.deepEqual([r.ok, r.error?.title], [0, "Unable to access this systemid"], `${who} ${command}`);
          }
        }
      }
    });

    test("a simulated subscriber sees the aggregate performance of a private strategy; lapsed and ended ones do not", async () => {
      const details = (key: string) =>
        service.call("WL", "GET", "/Strategies/GetStrategyDetails", { key, query: { StrategyId: String(privateId) } });
      const seen = await details(keys.simulating);
      assert.equal(seen.status, 200, seen.text);
      assert.equal(seen.json.Results[0].StrategyName, "Watched Privately");
      const equity = await legacyCall(service, "retrieveSystemEquity", { systemid: privateId }, keys.simulating);
      assert.equal(equity.ok, 1, JSON.stringify(equity));
      for (const who of ["ended", "stranger"] as const) {
        assertRefused(await details(keys[who]), 404, "2013", "StrategyId");
        const refused = await legacyCall(service, "retrieveSystemEquity", { systemid: privateId }, keys[who]);
        assert.equal(refused.ok, 0);
      }
      // A lapsed subscription is still live (billing may yet recover): it sees the record, never the orders.
      assert.equal((await details(keys.lapsed)).status, 200);
    });

    test("GetStrategyDetails: MonthlyCost follows a price change at once; NoSubsAllowed for private and stopped strategies", async () => {
      const details = async (strategyId: number) => {
        const r = await service.call("GEN", "GET", "/Strategies/GetStrategyDetails", {
          key: population.keys.personA,
          query: { StrategyId: String(strategyId) },
        });
        assert.equal(r.status, 200, r.text);
        return r.json.Results[0] as { MonthlyCost: number; NoSubsAllowed: boolean };
      };
      const shown = await details(publicId);
      assert.deepEqual([shown.MonthlyCost, shown.NoSubsAllowed], [49, false]);
      await priced(service, publicId, "79.5");
      assert.equal((await details(publicId)).MonthlyCost, 79.5);
      assert.equal((await details(privateId)).NoSubsAllowed, true);
      const stopped = await legacyCall(
        service,
        "changeSystemAttribute",
        { systemid: publicId, isAlive: 0 },
        population.keys.personA,
      );
      assert.equal(stopped.ok, 1, JSON.stringify(stopped));
      assert.equal((await details(publicId)).NoSubsAllowed, true);
      await legacyCall(service, "changeSystemAttribute", { systemid: publicId, isAlive: 1 }, population.keys.personA);
      await priced(service, publicId, "49");
    });
  });
}
