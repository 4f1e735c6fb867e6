import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { LEGACY_COMMANDS } from "../../src/http/legacy/commands.js";
import { LEGACY_TITLES } from "../../src/http/legacy/titles.js";
import { departures } from "../helpers/conforms.js";
import { sitePlatform } from "../helpers/legacy.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, setQuote } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`the legacy v3 OpenAPI document (${backend})`, () => {
    let service: TestService;
    let population: Population;
    // biome-ignore lint/suspicious/noExplicitAny: the document is read as plain JSON
    let document: any;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      await setClock(service, MARKET_OPEN);
      const r = await service.call("LEGACY", "GET", "/openapi.json", { key: null });
      assert.equal(r.status, 200);
      document = r.json;
    });
    after(() => service.close());

    test("is a valid OpenAPI 3 document with every command in each of its contexts, and the failure's titles", async () => {
      await SwaggerParser.validate(structuredClone(document));
      const expected = LEGACY_COMMANDS.flatMap((command) =>
        command.contexts.map((context) =>
          context === "world" ? `/world/apiv3/${command.name}` : `/platform/apiv3/{platform_id}/${command.name}`,
        ),
      ).sort();
      assert.deepEqual(Object.keys(document.paths).sort(), expected);
      assert.equal(document.paths["/platform/apiv3/{platform_id}/getSystemRoster"], undefined, "World only");
      const titles = document.components.schemas.LegacyFailure.properties.error.properties.title.enum;
      assert.deepEqual(new Set(titles), new Set(Object.values(LEGACY_TITLES)));
      assert.deepEqual(
        document.paths["/world/apiv3/submitSignal"].post.requestBody.content["application/json"].schema,
        {
          $ref: "#/components/schemas/submitSignalRequest",
        },
      );
      assert.ok(document.components.schemas.submitSignalRequest.required.includes("apikey"));
    });

    test("every command answers as its document says, in success and in failure", async () => {
      const called = new Set<string>();
      const key = population.keys.personA;
      const send = async (command: string, body: Record<string, unknown>, path = `/world/apiv3/${command}`) => {
        const r = await service.call("LEGACY", "POST", path, { key: null, body: { apikey: key, ...body } });
        assert.equal(r.status, 200, r.text);
        const shape = r.json.ok === 1 ? `${command}Answer` : "LegacyFailure";
        const schema = { $ref: `#/components/schemas/${shape}` };
        assert.deepEqual(departures(document, schema, r.json), [], `${command}: ${r.text}`);
        called.add(command);
        return r.json;
      };
      const ok = async (command: string, body: Record<string, unknown>) => {
        const answer = await send(command, body);
        assert.equal(answer.ok, 1, `${command}: ${JSON.stringify(answer)}`);
        return answer;
      };

      await setQuote(service, "AAPL", 200, 200.05);
      const created = await ok("createNewSystem", { name: "Legacy Doc", startingcapital: 100000 });
      const systemid = Number(created.success.NewSystemID);
      await ok("changeSystemAttribute", { systemid, shortDescription: "Large caps", monthlyfee: 50 });
      await ok("getSystemDetails", { systemid });
      await ok("listAllSystems", {});
      await ok("getSystemRoster", { filter: "active" });
      const resting = await ok("submitSignal", {
        systemid,
        signal: {
          action: "BTO",
          quant: 10,
          symbol: "AAPL",
          typeofsymbol: "stock",
          limit: 190,
          duration: "GTC",
          profittarget: 210,
          stoploss: 180,
          signalid: "my-1",
        },
      });
      const filled = await ok("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 5, symbol: "AAPL", typeofsymbol: "stock" },
      });
      await ok("retrieveSignalsWorking", { systemid });
      await ok("retrieveSignalsAll", { systemid, filter_type: "time_posted" });
      await ok("requestMarginEquity", { systemid });
      await ok("requestTrades", { systemid });
      await ok("requestTradesOpen", { systemid });
      await ok("requestAllTrades_overview", { systemid, show_component_signals: 1 });
      await ok("retrieveSystemEquity", { systemid, commission_plan: "None" });
      await ok("cancelSignal", { systemid, signalid: resting.signalid });
      const traded = await send("cancelSignal", { systemid, signalid: filled.signalid });
      assert.equal(traded.error.title, "Signal was traded");
      await ok("getListSubscribers", { systemid });
      // A paid system is not followed for free: the legacy subscribe is for free ones.
      await ok("changeSystemAttribute", { systemid, monthlyfee: 0 });
      await ok("subscribeToStrategy", { systemid });
      await ok("unsubscribeFromStrategy", { systemid, actionType: "unsubscribe_immediate" });
      const portfolio = Number(
        (await ok("createNewSystem", { name: "Legacy Mix", startingcapital: 100000 })).success.NewSystemID,
      );
      await ok("setDesiredPositions", {
        systemid: portfolio,
        positions: [{ symbol: "AAPL", typeofsymbol: "stock", quant: 20 }],
      });
      await ok("getDesiredPositions", { systemid: portfolio });
      assert.deepEqual(
        LEGACY_COMMANDS.map((c) => c.name).filter((name) => !called.has(name)),
        [],
      );
      const unreachable = await send("getSystemDetails", { systemid: 999_999 });
      assert.equal(unreachable.ok, 0);
    });

    test("a Private Platform answer is documented alike", async () => {
      const { platformId, platformKey } = await sitePlatform(service, population);
      const path = `/platform/apiv3/${platformId}/listAllSystems`;
      assert.ok(document.paths["/platform/apiv3/{platform_id}/listAllSystems"]);
      const r = await service.call("LEGACY", "POST", path, { key: null, body: { apikey: platformKey } });
      assert.equal(r.json.ok, 1, r.text);
      assert.deepEqual(departures(document, { $ref: "#/components/schemas/listAllSystemsAnswer" }, r.json), []);
      const refused = await service.call("LEGACY", "POST", path, { key: null, body: { apikey: ADMIN_KEY } });
      assert.deepEqual(departures(document, { $ref: "#/components/schemas/LegacyFailure" }, refused.json), []);
    });
  });
}
