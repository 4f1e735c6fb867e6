import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { formTokenOf, pricedStrategy, submit } from "../helpers/checkout.js";
import { fund, houseBalance, newCustomer, newStrategy, only } from "../helpers/commerce.js";
import {
  advanceClock,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * Renewals through the public API, driven by the sandbox clock (each clock move
 * runs a billing pass before it answers; docs/decisions.md "Billing and the
 * ledger"): a resold subscription renews from its house account each month;
 * a direct one (GEN checkout) through the payment provider, its failures shown
 * with its billing fields, access lapsing while a renewal fails and returning
 * once it settles.
 */
const NOW = "2027-01-31T15:00:00.000Z";
const DAY_SECONDS = 86_400;

for (const backend of BACKENDS) {
  describe(`renewals through the API (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** Real time moves on when a test says (the checkout poll interval). */
    let skewMs = 0;

    before(async () => {
      service = await startTestService(backend, { systemNow: () => Date.now() + skewMs });
      p = await populate(service);
      await setClock(service, NOW);
    });
    after(() => service.close());

    const subscribed = async (personId: number, key: string) => {
      const r = await service.call("GEN", "GET", "/General/GetSubscribedStrategies", {
        key,
        query: { PersonId: String(personId) },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Record<string, unknown>[];
    };
    const setOutcome = async (Outcome: string, Reason?: string) => {
      const r = await service.call("GEN", "POST", "/Sandbox/SetPaymentOutcome", {
        body: Reason === undefined ? { Outcome } : { Outcome, Reason },
      });
      assert.equal(r.status, 200, r.text);
    };
    const positionsStatus = async (strategyId: number, key: string) =>
      (
        await service.call("GEN", "GET", "/Strategies/GetStrategyOpenPositions", {
          key,
          query: { StrategyIds: String(strategyId) },
        })
      ).status;

    test("a resold subscription renews from the house account at each anchored month", async () => {
      const resold = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 40 });
      only(
        await service.call("WL", "POST", "/Strategies/UpdateSiteCatalog", {
          key: p.keys.wlAdminA,
          body: { StrategyIds: [resold], Action: "Add" },
        }),
      );
      await fund(service, p.siteA, 100);
      const customer = await newCustomer(service, p.siteA);
      const started = only(
        await service.call("WL", "POST", "/Strategies/WhiteLabelStartSubscription", {
          key: p.keys.wlAdminA,
          body: { PersonId: customer, StrategyId: resold, IdempotencyKey: `renew-${backend}` },
        }),
      );
      assert.equal(started.IsFirstChargeSuccessful, true);
      assert.equal(await houseBalance(service, p.siteA), 6_000);
      // January 31 + 1 month: February 28.
      await advanceClock(service, 28 * DAY_SECONDS);
      assert.equal(await houseBalance(service, p.siteA), 2_000);
      let [row] = (await subscribed(customer, p.keys.wlAdminA)).filter((s) => s.StrategyId === resold);
      assert.equal(row?.NextChargeDate, "2027-03-31T15:00:00.000Z");
      assert.equal(row?.BillingFailureCount, 0);
      // March 31: the house holds 20, the month costs 40.
      await advanceClock(service, 31 * DAY_SECONDS);
      assert.equal(await houseBalance(service, p.siteA), 2_000);
      [row] = (await subscribed(customer, p.keys.wlAdminA)).filter((s) => s.StrategyId === resold);
      assert.equal(row?.BillingFailureCount, 1);
      assert.equal(row?.LastBillingFailureReason, "Insufficient house account funds");
      assert.equal(row?.NextChargeDate, "2027-03-31T16:00:00.000Z", "retried an hour later");
      await fund(service, p.siteA, 100);
      await advanceClock(service, 3_600);
      assert.equal(await houseBalance(service, p.siteA), 8_000);
      [row] = (await subscribed(customer, p.keys.wlAdminA)).filter((s) => s.StrategyId === resold);
      assert.equal(row?.BillingFailureCount, 0);
      assert.equal(row?.NextChargeDate, "2027-04-30T15:00:00.000Z");
    });

    test("a direct subscription renews through the provider; a declined renewal lapses access until it settles", async () => {
      await setClock(service, NOW);
      const strategyId = await pricedStrategy(service, p, `Renewing ${backend}`);
      await setOutcome("approve");
      const created = only(
        await service.call("GEN", "POST", "/General/CreateSubscriptionCheckout", {
          key: p.keys.personB,
          body: { StrategyId: strategyId },
        }),
      );
      const shown = await service.call("GEN", "GET", created.ApprovalUrl, { key: null });
      await submit(service, created.ApprovalUrl, "pay", { form_token: formTokenOf(shown.text), consent: "yes" });
      skewMs += 3_000;
      const status = only(
        await service.call("GEN", "GET", "/General/GetSubscriptionCheckoutStatus", {
          key: p.keys.personB,
          query: { IntentId: String(created.IntentId) },
        }),
      );
      assert.equal(status.Status, "Active");
      assert.equal(await positionsStatus(strategyId, p.keys.personB), 200);

      await setOutcome("decline", "card_declined");
      await advanceClock(service, 28 * DAY_SECONDS);
      let [row] = (await subscribed(p.people.personB, p.keys.personB)).filter((s) => s.StrategyId === strategyId);
      assert.equal(row?.BillingFailureCount, 1);
      assert.equal(row?.LastBillingFailureReason, "card_declined");
      assert.equal(row?.IsAlive, true, "still live while it retries");
      assert.notEqual(await positionsStatus(strategyId, p.keys.personB), 200, "the paid month is over");

      await setOutcome("approve");
      await advanceClock(service, 3_600);
      [row] = (await subscribed(p.people.personB, p.keys.personB)).filter((s) => s.StrategyId === strategyId);
      assert.equal(row?.BillingFailureCount, 0);
      assert.equal(row?.NextChargeDate, "2027-03-31T15:00:00.000Z");
      assert.equal(await positionsStatus(strategyId, p.keys.personB), 200);
      const charges = await service.storage.db
        .selectFrom("ledger_transactions")
        .select("reference")
        .where("subscription_id", "=", status.SubscriptionId)
        .orderBy("id")
        .execute();
      assert.deepEqual(
        charges.map((c) => c.reference),
        [`charge:${status.SubscriptionId}:1`, `charge:${status.SubscriptionId}:2`],
      );
    });
  });
}
