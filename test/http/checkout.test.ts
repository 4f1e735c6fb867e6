import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { CHECKOUT_LIFETIME_MS } from "../../src/core/checkout.js";
import { formTokenOf, pricedStrategy, submit } from "../helpers/checkout.js";
import {
  advanceClock,
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

const errorOf = (r: CallResult) => r.json?.ResponseStatus?.Errors?.[0];

for (const backend of BACKENDS) {
  describe(`GEN subscription checkout (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** Real time as the service sees it moves on only when a test says (the poll interval). */
    let skewMs = 0;
    let strategyId = 0;
    let checkouts = 0;

    before(async () => {
      service = await startTestService(backend, { systemNow: () => Date.now() + skewMs });
      p = await populate(service);
    });
    after(() => service.close());
    beforeEach(async () => {
      checkouts += 1;
      strategyId = await pricedStrategy(service, p, `Priced ${checkouts}`);
      await setOutcome("approve");
    });

    const create = (body: Record<string, unknown>, key = p.keys.personB) =>
      service.call("GEN", "POST", "/General/CreateSubscriptionCheckout", { key, body });
    /** Polls as the customer, letting the poll interval pass first. */
    const poll = async (intentId: number, key = p.keys.personB) => {
      skewMs += 3_000;
      return service.call("GEN", "GET", "/General/GetSubscriptionCheckoutStatus", {
        key,
        query: { IntentId: String(intentId) },
      });
    };
    const setOutcome = async (Outcome: string, Reason?: string) => {
      const r = await service.call("GEN", "POST", "/Sandbox/SetPaymentOutcome", {
        body: Reason === undefined ? { Outcome } : { Outcome, Reason },
      });
      assert.equal(r.status, 200, r.text);
    };
    const page = async (url: string) => {
      const r = await service.call("GEN", "GET", url, { key: null });
      return { ...r, formToken: r.text.includes("form_token") ? formTokenOf(r.text) : "" };
    };
    const ledgerCharges = (subscriptionId: number | null) =>
      service.storage.db
        .selectFrom("ledger_transactions")
        .select(["reference", "kind"])
        .where("subscription_id", "=", subscriptionId ?? -1)
        .execute();
    const pay = async (url: string) => {
      const shown = await page(url);
      return submit(service, url, "pay", { form_token: shown.formToken, consent: "yes" });
    };

    test("a checkout charges nothing, answers its terms, and is answered again while pending", async () => {
      const r = await create({ StrategyId: strategyId });
      assert.equal(r.status, 200, r.text);
      const [checkout] = r.json.Results;
      assert.equal(checkout.Status, "PendingCustomer");
      assert.match(checkout.ApprovalUrl, /^\/Checkout\/[A-Za-z0-9_-]{43}$/);
      assert.equal(checkout.WebCheckoutUrl, checkout.ApprovalUrl);
      assert.equal(checkout.Price, 49.5);
      assert.equal(checkout.Currency, "USD");
      assert.equal(checkout.BillingInterval, "month");
      assert.equal(checkout.BillingIntervalCount, 1);
      assert.equal(checkout.StrategyId, strategyId);
      assert.equal(checkout.SubscriptionId, null);
      assert.equal(checkout.TrialDays, 0);
      const subscriptions = await service.storage.db
        .selectFrom("subscriptions")
        .select("id")
        .where("strategy_id", "=", strategyId)
        .execute();
      assert.deepEqual(subscriptions, []);
      assert.deepEqual(await service.storage.db.selectFrom("sandbox_charges").selectAll().execute(), []);

      const again = await create({ StrategyId: strategyId, BillingInterval: "month", BillingIntervalCount: 1 });
      assert.equal(again.json.Results[0].IntentId, checkout.IntentId);
      assert.equal(again.json.Results[0].ApprovalUrl, checkout.ApprovalUrl);

      const yearly = await create({ StrategyId: strategyId, BillingInterval: "year", BillingIntervalCount: 2 });
      assert.equal(yearly.status, 200, yearly.text);
      assert.notEqual(yearly.json.Results[0].IntentId, checkout.IntentId);
      assert.equal(yearly.json.Results[0].Price, 1000);
      const older = await poll(checkout.IntentId);
      assert.equal(older.json.Results[0].Status, "Superseded");
      assert.equal(older.json.Results[0].ApprovalUrl, null);
      assert.equal((await page(checkout.ApprovalUrl)).text.includes('data-status="Superseded"'), true);
    });

    test("refusals: unknown, invisible, own, free, closed strategies, terms not offered, bad input", async () => {
      const cases: [Record<string, unknown>, string, number, string, string?][] = [
        [{ StrategyId: 999_999 }, p.keys.personB, 404, "StrategyId"],
        [{ StrategyId: strategyId }, p.keys.personA, 400, "StrategyId", "own strategy"],
        [{ StrategyId: strategyId, BillingIntervalCount: 13 }, p.keys.personB, 400, "BillingIntervalCount"],
        [
          { StrategyId: strategyId, BillingInterval: "year", BillingIntervalCount: 4 },
          p.keys.personB,
          400,
          "BillingIntervalCount",
        ],
        [{ StrategyId: strategyId, BillingInterval: "week" }, p.keys.personB, 400, "BillingInterval"],
        [{ StrategyId: "one" }, p.keys.personB, 400, "StrategyId"],
        [{}, p.keys.personB, 400, "StrategyId"],
      ];
      for (const [body, key, status, field, message] of cases) {
        const r = await create(body, key);
        assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
        assert.equal(errorOf(r).FieldName, field, r.text);
        if (message) assert.match(errorOf(r).Message, new RegExp(message));
      }
      const monthlyOnly = await pricedStrategy(service, p, `Monthly only ${checkouts}`, null);
      const yearly = await create({ StrategyId: monthlyOnly, BillingInterval: "year" });
      assert.equal(yearly.status, 400);
      assert.equal(errorOf(yearly).FieldName, "BillingInterval");

      await service.storage.db
        .updateTable("strategies")
        .set({ monthly_cost: "0" })
        .where("id", "=", monthlyOnly)
        .execute();
      const free = await create({ StrategyId: monthlyOnly });
      assert.equal(free.status, 400);
      assert.match(errorOf(free).Message, /free/);

      await service.storage.db.updateTable("strategies").set({ is_alive: 0 }).where("id", "=", strategyId).execute();
      const closed = await create({ StrategyId: strategyId });
      assert.equal(closed.status, 409);
      assert.match(errorOf(closed).Message, /NoSubsAllowed/);

      const made = await service.call("GEN", "POST", "/Strategies/AddStrategy", {
        key: p.keys.personA,
        body: { StrategyName: `Hidden ${checkouts}`, StartingCapital: 10000 },
      });
      const hidden = made.json.Results[0].StrategyId;
      await service.storage.db.updateTable("strategies").set({ monthly_cost: "10" }).where("id", "=", hidden).execute();
      const invisible = await create({ StrategyId: hidden });
      assert.equal(invisible.status, 404, invisible.text);
      // An administrator sees the private strategy, which takes no subscriptions.
      assert.equal((await create({ StrategyId: hidden }, p.keys.admin)).status, 409);
      assert.deepEqual(
        await service.storage.db
          .selectFrom("subscription_checkouts")
          .select("id")
          .where("strategy_id", "in", [strategyId, monthlyOnly, hidden])
          .execute(),
        [],
      );
    });

    test("the status: its customer and service admins see it, others get 404, fast polls get 429 with Retry-After", async () => {
      const { IntentId } = (await create({ StrategyId: strategyId })).json.Results[0];
      for (const key of [p.keys.personA, p.keys.wlAdminB, p.keys.geoAdmin]) {
        const r = await poll(IntentId, key);
        assert.equal(r.status, 404, r.text);
        assert.equal(errorOf(r).FieldName, "IntentId");
      }
      assert.equal((await poll(999_999)).status, 404);
      assert.equal((await poll(IntentId, p.keys.admin)).status, 200);
      assert.equal((await poll(IntentId)).status, 200);
      const fast = await service.call("GEN", "GET", "/General/GetSubscriptionCheckoutStatus", {
        key: p.keys.personB,
        query: { IntentId: String(IntentId) },
      });
      assert.equal(fast.status, 429, fast.text);
      assert.equal(fast.headers["retry-after"], "3");
      assert.equal(errorOf(fast).ErrorCode, "1003");
      assert.equal(errorOf(fast).Meta.RetryAfterSeconds, 3);
      // Another caller's polls are counted apart.
      assert.equal(
        (
          await service.call("GEN", "GET", "/General/GetSubscriptionCheckoutStatus", {
            key: p.keys.admin,
            query: { IntentId: String(IntentId) },
          })
        ).status,
        200,
      );
      const bad = await service.call("GEN", "GET", "/General/GetSubscriptionCheckoutStatus", {
        key: p.keys.personB,
        query: { IntentId: "x" },
      });
      assert.equal(bad.status, 400);
      assert.equal(errorOf(bad).FieldName, "IntentId");
    });

    test("approved and settled: a real direct subscription paid for its first month, one charge; a second checkout is 409", async () => {
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      const shown = await page(ApprovalUrl);
      assert.equal(shown.status, 200);
      assert.equal(shown.headers["content-type"], "text/html; charset=utf-8");
      assert.equal(shown.headers["referrer-policy"], "no-referrer");
      assert.match(String(shown.headers["content-security-policy"]), /form-action 'self'/);
      assert.match(shown.text, /\$49\.50 USD every month/);

      const unconsented = await submit(service, ApprovalUrl, "pay", { form_token: shown.formToken });
      assert.equal(unconsented.status, 400);
      assert.match(unconsented.text, /Tick the consent box/);
      const forged = await submit(service, ApprovalUrl, "pay", { form_token: "x".repeat(43), consent: "yes" });
      assert.equal(forged.status, 403);
      assert.equal((await poll(IntentId)).json.Results[0].Status, "PendingCustomer");
      assert.deepEqual(await service.storage.db.selectFrom("sandbox_charges").selectAll().execute(), []);

      const paid = await submit(service, ApprovalUrl, "pay", { form_token: shown.formToken, consent: "yes" });
      assert.equal(paid.status, 303);
      assert.equal(paid.headers.location, ApprovalUrl);
      const [status] = (await poll(IntentId)).json.Results;
      assert.equal(status.Status, "Active");
      assert.equal(status.ApprovalUrl, null);
      assert.equal(typeof status.SubscriptionId, "number");
      const row = await service.storage.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("id", "=", status.SubscriptionId)
        .executeTakeFirstOrThrow();
      assert.equal(row.kind, "real");
      assert.equal(row.lane, "direct");
      assert.equal(row.price_cents, 4950);
      assert.equal(row.billing_interval, "month");
      assert.equal(row.payment_ref, "sandbox-card");
      assert.equal(row.charge_seq, 1);
      assert.ok((row.paid_until as number) > service.app.runtime.clock.nowMs() + 27 * 86_400_000);
      assert.equal(row.next_charge_at, row.paid_until);
      assert.deepEqual(await ledgerCharges(row.id), [{ reference: `charge:${row.id}:1`, kind: "charge" }]);
      assert.match((await page(ApprovalUrl)).text, /data-status="Active"/);

      // Paying again (a reload, a double click) charges nothing more.
      await submit(service, ApprovalUrl, "pay", { form_token: shown.formToken, consent: "yes" });
      assert.equal((await ledgerCharges(row.id)).length, 1);

      const again = await create({ StrategyId: strategyId });
      assert.equal(again.status, 409);
      assert.equal(errorOf(again).Meta.SubscriptionId, row.id);
    });

    test("declined by the provider: Declined with the reason, nothing charged, the customer may try again", async () => {
      await setOutcome("decline", "Insufficient funds on the card");
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      assert.equal((await pay(ApprovalUrl)).status, 303);
      const [status] = (await poll(IntentId)).json.Results;
      assert.equal(status.Status, "Declined");
      assert.match(status.StatusDetail, /Insufficient funds on the card/);
      assert.equal(status.SubscriptionId, null);
      const made = await service.storage.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.notEqual(made.ended_at, null);
      assert.equal(made.live_key, null);
      assert.deepEqual(await ledgerCharges(made.id), []);

      await setOutcome("approve");
      const retry = await create({ StrategyId: strategyId });
      assert.equal(retry.status, 200, retry.text);
      assert.notEqual(retry.json.Results[0].IntentId, IntentId);
    });

    test("a further step: RequiresAction with the page's confirm button, then Active with one charge", async () => {
      await setOutcome("require_action");
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      await pay(ApprovalUrl);
      const [waiting] = (await poll(IntentId)).json.Results;
      assert.equal(waiting.Status, "RequiresAction");
      assert.equal(waiting.ApprovalUrl, ApprovalUrl);
      assert.equal(waiting.SubscriptionId, null);
      const shown = await page(ApprovalUrl);
      assert.match(shown.text, /id="confirm"/);
      const made = await service.storage.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.equal(made.paid_until, made.started_at, "no access before the payment settles");

      assert.equal((await submit(service, ApprovalUrl, "confirm", { form_token: shown.formToken })).status, 303);
      const [active] = (await poll(IntentId)).json.Results;
      assert.equal(active.Status, "Active");
      assert.equal(active.SubscriptionId, made.id);
      assert.equal((await ledgerCharges(made.id)).length, 1);
    });

    test("declined by the customer: Canceled, nothing charged; a canceled checkout cannot be paid", async () => {
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      const shown = await page(ApprovalUrl);
      assert.equal((await submit(service, ApprovalUrl, "decline", { form_token: shown.formToken })).status, 303);
      assert.equal((await poll(IntentId)).json.Results[0].Status, "Canceled");
      await submit(service, ApprovalUrl, "pay", { form_token: shown.formToken, consent: "yes" });
      assert.equal((await poll(IntentId)).json.Results[0].Status, "Canceled");
      assert.deepEqual(
        await service.storage.db
          .selectFrom("subscriptions")
          .select("id")
          .where("strategy_id", "=", strategyId)
          .execute(),
        [],
      );
    });

    test("a checkout not approved within 24 hours expires; its page offers nothing to pay", async () => {
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      const shown = await page(ApprovalUrl);
      await advanceClock(service, CHECKOUT_LIFETIME_MS / 1000);
      assert.equal((await poll(IntentId)).json.Results[0].Status, "Expired");
      await submit(service, ApprovalUrl, "pay", { form_token: shown.formToken, consent: "yes" });
      assert.equal((await poll(IntentId)).json.Results[0].ApprovalUrl, null);
      assert.doesNotMatch((await page(ApprovalUrl)).text, /id="pay"/);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: null } });
    });

    test("concurrent creates agree on one checkout; concurrent pays make one subscription and one charge", async () => {
      const creates = await Promise.all(Array.from({ length: 10 }, () => create({ StrategyId: strategyId })));
      assert.deepEqual(
        creates.map((r) => r.status),
        creates.map(() => 200),
      );
      const ids = new Set(creates.map((r) => r.json.Results[0].IntentId));
      assert.equal(ids.size, 1);
      const { IntentId, ApprovalUrl } = (creates[0] as CallResult).json.Results[0];
      const shown = await page(ApprovalUrl);
      const pays = await Promise.all(
        Array.from({ length: 5 }, () =>
          submit(service, ApprovalUrl, "pay", { form_token: shown.formToken, consent: "yes" }),
        ),
      );
      assert.deepEqual(
        pays.map((r) => r.status),
        pays.map(() => 303),
      );
      const [active] = (await poll(IntentId)).json.Results;
      assert.equal(active.Status, "Active");
      const made = await service.storage.db
        .selectFrom("subscriptions")
        .select("id")
        .where("strategy_id", "=", strategyId)
        .execute();
      assert.deepEqual(made, [{ id: active.SubscriptionId }]);
      assert.equal((await ledgerCharges(active.SubscriptionId)).length, 1);
    });

    test("the page escapes the strategy's name; an unknown token opens nothing", async () => {
      await service.storage.db
        .updateTable("strategies")
        .set({ name: `<script>alert("x")</script> O'Neil` })
        .where("id", "=", strategyId)
        .execute();
      const { ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      const shown = await page(ApprovalUrl);
      assert.doesNotMatch(shown.text, /<script>/);
      assert.match(shown.text, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; O&#39;Neil/);
      assert.equal((await page(`/Checkout/${"A".repeat(43)}`)).status, 404);
      assert.equal((await service.call("GEN", "GET", "/Checkout/short", { key: null })).status, 404);
      assert.equal((await service.call("WL", "GET", ApprovalUrl, { key: null })).status, 404);
    });

    test("the sandbox provider answers a reference once, across restarts", async () => {
      const request = {
        reference: `test:${checkouts}`,
        paymentRef: "sandbox-card",
        amountCents: 100,
        currency: "USD" as const,
        description: "t",
      };
      await setOutcome("decline");
      const first = await service.app.payments.charge(request);
      assert.equal(first.status, "declined");
      await setOutcome("approve");
      assert.deepEqual(await service.app.payments.charge(request), first);
      service = await service.restart();
      assert.deepEqual(await service.app.payments.charge(request), first);
      const next = await service.app.payments.charge({ ...request, reference: `test:${checkouts}:b` });
      assert.equal(next.status, "settled");
    });
  });
}
