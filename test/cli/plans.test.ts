import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPerson } from "../../src/services/people.js";
import { createSite } from "../../src/services/sites.js";
import { assertPositiveInt, assertSucceeded, childEnv, onlyJson, runCli } from "../helpers/cli.js";
import { BACKENDS, startTestService, type TestService } from "../helpers/service.js";

/** The plan commands of the operator CLI, as operators give them, on the service's storage. */

for (const backend of BACKENDS) {
  describe(`operator CLI: licence plans (${backend})`, () => {
    let service: TestService;
    let env: NodeJS.ProcessEnv;
    let siteId = 0;
    let otherSiteId = 0;
    let customer = 0;
    const cli = (...args: string[]) => runCli(env, [...args, "--json"]);
    const failsWith = async (args: string[], pattern: RegExp) => {
      const run = await cli(...args);
      assert.notEqual(run.code, 0, run.stdout);
      assert.match(onlyJson(run).Error.Message, pattern);
    };

    before(async () => {
      service = await startTestService(backend);
      env = childEnv(service.env);
      const runtime = service.app.runtime;
      siteId = (await createSite(runtime, { kind: "whitelabel", name: "Plan Site" })).id;
      otherSiteId = (await createSite(runtime, { kind: "whitelabel", name: "Other Plan Site" })).id;
      customer = (
        await createPerson(runtime, {
          email: "plan-customer@example.com",
          firstName: "Plan",
          lastName: "Customer",
          role: "person",
          siteId,
        })
      ).personId;
    });
    after(() => service?.close());

    test("plan create stores a plan; bad kinds, prices and sites fail", async () => {
      const run = await cli(
        "plan",
        "create",
        "--license-type",
        "AutoTrade Site",
        "--license-type-id",
        "31",
        "--kind",
        "autotrade",
        "--monthly",
        "25.50",
        "--site",
        String(siteId),
      );
      assertSucceeded(run);
      const { Id } = onlyJson(run);
      assertPositiveInt(Id, "Id");
      const stored = await service.storage.db
        .selectFrom("license_plans")
        .select(["site_id", "license_type", "license_type_id", "kind", "monthly_cost_cents", "is_recurring"])
        .where("id", "=", Id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(stored, {
        site_id: siteId,
        license_type: "AutoTrade Site",
        license_type_id: 31,
        kind: "autotrade",
        monthly_cost_cents: 2550,
        is_recurring: 1,
      });
      const base = ["plan", "create", "--license-type", "X", "--license-type-id", "1"];
      await failsWith([...base, "--kind", "gold", "--monthly", "1"], /Kind is one of/);
      await failsWith(
        [
          "plan",
          "create",
          "--license-type",
          "X",
          "--license-type-id",
          "2147483648",
          "--kind",
          "investor",
          "--monthly",
          "1",
        ],
        /LicenseTypeId must be/,
      );
      await failsWith([...base, "--kind", "investor", "--monthly=-1"], /Monthly/);
      await failsWith([...base, "--kind", "investor", "--monthly", "lots"], /Monthly/);
      await failsWith([...base, "--kind", "investor", "--monthly", "1", "--recurring", "yes"], /--recurring/);
      await failsWith([...base, "--kind", "investor", "--monthly", "1", "--site", "987654"], /No white-label site/);
      await failsWith(
        ["plan", "create", "--kind", "investor", "--monthly", "1", "--license-type-id", "1"],
        /--license-type is required/,
      );
    });

    test("plan subscribe: a term, an end date or open-ended; a site's plan only for its customers", async () => {
      const plan = onlyJson(
        await cli(
          "plan",
          "create",
          "--license-type",
          "Investor",
          "--license-type-id",
          "11",
          "--kind",
          "investor",
          "--monthly",
          "9.99",
        ),
      ).Id;
      const siteOnly = onlyJson(
        await cli(
          "plan",
          "create",
          "--license-type",
          "Other Site Manager",
          "--license-type-id",
          "21",
          "--kind",
          "manager",
          "--monthly",
          "5",
          "--site",
          String(otherSiteId),
          "--recurring",
          "false",
        ),
      ).Id;
      const open = await cli("plan", "subscribe", "--person", String(customer), "--plan", String(plan));
      assertSucceeded(open);
      const started = onlyJson(open);
      assert.equal(started.EndDate, null);
      assert.equal(started.IsRecurring, true);
      assert.equal(started.Cost, 9.99);
      assertPositiveInt(started.Id, "Id");
      const term = onlyJson(
        await cli(
          "plan",
          "subscribe",
          "--person",
          String(customer),
          "--plan",
          String(plan),
          "--months",
          "3",
          "--recurring",
          "false",
        ),
      );
      assert.ok(Date.parse(term.EndDate) > Date.parse(term.StartDate) + 80 * 86_400_000);
      assert.equal(term.IsRecurring, false);
      const until = onlyJson(
        await cli(
          "plan",
          "subscribe",
          "--person",
          String(customer),
          "--plan",
          String(plan),
          "--until",
          "2099-01-01T00:00:00Z",
        ),
      );
      assert.equal(until.EndDate, "2099-01-01T00:00:00.000Z");

      await failsWith(
        ["plan", "subscribe", "--person", String(customer), "--plan", String(siteOnly)],
        /not its customer/,
      );
      await failsWith(["plan", "subscribe", "--person", String(customer), "--plan", "987654"], /No plan/);
      await failsWith(["plan", "subscribe", "--person", "987654", "--plan", String(plan)], /No person/);
      await failsWith(
        [
          "plan",
          "subscribe",
          "--person",
          String(customer),
          "--plan",
          String(plan),
          "--months",
          "2",
          "--until",
          "2099-01-01T00:00:00Z",
        ],
        /not both/,
      );
      await failsWith(
        ["plan", "subscribe", "--person", String(customer), "--plan", String(plan), "--until", "2001-01-01T00:00:00Z"],
        /future/,
      );
      await failsWith(
        ["plan", "subscribe", "--person", String(customer), "--plan", String(plan), "--until", "soon"],
        /--until/,
      );
      await failsWith(["plan", "subscribe", "--plan", String(plan)], /--person is required/);
      const count = await service.storage.db
        .selectFrom("plan_subscriptions")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 3);
    });

    test("plan fee-policy sets who pays the site's AutoTrading licence", async () => {
      const before = await service.storage.db
        .selectFrom("sites")
        .select("autotrade_fee_policy")
        .where("id", "=", siteId)
        .executeTakeFirstOrThrow();
      assert.equal(before.autotrade_fee_policy, "CustomerPays");
      const run = await cli("plan", "fee-policy", "--site", String(siteId), "--policy", "SitePays");
      assertSucceeded(run);
      assert.deepEqual(onlyJson(run), { WhiteLabelSiteId: siteId, AutotradeFeePolicy: "SitePays" });
      const after = await service.storage.db
        .selectFrom("sites")
        .select("autotrade_fee_policy")
        .where("id", "=", siteId)
        .executeTakeFirstOrThrow();
      assert.equal(after.autotrade_fee_policy, "SitePays");
      await failsWith(["plan", "fee-policy", "--site", String(siteId), "--policy", "Nobody"], /Policy is one of/);
      await failsWith(["plan", "fee-policy", "--site", "987654", "--policy", "SitePays"], /No white-label site/);
    });
  });
}
