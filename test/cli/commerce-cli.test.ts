import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPerson } from "../../src/services/people.js";
import { createSite } from "../../src/services/sites.js";
import { assertSucceeded, childEnv, onlyJson, runCli } from "../helpers/cli.js";
import { houseBalance, newStrategy } from "../helpers/commerce.js";
import { ADMIN_KEY, BACKENDS, startTestService, type TestService } from "../helpers/service.js";

/**
 * The operator CLI's commerce commands, as operators give them: site fund,
 * site set (negative billing, Rule 575 terms), strategy price; their JSON and their
 * refusals (one line, exit 2 for bad values, 1 for objects that do not exist).
 */
for (const backend of BACKENDS) {
  describe(`operator CLI: commerce (${backend})`, () => {
    let service: TestService;
    let env: NodeJS.ProcessEnv;
    let siteId: number;
    let geoId: number;
    let strategyId: number;
    const cli = (...args: string[]) => runCli(env, args);

    before(async () => {
      service = await startTestService(backend);
      env = childEnv(service.env);
      siteId = (await createSite(service.app.runtime, { kind: "whitelabel", name: "CLI Commerce" })).id;
      geoId = (await createSite(service.app.runtime, { kind: "geo", name: "CLI Commerce Geo" })).id;
      const owner = await createPerson(service.app.runtime, {
        email: "cli.owner@example.com",
        firstName: "Cli",
        lastName: "Owner",
        role: "person",
      });
      strategyId = await newStrategy(service, ADMIN_KEY, owner.personId);
    });
    after(() => service.close());

    test("site fund credits the house account in exact cents and prints the new balance", async () => {
      const first = await cli("site", "fund", "--id", String(siteId), "--amount", "100.10", "--json");
      assertSucceeded(first);
      assert.deepEqual(onlyJson(first), { SiteId: siteId, HouseAccountBalance: 100.1 });
      const second = await cli("site", "fund", "--id", String(siteId), "--amount", "0.2", "--json");
      assert.deepEqual(onlyJson(second), { SiteId: siteId, HouseAccountBalance: 100.3 });
      assert.equal(await houseBalance(service, siteId), 10030);
      const text = await cli("site", "fund", "--id", String(siteId), "--amount", "1");
      assertSucceeded(text);
      assert.match(text.stdout, /house account balance 101\.3/);
      const fundings = await service.storage.db
        .selectFrom("ledger_transactions")
        .select("kind")
        .where("kind", "=", "fund")
        .execute();
      assert.equal(fundings.length, 3);
    });

    test("site fund refuses amounts that are not whole cents above zero, and sites that are not white-label", async () => {
      for (const amount of ["0", "-5", "1.005", "ten", "", "10000000.01"]) {
        const run = await cli("site", "fund", "--id", String(siteId), "--amount", amount, "--json");
        assert.equal(run.code, 2, `${amount}: ${run.stdout}`);
        assert.match(onlyJson(run).Error.Message, /--amount/);
      }
      const geo = await cli("site", "fund", "--id", String(geoId), "--amount", "5", "--json");
      assert.equal(geo.code, 1);
      assert.deepEqual(onlyJson(geo).Error.Field, "id");
      const missing = await cli("site", "fund", "--amount", "5", "--json");
      assert.equal(missing.code, 2);
      const plain = await cli("site", "fund", "--id", String(siteId), "--amount", "1.001");
      assert.equal(plain.code, 2);
      assert.equal(plain.stderr.trim().split("\n").length, 1, plain.stderr);
      assert.equal(await houseBalance(service, siteId), 10130, "nothing credited");
    });

    test("site set --allow-negative-billing prints the site's settings", async () => {
      const on = await cli("site", "set", "--id", String(siteId), "--allow-negative-billing", "true", "--json");
      assertSucceeded(on);
      assert.deepEqual(onlyJson(on), { SiteId: siteId, AllowNegativeBilling: true, HouseAccountBalance: 101.3 });
      const site = () =>
        service.storage.db
          .selectFrom("sites")
          .select("allow_negative_billing")
          .where("id", "=", siteId)
          .executeTakeFirstOrThrow();
      assert.equal((await site()).allow_negative_billing, 1);
      const off = await cli("site", "set", "--id", String(siteId), "--allow-negative-billing", "false", "--json");
      assert.equal(onlyJson(off).AllowNegativeBilling, false);
      assert.equal((await site()).allow_negative_billing, 0);
      const bad = await cli("site", "set", "--id", String(siteId), "--allow-negative-billing", "yes", "--json");
      assert.equal(bad.code, 2);
      assert.match(onlyJson(bad).Error.Message, /true or false/);
      const none = await cli("site", "set", "--id", "999999", "--allow-negative-billing", "true", "--json");
      assert.equal(none.code, 1);
    });

    test("site set --rule575-tolerance-bps and --rule575-window-seconds set the site's Rule 575 terms", async () => {
      const set = await cli(
        "site",
        "set",
        "--id",
        String(siteId),
        "--rule575-tolerance-bps",
        "12.5",
        "--rule575-window-seconds",
        "90",
        "--json",
      );
      assertSucceeded(set);
      assert.deepEqual(onlyJson(set), {
        SiteId: siteId,
        AllowNegativeBilling: false,
        HouseAccountBalance: 101.3,
        Rule575ToleranceBps: 12.5,
        Rule575WindowSeconds: 90,
      });
      const terms = () =>
        service.storage.db
          .selectFrom("sites")
          .select(["rule575_tolerance_bps", "rule575_window_seconds"])
          .where("id", "=", siteId)
          .executeTakeFirstOrThrow();
      assert.deepEqual(await terms(), { rule575_tolerance_bps: "12.5", rule575_window_seconds: 90 });
      const one = await cli("site", "set", "--id", String(siteId), "--rule575-window-seconds", "default", "--json");
      assert.deepEqual(onlyJson(one), {
        SiteId: siteId,
        AllowNegativeBilling: false,
        HouseAccountBalance: 101.3,
        Rule575ToleranceBps: 12.5,
        Rule575WindowSeconds: 60,
      });
      assert.deepEqual(await terms(), { rule575_tolerance_bps: "12.5", rule575_window_seconds: null });
      const text = await cli("site", "set", "--id", String(siteId), "--rule575-tolerance-bps", "default");
      assertSucceeded(text);
      assert.match(text.stdout, /Rule 575 tolerance 25 bps, window 60 s/);
      for (const args of [
        ["--rule575-tolerance-bps", "-1"],
        ["--rule575-tolerance-bps", "10000.5"],
        ["--rule575-tolerance-bps", "1.005"],
        ["--rule575-window-seconds", "1.5"],
        ["--rule575-window-seconds", "86401"],
        [],
      ]) {
        const run = await cli("site", "set", "--id", String(siteId), ...args, "--json");
        assert.equal(run.code, 2, `${args.join(" ")}: ${run.stdout}`);
        assert.ok(onlyJson(run).Error.Message, run.stdout);
      }
      assert.deepEqual(await terms(), { rule575_tolerance_bps: null, rule575_window_seconds: null });
      const geo = await cli("site", "set", "--id", String(geoId), "--rule575-tolerance-bps", "5", "--json");
      assert.equal(geo.code, 1);
      assert.equal(onlyJson(geo).Error.Field, "id");
    });

    test("strategy price sets the monthly and optional annual price; the details show it", async () => {
      const priced = await cli(
        "strategy",
        "price",
        "--id",
        String(strategyId),
        "--monthly",
        "49.99",
        "--annual",
        "499",
        "--json",
      );
      assertSucceeded(priced);
      assert.deepEqual(onlyJson(priced), { StrategyId: strategyId, MonthlyCost: 49.99, AnnualCost: 499 });
      const row = await service.storage.db
        .selectFrom("strategies")
        .select(["monthly_cost", "annual_cost"])
        .where("id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { monthly_cost: "49.99", annual_cost: "499" });
      const details = await service.call("WL", "GET", "/Strategies/GetStrategyDetails", {
        query: { StrategyId: String(strategyId) },
      });
      assert.equal(details.json.Results[0].MonthlyCost, 49.99, details.text);
      const monthlyOnly = await cli("strategy", "price", "--id", String(strategyId), "--monthly", "0", "--json");
      assert.deepEqual(onlyJson(monthlyOnly), { StrategyId: strategyId, MonthlyCost: 0, AnnualCost: null });
      for (const args of [
        ["--monthly", "-1"],
        ["--monthly", "1.999"],
        ["--monthly", "5", "--annual", "0"],
        ["--annual", "5"],
      ]) {
        const run = await cli("strategy", "price", "--id", String(strategyId), ...args, "--json");
        assert.equal(run.code, 2, `${args.join(" ")}: ${run.stdout}`);
      }
      const none = await cli("strategy", "price", "--id", "999999", "--monthly", "5", "--json");
      assert.equal(none.code, 1);
      assert.equal(onlyJson(none).Error.Field, "id");
    });
  });
}
