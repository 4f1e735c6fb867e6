import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertCliRefused, assertSucceeded, childEnv, onlyJson, runCli } from "../helpers/cli.js";
import { newStrategy as commerceStrategy, fund, houseBalance, newCustomer, only } from "../helpers/commerce.js";
import {
  advanceClock,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { rowCount } from "../helpers/store-rows.js";

/**
 * `billing refund`: an operator gives a site's house account back one charge
 * of a subscription it resells (the latest by default), once however often it
 * is asked; the subscription runs on. Subscriptions not charged to a house
 * account, charges that do not exist and bad values are refused, nothing moved.
 */

const NOW = "2026-03-02T15:00:00Z";
const MONTH_SECONDS = 31 * 86_400;

for (const backend of BACKENDS) {
  describe(`operator CLI: billing refund (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let env: NodeJS.ProcessEnv;
    let resold: number;
    let strategyId: number;
    let customer: number;
    const cli = (...args: string[]) => runCli(env, args);

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      env = childEnv(service.env);
      await setClock(service, NOW);
      await fund(service, p.siteA, 100);
      strategyId = await commerceStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 20 });
      const added = await service.call("WL", "POST", "/Strategies/UpdateSiteCatalog", {
        key: p.keys.wlAdminA,
        body: { StrategyIds: [strategyId], Action: "Add" },
      });
      assert.equal(added.status, 200, added.text);
      customer = await newCustomer(service, p.siteA);
      const started = await service.call("WL", "POST", "/Strategies/WhiteLabelStartSubscription", {
        key: p.keys.wlAdminA,
        body: { PersonId: customer, StrategyId: strategyId, IdempotencyKey: "refund-resold" },
      });
      resold = only(started).SubscriptionId;
      // The second month's charge, by the biller.
      await advanceClock(service, MONTH_SECONDS);
    });
    after(() => service.close());

    const wholesale = async () => (await houseBalance(service, p.siteA)) / 100;
    const live = async () =>
      (
        await service.storage.db
          .selectFrom("subscriptions")
          .select(["ended_at", "charge_seq"])
          .where("id", "=", resold)
          .executeTakeFirstOrThrow()
      ).ended_at === null;

    test("refunds the latest charge by default, a named period after; each once; the subscription runs on", async () => {
      const charged = await wholesale();
      assert.ok(charged < 100, `two charges taken: ${charged}`);
      const perCharge = (100 - charged) / 2;

      const latest = await cli("billing", "refund", "--subscription", String(resold), "--json");
      assertSucceeded(latest);
      assert.deepEqual(onlyJson(latest), {
        SubscriptionId: resold,
        SiteId: p.siteA,
        Period: 2,
        Refunded: perCharge,
        AlreadyRefunded: false,
        HouseAccountBalance: charged + perCharge,
      });
      const again = await cli("billing", "refund", "--subscription", String(resold), "--period", "2", "--json");
      assertSucceeded(again);
      assert.equal(onlyJson(again).AlreadyRefunded, true);
      assert.equal(onlyJson(again).HouseAccountBalance, charged + perCharge, "nothing moved twice");

      const first = await cli("billing", "refund", "--subscription", String(resold), "--period", "1");
      assertSucceeded(first);
      assert.match(first.stdout, new RegExp(`Refunded ${perCharge} of subscription ${resold}'s charge 1`));
      assert.equal(await wholesale(), 100);
      assert.equal(await live(), true, "a refund does not end the subscription");
      const refunds = await service.storage.db
        .selectFrom("ledger_transactions")
        .select("reference")
        .where("kind", "=", "refund")
        .where("subscription_id", "=", resold)
        .orderBy("id")
        .execute();
      assert.deepEqual(
        refunds.map((r) => r.reference),
        [`refund:charge:${resold}:2`, `refund:charge:${resold}:1`],
      );
    });

    test("refused: an unknown subscription or period, one not charged to a house account, bad values; nothing moved", async () => {
      const sims = await service.call("WL", "POST", "/Autotrade/StartSim", {
        key: p.keys.wlAdminA,
        body: { PersonId: await newCustomer(service, p.siteA), StrategyIds: [strategyId] },
      });
      const simulated = only(sims).Started[0].SubscriptionId as number;
      const ledger = await rowCount(service.storage, "ledger_transactions");
      const balance = await wholesale();

      assertCliRefused(
        await cli("billing", "refund", "--subscription", "999999", "--json"),
        "subscription",
        /No subscription 999999/,
      );
      assertCliRefused(
        await cli("billing", "refund", "--subscription", String(resold), "--period", "3", "--json"),
        "period",
        /has 2 charges; no period 3/,
      );
      assertCliRefused(
        await cli("billing", "refund", "--subscription", String(simulated), "--json"),
        "subscription",
        /not charged to a house account/,
      );
      for (const args of [
        [],
        ["--subscription", "0"],
        ["--subscription", "x"],
        ["--subscription", "1", "--period", "-1"],
      ]) {
        const run = await cli("billing", "refund", ...args, "--json");
        assert.equal(run.code, 2, `${args.join(" ")}: ${run.stdout}`);
      }
      assert.equal(await rowCount(service.storage, "ledger_transactions"), ledger);
      assert.equal(await wholesale(), balance);
    });
  });
}
