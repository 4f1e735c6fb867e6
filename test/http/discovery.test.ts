import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { newStrategy, placed } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`SearchStrategies and the leaderboard (${backend})`, () => {
    let service: TestService;
    let population: Population;
    const ids: Record<string, number> = {};
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      await setClock(service, "2026-03-10T14:00:00Z");
      const publicStrategy = async (name: string) => {
        const r = await service.call("WL", "POST", "/Strategies/AddStrategy", {
          key: ADMIN_KEY,
          body: { StrategyName: name, StartingCapital: 100000, InitialSiteVisibility: true },
        });
        assert.equal(r.status, 200, r.text);
        return r.json.Results[0].StrategyId as number;
      };
      ids.alpha = await newStrategy(service, population.keys.personA, 100000, "Alpha Trend");
      ids.beta = await publicStrategy("Beta #50 Fund");
      await setClock(service, "2026-03-12T14:00:00Z");
      ids.gamma = await publicStrategy("Gamma Futures");
      ids.secret = await newStrategy(service, population.keys.personB, 100000, "Secret Trend");
      // Gamma trades futures: a resting limit far from the market.
      await placed(service, ADMIN_KEY, {
        StrategyId: ids.gamma,
        OrderType: "2",
        Side: "1",
        TIF: "1",
        OrderQuantity: 1,
        Limit: 100,
        ServiceSymbol: { FullSymbol: "@ESM26" },
      });
    });
    after(() => service.close());

    const search = async (query: Record<string, string>, key = population.keys.personB) => {
      const r = await service.call("GEN", "GET", "/Strategies/SearchStrategies", { key, query });
      assert.equal(r.status, 200, r.text);
      return r.json.Results.map((s: { StrategyId: number }) => s.StrategyId);
    };

    test("others' private strategies never appear; owners and their administrators see them", async () => {
      assert.deepEqual(await search({}), [ids.beta, ids.gamma, ids.secret]);
      assert.deepEqual(await search({}, population.keys.personA), [ids.alpha, ids.beta, ids.gamma]);
      assert.deepEqual(await search({}, population.keys.wlAdminA), [ids.alpha, ids.beta, ids.gamma]);
      assert.deepEqual(await search({}, ADMIN_KEY), [ids.alpha, ids.beta, ids.gamma, ids.secret]);
    });

    test("StrategyName matches anywhere without regard to case, with % and _ wildcards and backslash escapes", async () => {
      assert.deepEqual(await search({ StrategyName: "TREND" }, ADMIN_KEY), [ids.alpha, ids.secret]);
      assert.deepEqual(await search({ StrategyName: "b_ta" }), [ids.beta]);
      assert.deepEqual(await search({ StrategyName: "g%s" }), [ids.gamma]);
      assert.deepEqual(await search({ StrategyName: "#5_ f" }), [ids.beta]);
      assert.deepEqual(await search({ StrategyName: "50%" }), [ids.beta]);
      // Escaped, the wildcards match only themselves, which no name holds.
      assert.deepEqual(await search({ StrategyName: "50\\%" }), []);
      assert.deepEqual(await search({ StrategyName: "#5\\_" }), []);
    });

    test("the other filters, and pages", async () => {
      assert.deepEqual(await search({ SecurityType: "FUT" }), [ids.gamma]);
      assert.deepEqual(await search({ SecurityType: "CS" }), []);
      assert.deepEqual(await search({ CreatedBeforeDate: "2026-03-11" }), [ids.beta]);
      assert.deepEqual(await search({ StrategyOwnerPersonId: String(population.people.personB) }), [ids.secret]);
      assert.deepEqual(await search({ IsTradeOwnSystem: "true" }), []);
      const first = await service.call("GEN", "GET", "/Strategies/SearchStrategies", {
        key: population.keys.personB,
        query: { Limit: "2" },
      });
      assert.equal(first.json.Results.length, 2);
      const next = await service.call("GEN", "GET", "/Strategies/SearchStrategies", {
        key: population.keys.personB,
        query: { Limit: "2", Cursor: first.json.Pagination.next_cursor },
      });
      assert.deepEqual(
        next.json.Results.map((s: { StrategyId: number }) => s.StrategyId),
        [ids.secret],
      );
      const record = first.json.Results[0];
      assert.deepEqual(Object.keys(record).sort(), [
        "Id",
        "IsAlive",
        "IsPrivate",
        "IsResellable",
        "IsTradeOwnSystem",
        "MonthlyCost",
        "SecurityTypesEnabled",
        "StartDate",
        "StrategyId",
        "StrategyName",
        "StrategyOwnerId",
        "WhiteLabelSiteId",
      ]);
    });

    test("service admins curate the leaderboard of public strategies; everyone reads it in rank order", async () => {
      const set = await service.call("GEN", "POST", "/Admin/SetLeaderBoard", {
        key: ADMIN_KEY,
        body: { StrategyIds: [ids.gamma, ids.beta] },
      });
      assert.equal(set.status, 200, set.text);
      const board = await service.call("WL", "GET", "/Strategies/GetLeaderBoard", { key: population.keys.personA });
      assert.deepEqual(
        board.json.Results.map((s: { StrategyId: number }) => s.StrategyId),
        [ids.gamma, ids.beta],
      );
      const futures = await service.call("GEO", "GET", "/Strategies/GetLeaderBoard", {
        key: population.keys.personA,
        query: { SecurityType: "FUT" },
      });
      assert.deepEqual(
        futures.json.Results.map((s: { StrategyId: number }) => s.StrategyId),
        [ids.gamma],
      );
      const privateOne = await service.call("GEN", "POST", "/Admin/SetLeaderBoard", {
        key: ADMIN_KEY,
        body: { StrategyIds: [ids.alpha] },
      });
      assert.equal(privateOne.status, 400);
      assert.equal(privateOne.json.ResponseStatus.Errors[0].FieldName, "StrategyIds[0]");
      const notAdmin = await service.call("GEN", "POST", "/Admin/SetLeaderBoard", {
        key: population.keys.wlAdminA,
        body: { StrategyIds: [] },
      });
      assert.equal(notAdmin.status, 403);
    });
  });
}
