import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertSucceeded, childEnv, onlyJson, spawnCli } from "../helpers/cli.js";
import { BACKENDS, freshStorage, startTestService, type TestService, type TestStorage } from "../helpers/service.js";

/** `npm run cli -- demo`: an empty database filled so every operation can be called at once. */
for (const backend of BACKENDS) {
  describe(`demo data (${backend})`, () => {
    let fresh: TestStorage;
    let service: TestService;
    // biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON answer
    let demo: any;
    /** What the run wrote on stderr as it went. */
    let progress: string[];

    before(async () => {
      fresh = await freshStorage(backend);
      const run = await spawnCli(childEnv(fresh.env), ["demo", "--json"]);
      assertSucceeded(run);
      demo = onlyJson(run);
      progress = run.stderr.split("\n").filter((line) => line !== "");
      service = await startTestService(backend, { storage: fresh });
    });
    after(async () => {
      await service?.close();
    });

    const keyOf = (email: string): string => demo.People.find((p: { Email: string }) => p.Email === email).AccessKey;

    test("creates a geo-site, two white-label sites, their administrators and customers, each with a key", () => {
      assert.deepEqual(
        demo.Sites.map((s: { Kind: string; Name: string }) => [s.Kind, s.Name]),
        [
          ["geo", "Demo Europe"],
          ["whitelabel", "Alpine Brokerage"],
          ["whitelabel", "Harbor Trading"],
        ],
      );
      const roles = demo.People.map((p: { Role: string }) => p.Role).sort();
      assert.deepEqual(roles, [
        "admin",
        "geo-admin",
        "person",
        "person",
        "person",
        "person",
        "person",
        "whitelabel-admin",
        "whitelabel-admin",
      ]);
    });

    test("progress goes to stderr, a line per phase and per month of history, while stdout holds one JSON object", () => {
      assert.deepEqual(progress.slice(0, 3), [
        "demo data: sites and their administrators",
        "demo data: customers, with profiles and KYC data",
        "demo data: strategies traded through a little more than a year",
      ]);
      const months = progress.filter((line) => /^demo data: trading \d{4}-\d{2}$/.test(line));
      assert.ok(months.length >= 12, progress.join("\n"));
      assert.equal(progress.at(-1), "demo data: done");
    });

    test("every printed key works and belongs to its person", async () => {
      for (const person of demo.People) {
        const r = await service.call("GEN", "GET", "/General/GetAccessKey", { key: person.AccessKey });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.Results[0].PersonId, person.PersonId);
        assert.equal(r.json.Results[0].Email, person.Email);
      }
    });

    test("the administrators see their customers, with profiles and KYC data to read", async () => {
      const alpine = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", {
        key: keyOf("admin@alpine.demo.example"),
      });
      assert.equal(alpine.status, 200);
      const aliases = alpine.json.Results.map((m: { Alias: string | null }) => m.Alias).filter(Boolean);
      assert.deepEqual(aliases.sort(), ["anna.m", "luca_trades"]);
      const geo = await service.call("GEO", "GET", "/General/GetGeoSiteUsers", {
        key: keyOf("admin@eu.demo.example"),
        query: { GeoSite: "Demo Europe" },
      });
      const geoEmails = geo.json.Results.map((m: { Email: string }) => m.Email);
      assert.ok(geoEmails.includes("annam@mail.demo.example") && geoEmails.includes("sophiem@mail.demo.example"));
      assert.ok(!geoEmails.includes("jcarter@mail.demo.example"), "Harbor lies outside the geo-site");

      const search = await service.call("GEN", "GET", "/General/SearchProfiles", {
        key: keyOf("admin@alpine.demo.example"),
        query: { LastName: "müll" },
      });
      assert.equal(search.json.Results.length, 1);
      const token = search.json.Results[0].UserToken;
      const kyc = await service.call("WL", "GET", "/General/GetKYCInfo", {
        key: keyOf("admin@alpine.demo.example"),
        query: { UserToken: token },
      });
      assert.equal(kyc.status, 200);
      assert.equal(kyc.json.Results[0].PhotoId1Title, "Passport");
    });

    test("three strategies carry a year of trading history made by the engine", async () => {
      assert.deepEqual(
        demo.Strategies.map((s: { Name: string }) => s.Name),
        ["Alpine Momentum", "Harbor FX Swing", "Index Brackets"],
      );
      const anyone = keyOf("admin@demo.example");
      for (const strategy of demo.Strategies as { Id: number; Name: string; OwnerEmail: string }[]) {
        const owner = keyOf(strategy.OwnerEmail);
        const details = await service.call("GEN", "GET", "/Strategies/GetStrategyDetails", {
          key: owner,
          query: { StrategyId: String(strategy.Id) },
        });
        assert.equal(details.status, 200, details.text);
        const d = details.json.Results[0];
        assert.ok(d.NumTrades > 10, `${strategy.Name}: ${d.NumTrades} trades`);
        assert.ok(d.NumMonths >= 12, `${strategy.Name}: ${d.NumMonths} months`);
        assert.equal(d.ReturnLabel, "Annualized");
        assert.notEqual(d.Sharpe, null);
        const daily = await service.call("GEN", "GET", "/Strategies/GetStrategyHistoricalDailyEquity", {
          key: anyone,
          query: { StrategyId: String(strategy.Id) },
        });
        assert.ok(daily.json.Results[0].MonthlyResults.length >= 248, `${strategy.Name}: a mark per trading day`);
      }
      const brackets = (demo.Strategies as { Id: number; Name: string }[]).find((s) => s.Name === "Index Brackets");
      const exits = await service.storage.db
        .selectFrom("orders")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("strategy_id", "=", brackets?.Id as number)
        .where("signal_type", "in", [4, 5])
        .where("status", "=", "Filled")
        .executeTakeFirstOrThrow();
      assert.ok(Number(exits.n) > 0, "profit targets and stop losses filled through the fill step");
    });

    test("a second run refuses to touch a database that holds data", async () => {
      const again = await spawnCli(childEnv(fresh.env), ["demo", "--json"]);
      assert.equal(again.code, 1);
      assert.match(onlyJson(again).Error.Message, /empty one only/);
    });
  });
}
