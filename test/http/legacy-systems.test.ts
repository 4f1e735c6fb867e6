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
import { MARKET_OPEN, placed, setQuote, stockOrder } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`legacy v3 systems (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    let platformId: number;
    let platformKey: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
      ({ platformId, platformKey } = await sitePlatform(service, population));
      await setClock(service, MARKET_OPEN);
    });
    after(() => service.close());

    const v3 = (command: string, body: Record<string, unknown>, apikey = key, path?: string) =>
      legacyCall(service, command, body, apikey, path);

    test("createNewSystem, then the roster, the list and the details with statistics; v4 sees the same strategy", async () => {
      const made = await v3("createNewSystem", {
        name: "Legacy Made",
        startingcapital: 50000,
        longDescription: "Waits for review like any description.",
        site_visibility_status: 1,
      });
      assert.equal(made.ok, 1, JSON.stringify(made));
      const systemid = Number(made.success.NewSystemID);
      const v4 = await service.call("GEN", "GET", "/Strategies/GetStrategyDetails", {
        key: population.keys.personB,
        query: { StrategyId: String(systemid) },
      });
      assert.equal(v4.status, 200, "public, so anyone reads it through v4");
      assert.equal(v4.json.Results[0].StartingCash, 50000);
      assert.equal(v4.json.Results[0].LongDescription, null, "the description waits for review");
      await setQuote(service, "AAPL", 200, 200.05);
      await placed(service, key, stockOrder(systemid, "AAPL", "sell", 10, { OpenClose: "O" }));
      const roster = await v3("getSystemRoster", {});
      const row = roster.response.find((s: { system_id: string }) => s.system_id === String(systemid));
      assert.equal(row.system_name, "Legacy Made");
      assert.equal(row.equitycurve_startingcapital, "50000");
      assert.deepEqual([row.trades_stocks, row.trades_stocks_short, row.isAlive], ["1", "1", "1"]);
      const listed = await v3("listAllSystems", {});
      assert.ok(listed.response.some((s: { system_id: string }) => s.system_id === String(systemid)));
      const details = await v3("getSystemDetails", { systemid });
      assert.equal(details.ok, 1, JSON.stringify(details));
      assert.equal(details.response.systemName, "Legacy Made");
      assert.equal(details.response.marginEquityData.cash, String(50000 + 10 * 200 - 1));
      assert.equal(details.response.statistics.numTrades.value, "0");
      assert.deepEqual(Object.keys(details.response.statistics.sharpe.metainfo).sort(), [
        "bunch",
        "category",
        "dataset",
        "group",
        "helpText",
        "multiplier",
        "precision",
        "prefix",
        "suffix",
      ]);
    });

    test("changeSystemAttribute applies every change or none, and lists them", async () => {
      const made = await v3("createNewSystem", { name: "To Change", startingcapital: 20000 });
      const systemid = Number(made.success.NewSystemID);
      const changed = await v3("changeSystemAttribute", {
        systemid,
        name: "Changed Name",
        monthlyfee: 99,
        trialdays: 7,
        test_system: 1,
        equitycurve_startingcapital: 30000,
        minimum_portfolio_size_required: 5000,
      });
      assert.equal(changed.ok, 1, JSON.stringify(changed));
      assert.ok(changed.success.changes.includes("name updated"));
      assert.ok(changed.success.changes.includes("monthlyfee updated"));
      const refused = await v3("changeSystemAttribute", { systemid, name: "OK Name", trialdays: -1 });
      assert.equal(refused.ok, 0);
      const roster = await v3("getSystemRoster", {});
      const row = roster.response.find((s: { system_id: string }) => s.system_id === String(systemid));
      assert.deepEqual(
        [row.system_name, row.monthlyFee, row.freeTrialPeriodDays, row.equitycurve_startingcapital],
        ["Changed Name", "99", "7", "30000"],
        "the refused request changed nothing",
      );
      const stopped = await v3("changeSystemAttribute", { systemid, isAlive: 0 });
      assert.deepEqual(stopped.success.changes, ["isAlive updated"]);
      const active = await v3("getSystemRoster", {});
      assert.ok(!active.response.some((s: { system_id: string }) => s.system_id === String(systemid)));
      const recent = await v3("getSystemRoster", { filter: "recently_active" });
      const inactive = recent.response.find((s: { system_id: string }) => s.system_id === String(systemid));
      assert.notEqual(inactive.recently_inactive_since, "");
      const transfer = await v3("changeSystemAttribute", { systemid, ownerpersonid: population.people.personB });
      assert.deepEqual(
        [transfer.ok, transfer.error.title],
        [0, "Unable to access this person"],
        "a World key gives its systems to no one",
      );
    });

    test("refused values, people out of reach and a traded system's capital: each with its legacy title", async () => {
      const badName = await v3("createNewSystem", { name: "X", startingcapital: 20000 });
      assert.deepEqual([badName.ok, badName.error.title], [0, "Invalid value"]);
      const notAFlag = await v3("createNewSystem", {
        name: "Flagged",
        startingcapital: 20000,
        site_visibility_status: 2,
      });
      assert.deepEqual([notAFlag.ok, notAFlag.error.title], [0, "Invalid value"]);
      const forB = await v3("createNewSystem", {
        name: "For Someone",
        startingcapital: 20000,
        ownerpersonid: population.people.personB,
      });
      assert.deepEqual([forB.ok, forB.error.title], [0, "Unable to access this person"]);
      const nobody = await v3(
        "createNewSystem",
        { name: "For Nobody", startingcapital: 20000, ownerpersonid: 987654 },
        ADMIN_KEY,
      );
      assert.deepEqual([nobody.ok, nobody.error.title], [0, "Not found"]);

      const made = await v3("createNewSystem", { name: "Traded Capital", startingcapital: 20000 });
      const systemid = Number(made.success.NewSystemID);
      await setQuote(service, "AAPL", 200, 200.05);
      await placed(service, key, stockOrder(systemid, "AAPL", "buy", 1));
      const capital = await v3("changeSystemAttribute", { systemid, equitycurve_startingcapital: 30000 });
      assert.deepEqual([capital.ok, capital.error.title], [0, "Refused"]);
    });

    test("a platform key gives its site's people's systems to people of its site only", async () => {
      const path = (command: string) => `/platform/apiv3/${platformId}/${command}`;
      const made = await v3(
        "createNewSystem",
        { name: "Passed On", startingcapital: 10000, ownerpersonid: population.people.personA },
        platformKey,
        path("createNewSystem"),
      );
      const systemid = Number(made.success.NewSystemID);
      const outside = await v3(
        "changeSystemAttribute",
        { systemid, ownerpersonid: population.people.personB },
        platformKey,
        path("changeSystemAttribute"),
      );
      assert.deepEqual([outside.ok, outside.error.title], [0, "Unable to access this person"]);
      const inside = await v3(
        "changeSystemAttribute",
        { systemid, ownerpersonid: population.people.wlAdminA },
        platformKey,
        path("changeSystemAttribute"),
      );
      assert.deepEqual([inside.ok, inside.success?.changes], [1, ["ownerpersonid updated"]], JSON.stringify(inside));
      const roster = await v3("listAllSystems", {}, population.keys.wlAdminA);
      assert.ok(
        roster.response.some((s: { system_id: string }) => s.system_id === String(systemid)),
        "now in the new owner's own list",
      );
    });

    test("a platform key creates and manages its site's people's systems, and no others", async () => {
      const path = (command: string) => `/platform/apiv3/${platformId}/${command}`;
      const made = await v3(
        "createNewSystem",
        { name: "For A", startingcapital: 10000, ownerpersonid: population.people.personA },
        platformKey,
        path("createNewSystem"),
      );
      assert.equal(made.ok, 1, JSON.stringify(made));
      const elsewhere = await v3(
        "createNewSystem",
        { name: "For B", startingcapital: 10000, ownerpersonid: population.people.personB },
        platformKey,
        path("createNewSystem"),
      );
      assert.equal(elsewhere.ok, 0);
      const ofA = await v3("listAllSystems", {}, platformKey, path("listAllSystems"));
      assert.ok(ofA.response.some((s: { system_id: string }) => s.system_id === made.success.NewSystemID));
      const everything = await v3("listAllSystems", {}, ADMIN_KEY);
      assert.ok(everything.response.length >= ofA.response.length);
    });
  });
}
