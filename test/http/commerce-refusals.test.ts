import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { CHECKOUT_LIFETIME_MS } from "../../src/core/checkout.js";
import type { PaymentProvider } from "../../src/services/payments.js";
import { formTokenOf, pricedStrategy, submit } from "../helpers/checkout.js";
import { assertCliRefused, assertSucceeded, childEnv, onlyJson, runCli } from "../helpers/cli.js";
import {
  assertRefused,
  newStrategy as commerceStrategy,
  fund,
  houseBalance,
  newCustomer,
  only,
} from "../helpers/commerce.js";
import { legacyCall } from "../helpers/legacy.js";
import {
  advanceClock,
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { rowCount } from "../helpers/store-rows.js";
import { activeOrders, MARKET_OPEN, newStrategy, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * Refusal and edge paths of commerce that no other test walks, taken as a
 * client (HTTP) or an operator (the CLI) takes them: the GEN checkout when a
 * bank's step is abandoned, the payment provider does not answer or answers
 * late, or the customer got the strategy another way; an Idempotency-Key
 * whose request another process is still running; white-label starts and
 * stops of strategies that changed since they were sold; the CLI's key
 * refusals; a webhook URL that is too long only once percent-encoded. Each
 * refusal is checked for its status, code and field, and for what it did not
 * write.
 */

const errorOf = (r: CallResult) => r.json?.ResponseStatus?.Errors?.[0];

for (const backend of BACKENDS) {
  describe(`GEN checkout: abandoned steps, an unreachable provider, other ways in (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** Real time as the service sees it moves on only when a test says (the poll interval). */
    let skewMs = 0;
    let strategyId = 0;
    let serial = 0;

    before(async () => {
      service = await startTestService(backend, { systemNow: () => Date.now() + skewMs });
      p = await populate(service);
    });
    after(() => service.close());
    beforeEach(async () => {
      serial += 1;
      strategyId = await pricedStrategy(service, p, `Refusals ${serial}`);
      await setOutcome("approve");
    });

    const create = (body: Record<string, unknown>, key = p.keys.personB) =>
      service.call("GEN", "POST", "/General/CreateSubscriptionCheckout", { key, body });
    /** The checkout as its customer polls it, the poll interval let pass first. */
    const poll = async (intentId: number) => {
      skewMs += 3_000;
      const r = await service.call("GEN", "GET", "/General/GetSubscriptionCheckoutStatus", {
        key: p.keys.personB,
        query: { IntentId: String(intentId) },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0];
    };
    const setOutcome = async (Outcome: string) => {
      const r = await service.call("GEN", "POST", "/Sandbox/SetPaymentOutcome", { body: { Outcome } });
      assert.equal(r.status, 200, r.text);
    };
    const formToken = async (url: string) => formTokenOf((await service.call("GEN", "GET", url, { key: null })).text);
    const pay = async (url: string) =>
      submit(service, url, "pay", { form_token: await formToken(url), consent: "yes" });
    const subscriptionsTo = (id: number) =>
      service.storage.db.selectFrom("subscriptions").selectAll().where("strategy_id", "=", id).orderBy("id").execute();
    const ledgerCharges = (subscriptionId: number) =>
      service.storage.db
        .selectFrom("ledger_transactions")
        .select(["reference", "kind"])
        .where("subscription_id", "=", subscriptionId)
        .execute();
    const providerCharges = (subscriptionId: number) =>
      service.storage.db
        .selectFrom("sandbox_charges")
        .select(["reference", "outcome"])
        .where("reference", "like", `charge:${subscriptionId}:%`)
        .execute();

    /** The payment provider answering with `charge` while `work` runs (an outage, a slow answer). */
    async function withProvider(charge: PaymentProvider["charge"], work: () => Promise<void>): Promise<void> {
      const provider = service.app.payments;
      const original = provider.charge;
      provider.charge = charge;
      try {
        await work();
      } finally {
        provider.charge = original;
      }
    }

    test("a page link that opens no checkout: paying or declining there answers 404 and touches no checkout", async () => {
      const { IntentId } = (await create({ StrategyId: strategyId })).json.Results[0];
      const nowhere = `/Checkout/${"A".repeat(43)}`;
      for (const action of ["pay", "decline"] as const) {
        const r = await submit(service, nowhere, action, { form_token: "x".repeat(43), consent: "yes" });
        assert.equal(r.status, 404, `${action}: ${r.text}`);
        assert.match(r.text, /This link opens no checkout/);
      }
      assert.equal((await poll(IntentId)).Status, "PendingCustomer");
      assert.deepEqual(await subscriptionsTo(strategyId), []);
    });

    test("a further step abandoned: declining, a newer checkout or the 24 hours end the subscription made for it; nothing is charged", async () => {
      await setOutcome("require_action");
      const ends: [string, (url: string) => Promise<unknown>, string][] = [
        [
          "declined on the page",
          async (url) => submit(service, url, "decline", { form_token: await formToken(url) }),
          "Canceled",
        ],
        [
          "other terms asked for",
          async () => {
            // Not "Already subscribed": the subscription waiting for the bank's step is the checkout's own.
            const yearly = await create({ StrategyId: strategyId, BillingInterval: "year" });
            assert.equal(yearly.status, 200, yearly.text);
            assert.equal(yearly.json.Results[0].Status, "PendingCustomer");
            assert.equal(yearly.json.Results[0].Price, 500);
          },
          "Superseded",
        ],
        ["left for 24 hours", () => advanceClock(service, CHECKOUT_LIFETIME_MS / 1000), "Expired"],
      ];
      try {
        for (const [what, end, status] of ends) {
          strategyId = await pricedStrategy(service, p, `Abandoned ${serial} ${status}`);
          const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
          assert.equal((await pay(ApprovalUrl)).status, 303, what);
          assert.equal((await poll(IntentId)).Status, "RequiresAction", what);
          const [made] = await subscriptionsTo(strategyId);
          assert.ok(made, `${what}: the subscription the consent made`);
          const confirmToken = await formToken(ApprovalUrl);

          await end(ApprovalUrl);
          const after = await poll(IntentId);
          assert.equal(after.Status, status, what);
          assert.equal(after.ApprovalUrl, null, what);
          assert.equal(after.SubscriptionId, null, what);
          const [ended] = await subscriptionsTo(strategyId);
          assert.equal(ended?.id, made.id, what);
          assert.equal(ended?.end_reason, `checkout_${status.toLowerCase()}`, what);
          assert.equal(ended?.live_key, null, `${what}: the customer's place is free`);
          assert.equal(ended?.paid_until, ended?.started_at, `${what}: access was never given`);

          // The bank's step finished late: the confirm form of the old page changes nothing and charges nothing.
          await submit(service, ApprovalUrl, "confirm", { form_token: confirmToken });
          assert.equal((await poll(IntentId)).Status, status, what);
          assert.deepEqual(await ledgerCharges(made.id), [], what);
          assert.deepEqual(
            await providerCharges(made.id),
            [{ reference: `charge:${made.id}:1`, outcome: "action_required" }],
            `${what}: the provider was asked once and never settled`,
          );
        }
      } finally {
        await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: null } });
      }
    });

    test("the provider unreachable: the checkout stays Processing, keeps its place against other terms, and the page's next post charges once", async () => {
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      await withProvider(
        async () => {
          throw new Error("connect ETIMEDOUT payments.example");
        },
        async () => {
          const failed = await pay(ApprovalUrl);
          // A failure of the service, not a refusal of the customer's: the browser gets the page as it
          // stands, saying so, and no details leak.
          assert.equal(failed.status, 503, failed.text);
          assert.match(String(failed.headers["content-type"]), /^text\/html/);
          assert.match(failed.text, /id="error"[^>]*>This could not be finished just now/);
          assert.match(failed.text, /data-status="Processing"/);
          assert.doesNotMatch(failed.text, /ETIMEDOUT/);
        },
      );
      const waiting = await poll(IntentId);
      assert.equal(waiting.Status, "Processing");
      assert.equal(waiting.ApprovalUrl, null);
      const [made] = await subscriptionsTo(strategyId);
      assert.ok(made, "the subscription the consent made");
      assert.equal(made.paid_until, made.started_at, "no access while the money is in flight");
      assert.deepEqual(await providerCharges(made.id), []);

      // The same terms answer the checkout in flight; other terms cannot replace money in flight.
      const same = await create({ StrategyId: strategyId });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.json.Results[0].IntentId, IntentId);
      assert.equal(same.json.Results[0].Status, "Processing");
      const other = await create({ StrategyId: strategyId, BillingInterval: "year" });
      assert.equal(other.status, 409, other.text);
      assert.equal(errorOf(other).ErrorCode, "1202");
      assert.equal(errorOf(other).FieldName, "StrategyId");
      assert.deepEqual(errorOf(other).Meta, { IntentId });
      assert.match(errorOf(other).Message, /being paid/);
      const checkouts = await service.storage.db
        .selectFrom("subscription_checkouts")
        .select("id")
        .where("strategy_id", "=", strategyId)
        .execute();
      assert.deepEqual(checkouts, [{ id: IntentId }], "no second checkout was made");

      // The page offers to check the payment again (and no decline: the money may be on its way).
      const shown = await service.call("GEN", "GET", ApprovalUrl, { key: null });
      assert.match(shown.text, /data-status="Processing"/);
      assert.match(shown.text, /id="retry"/);
      assert.doesNotMatch(shown.text, /id="decline"/);
      const token = formTokenOf(shown.text);
      assert.equal((await submit(service, ApprovalUrl, "decline", { form_token: token })).status, 303);
      assert.equal((await poll(IntentId)).Status, "Processing", "a decline posted anyway changes nothing");

      // The provider is back: the retry button asks the same reference again, once.
      assert.equal((await submit(service, ApprovalUrl, "pay", { form_token: token })).status, 303);
      const active = await poll(IntentId);
      assert.equal(active.Status, "Active");
      assert.equal(active.SubscriptionId, made.id);
      assert.deepEqual(await ledgerCharges(made.id), [{ reference: `charge:${made.id}:1`, kind: "charge" }]);
      assert.deepEqual(await providerCharges(made.id), [{ reference: `charge:${made.id}:1`, outcome: "settled" }]);
    });

    test("a second post while the provider is still answering asks the same charge: one charge, and the late answer changes nothing", async () => {
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      const token = await formToken(ApprovalUrl);
      const provider = service.app.payments;
      const original = provider.charge;
      const references: string[] = [];
      let reload: CallResult | undefined;
      await withProvider(
        async (request) => {
          references.push(request.reference);
          // The customer reloads and posts the page again while the first answer is on its way.
          if (references.length === 1) reload = await submit(service, ApprovalUrl, "pay", { form_token: token });
          return original.call(provider, request);
        },
        async () => {
          assert.equal((await submit(service, ApprovalUrl, "pay", { form_token: token, consent: "yes" })).status, 303);
        },
      );
      assert.equal(reload?.status, 303, reload?.text);
      const [made] = await subscriptionsTo(strategyId);
      assert.ok(made);
      assert.deepEqual(references, [`charge:${made.id}:1`, `charge:${made.id}:1`], "one reference, asked twice");
      const active = await poll(IntentId);
      assert.equal(active.Status, "Active");
      assert.equal(active.SubscriptionId, made.id);
      assert.equal((await subscriptionsTo(strategyId)).length, 1);
      assert.deepEqual(await ledgerCharges(made.id), [{ reference: `charge:${made.id}:1`, kind: "charge" }]);
      const row = await service.storage.db
        .selectFrom("subscriptions")
        .select("charge_seq")
        .where("id", "=", made.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.charge_seq, 1, "the period is counted once");
    });

    test("a customer who got the strategy another way meanwhile: paying is refused (409, the page says why), nothing is charged", async () => {
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      // Site B resells the strategy and starts it for its customer, paid from its house account.
      const added = await service.call("WL", "POST", "/Strategies/UpdateSiteCatalog", {
        key: p.keys.wlAdminB,
        body: { StrategyIds: [strategyId], Action: "Add" },
      });
      assert.equal(added.json?.Results?.[0]?.Result, "added", added.text);
      await fund(service, p.siteB, 49.5);
      const resold = await service.call("WL", "POST", "/Strategies/WhiteLabelStartSubscription", {
        key: p.keys.wlAdminB,
        body: { PersonId: p.people.personB, StrategyId: strategyId, IdempotencyKey: `resold-${serial}` },
      });
      assert.equal(resold.status, 200, resold.text);
      const resoldId = resold.json.Results[0].SubscriptionId;

      const askedBefore = await service.storage.db.selectFrom("sandbox_charges").select("reference").execute();
      const refused = await pay(ApprovalUrl);
      assert.equal(refused.status, 409, refused.text);
      assert.match(refused.text, /id="error" class="note error">Already subscribed</);
      assert.match(refused.text, /data-status="PendingCustomer"/);
      assert.equal((await poll(IntentId)).Status, "PendingCustomer", "the consent was not taken");
      assert.deepEqual(
        (await subscriptionsTo(strategyId)).map((s) => [s.id, s.lane]),
        [[resoldId, "resale"]],
      );
      assert.deepEqual(
        await service.storage.db.selectFrom("sandbox_charges").select("reference").execute(),
        askedBefore,
        "the payment provider was not asked",
      );
      // Asking for a checkout again is told so too, the pending one notwithstanding.
      const again = await create({ StrategyId: strategyId });
      assert.equal(again.status, 409, again.text);
      assert.equal(errorOf(again).ErrorCode, "1201");
      assert.deepEqual(errorOf(again).Meta, { SubscriptionId: resoldId });
      // Declining the checkout that is no longer wanted still works.
      await submit(service, ApprovalUrl, "decline", { form_token: await formToken(ApprovalUrl) });
      assert.equal((await poll(IntentId)).Status, "Canceled");
      const [still] = await subscriptionsTo(strategyId);
      assert.equal(still?.ended_at, null, "the resold subscription runs on");
    });

    test("a live simulation of the strategy is superseded when the paid subscription starts", async () => {
      const sim = await service.call("WL", "POST", "/Autotrade/StartSim", {
        key: p.keys.wlAdminB,
        body: { PersonId: p.people.personB, StrategyIds: [strategyId] },
      });
      assert.equal(sim.status, 200, sim.text);
      const [started] = sim.json.Results[0].Started;
      assert.ok(started, sim.text);
      const { IntentId, ApprovalUrl } = (await create({ StrategyId: strategyId })).json.Results[0];
      assert.equal((await pay(ApprovalUrl)).status, 303);
      const active = await poll(IntentId);
      assert.equal(active.Status, "Active");
      const [simulated, real] = await subscriptionsTo(strategyId);
      assert.equal(simulated?.id, started.SubscriptionId);
      assert.equal(simulated?.kind, "simulated");
      assert.equal(simulated?.end_reason, "superseded");
      assert.equal(simulated?.live_key, null);
      assert.equal(real?.id, active.SubscriptionId);
      assert.equal(real?.kind, "real");
    });
  });

  describe(`Idempotency-Key: a duplicate of a request another process is running (${backend})`, () => {
    let service: TestService;
    let key: string;
    let personId: number;
    /**
     * The machine's time as the service reads it. While `drifting`, each read
     * moves it a second on, so a wait bounded in real time runs out after a few
     * polls of storage instead of 10 seconds.
     */
    let driftMs = 0;
    let drifting = false;
    const realNow = () => Date.now() + driftMs;
    let serial = 0;

    before(async () => {
      service = await startTestService(backend, {
        marketFeed: { kind: "manual" },
        systemNow: () => {
          if (drifting) driftMs += 1_000;
          return realNow();
        },
      });
      const p = await populate(service);
      key = p.keys.personA;
      personId = p.people.personA;
      // The service clock stands still (the market's hours); only real time moves.
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 200, 200.05);
    });
    after(() => service.close());

    const fresh = () => `elsewhere-${backend}-${++serial}`;
    const order = (idempotencyKey: string, body: Record<string, unknown>) =>
      service.call("GEN", "POST", "/Strategies/NewStrategyOrder", {
        key,
        body: { Order: body },
        headers: { "Idempotency-Key": idempotencyKey },
      });
    const limitBuy = (strategyId: number) => stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 150 });
    const keyRow = (idempotencyKey: string) =>
      service.storage.db
        .selectFrom("idempotency_keys")
        .select(["state", "claimed_by", "answer"])
        .where("person_id", "=", personId)
        .where("key", "=", idempotencyKey)
        .executeTakeFirst();

    test("the duplicate waits for the other process, then is told to send it again later (409, 1204); once it answered, its answer is replayed", async () => {
      const strategyId = await newStrategy(service, key);
      // The request's fingerprint as the service reads it: from a first run under another key.
      const probe = fresh();
      assert.equal((await order(probe, limitBuy(strategyId))).status, 200);
      const { fingerprint } = await service.storage.db
        .selectFrom("idempotency_keys")
        .select("fingerprint")
        .where("person_id", "=", personId)
        .where("key", "=", probe)
        .executeTakeFirstOrThrow();
      // Another process of the service claimed the key a moment ago and is placing the order.
      const retry = fresh();
      await service.storage.db
        .insertInto("idempotency_keys")
        .values({
          person_id: personId,
          key: retry,
          operation: "NewStrategyOrder",
          fingerprint,
          state: "pending",
          claimed_by: "another process",
          claimed_at: realNow(),
          created_at: Date.parse(MARKET_OPEN),
          answer: null,
        })
        .execute();

      const driftBefore = driftMs;
      drifting = true;
      let busy: CallResult;
      try {
        busy = await order(retry, limitBuy(strategyId));
      } finally {
        drifting = false;
      }
      // It waited out its 10 seconds (of the drifting clock), polling storage, before giving up.
      assert.ok(driftMs - driftBefore >= 10_000, `${driftMs - driftBefore} ms`);
      assert.equal(busy.status, 409, busy.text);
      assert.equal(errorOf(busy).ErrorCode, "1204");
      assert.equal(errorOf(busy).FieldName, "Idempotency-Key");
      assert.match(errorOf(busy).Message, /still running: send it again later/);
      assert.equal((await activeOrders(service, key, strategyId)).length, 1, "only the probe's order");
      assert.deepEqual(await keyRow(retry), { state: "pending", claimed_by: "another process", answer: null });

      // The other process placed its order and kept its answer.
      const answer = JSON.stringify({ Results: [{ SignalId: 987654 }], ResponseStatus: { Message: "OK" } });
      await service.storage.db
        .updateTable("idempotency_keys")
        .set({ state: "answered", answer })
        .where("person_id", "=", personId)
        .where("key", "=", retry)
        .execute();
      const replayed = await order(retry, limitBuy(strategyId));
      assert.equal(replayed.status, 200, replayed.text);
      assert.equal(replayed.headers["idempotent-replayed"], "true");
      assert.equal(replayed.text, answer, "the very answer the other process kept");
      assert.equal((await activeOrders(service, key, strategyId)).length, 1, "nothing placed here");
    });
  });

  describe(`white-label subscriptions: strategies that changed, other lanes, lapsed renewals (${backend})`, () => {
    const NOW = "2027-04-01T10:00:00.000Z";
    let service: TestService;
    let p: Population;
    let env: NodeJS.ProcessEnv;
    let keys = 0;
    const freshKey = () => `wl-${backend}-${++keys}`;

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      env = childEnv(service.env);
      await setClock(service, NOW);
      await fund(service, p.siteA, 1000);
    });
    after(() => service.close());

    const start = (body: Record<string, unknown>, key = p.keys.wlAdminA) =>
      service.call("WL", "POST", "/Strategies/WhiteLabelStartSubscription", { key, body });
    const stop = (query: Record<string, string>, key = p.keys.wlAdminA) =>
      service.call("WL", "DELETE", "/Strategies/WhiteLabelStopSubscription", { key, query });
    const addToCatalog = async (key: string, strategyIds: number[]) => {
      const r = await service.call("WL", "POST", "/Strategies/UpdateSiteCatalog", {
        key,
        body: { StrategyIds: strategyIds, Action: "Add" },
      });
      assert.deepEqual(
        r.json?.Results?.map((e: { Result: string }) => e.Result),
        strategyIds.map(() => "added"),
        r.text,
      );
    };
    /** The owner stops (or restarts) the strategy through the legacy API, as owners' tools do. */
    const setAlive = async (strategyId: number, ownerKey: string, alive: boolean) => {
      const r = await legacyCall(
        service,
        "changeSystemAttribute",
        { systemid: strategyId, isAlive: alive ? 1 : 0 },
        ownerKey,
      );
      assert.equal(r.ok, 1, JSON.stringify(r));
    };
    const subscriptionsOf = (personId: number) =>
      service.storage.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("person_id", "=", personId)
        .orderBy("id")
        .execute();
    const grantsWith = (idempotencyKey: string) =>
      service.storage.db
        .selectFrom("subscription_grants")
        .select("id")
        .where("idempotency_key", "=", idempotencyKey)
        .execute();

    test("resold: a strategy its owner stopped, or the operator made free, is refused (409 naming StrategyId); the customer's simulations run on, nothing is charged", async () => {
      const stopped = await commerceStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 20 });
      const free = await commerceStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 25 });
      await addToCatalog(p.keys.wlAdminA, [stopped, free]);
      const customer = await newCustomer(service, p.siteA);
      const sims = await service.call("WL", "POST", "/Autotrade/StartSim", {
        key: p.keys.wlAdminA,
        body: { PersonId: customer, StrategyIds: [stopped, free] },
      });
      assert.equal(only(sims).Started.length, 2, sims.text);

      await setAlive(stopped, p.keys.personB, false);
      const priced = await runCli(env, ["strategy", "price", "--id", String(free), "--monthly", "0", "--json"]);
      assertSucceeded(priced);
      assert.equal(onlyJson(priced).MonthlyCost, 0);

      const houseBefore = await houseBalance(service, p.siteA);
      const ledgerBefore = await rowCount(service.storage, "ledger_transactions");
      for (const [strategyId, why] of [
        [stopped, /no longer alive/],
        [free, /no monthly price to resell at/],
      ] as const) {
        const refused = await start({ PersonId: customer, StrategyId: strategyId, IdempotencyKey: freshKey() });
        assert.match(assertRefused(refused, 409, "StrategyId", "1202").Message, why);
      }
      const held = await subscriptionsOf(customer);
      assert.deepEqual(
        held.map((s) => [s.strategy_id, s.kind, s.ended_at]),
        [
          [stopped, "simulated", null],
          [free, "simulated", null],
        ],
        "nothing superseded: the refusal wrote nothing",
      );
      assert.equal(await houseBalance(service, p.siteA), houseBefore);
      assert.equal(await rowCount(service.storage, "ledger_transactions"), ledgerBefore);
    });

    test("owned: a strategy its owner stopped takes no new grant (409) and the refused key stays unused; the grant made before still replays", async () => {
      const owned = await commerceStrategy(service, p.keys.wlAdminA, p.people.personA, { monthly: 15 });
      const customer = await newCustomer(service, p.siteA);
      const first = { PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey(), Months: 1 };
      const granted = only(await start(first));
      await setAlive(owned, p.keys.personA, false);

      const replayed = only(await start(first));
      assert.equal(replayed.IsIdempotentReplay, true);
      assert.equal(replayed.AccessUntil, granted.AccessUntil);
      const renewal = { ...first, IdempotencyKey: freshKey(), Months: 2 };
      assert.match(assertRefused(await start(renewal), 409, "StrategyId", "1202").Message, /no longer alive/);
      assert.deepEqual(await grantsWith(renewal.IdempotencyKey), [], "the key was not claimed");
      const [row] = await subscriptionsOf(customer);
      assert.equal(new Date(row?.ended_at as number).toISOString(), granted.AccessUntil, "not extended");
      const newcomer = await newCustomer(service, p.siteA);
      const fresh = { PersonId: newcomer, StrategyId: owned, IdempotencyKey: freshKey(), Months: 1 };
      assertRefused(await start(fresh), 409, "StrategyId", "1202");
      assert.deepEqual(await subscriptionsOf(newcomer), []);
      assert.deepEqual(await grantsWith(fresh.IdempotencyKey), []);

      // Alive again, the refused renewal's key is a fresh one: it extends.
      await setAlive(owned, p.keys.personA, true);
      const extended = only(await start(renewal));
      assert.equal(extended.IsIdempotentReplay, false);
      assert.equal(extended.SubscriptionId, granted.SubscriptionId);
      assert.equal(extended.AccessUntil, "2027-07-01T10:00:00.000Z", "two months from the first grant's end");
    });

    test("owned: a customer who bought the strategy at the general site's checkout is Already subscribed to a grant (409, Meta.SubscriptionId)", async () => {
      const owned = await commerceStrategy(service, p.keys.wlAdminA, p.people.wlAdminA, { monthly: 30 });
      const checkout = await service.call("GEN", "POST", "/General/CreateSubscriptionCheckout", {
        key: p.keys.personA,
        body: { StrategyId: owned },
      });
      const { ApprovalUrl } = only(checkout);
      const page = await service.call("GEN", "GET", ApprovalUrl, { key: null });
      const paid = await submit(service, ApprovalUrl, "pay", { form_token: formTokenOf(page.text), consent: "yes" });
      assert.equal(paid.status, 303, paid.text);
      const [direct] = await service.storage.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("person_id", "=", p.people.personA)
        .where("strategy_id", "=", owned)
        .execute();
      assert.equal(direct?.lane, "direct");

      const body = { PersonId: p.people.personA, StrategyId: owned, IdempotencyKey: freshKey(), Months: 6 };
      const refused = assertRefused(await start(body), 409, "StrategyId", "1201");
      assert.equal(refused.Message, "Already subscribed");
      assert.deepEqual(refused.Meta, { SubscriptionId: direct?.id });
      assert.deepEqual(await grantsWith(body.IdempotencyKey), []);
      const after = await service.storage.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("person_id", "=", p.people.personA)
        .where("strategy_id", "=", owned)
        .execute();
      assert.deepEqual(after, [direct], "the paid subscription is untouched, no grant beside it");
    });

    test("resold: stopped at end of term after its renewal failed, it ends now: nothing paid is left to run", async () => {
      const strategyId = await commerceStrategy(service, p.keys.wlAdminA, p.people.personA, { monthly: 40 });
      await addToCatalog(p.keys.wlAdminB, [strategyId]);
      await fund(service, p.siteB, 40);
      const customer = await newCustomer(service, p.siteB);
      const started = only(
        await start({ PersonId: customer, StrategyId: strategyId, IdempotencyKey: freshKey() }, p.keys.wlAdminB),
      );
      assert.equal(started.AccessUntil, "2027-05-01T10:00:00.000Z");
      assert.equal(await houseBalance(service, p.siteB), 0);
      try {
        // A month on, the renewal finds the house account empty: the biller fails it and retries later.
        const now = await advanceClock(service, 31 * 86_400);
        const [lapsed] = await subscriptionsOf(customer);
        assert.equal(lapsed?.failure_count, 1);
        assert.equal(lapsed?.paid_until, Date.parse(started.AccessUntil));
        assert.equal(lapsed?.ended_at, null);

        const stopped = only(
          await stop({ PersonId: String(customer), StrategyId: String(strategyId) }, p.keys.wlAdminB),
        );
        assert.equal(stopped.EndDate, now);
        assert.equal(stopped.IsCancelPending, true);
        assert.equal(stopped.NextChargeDate, null);
        const [ended] = await subscriptionsOf(customer);
        assert.equal(ended?.end_reason, "stopped");
        assert.equal(ended?.live_key, null, "not live any more: the customer's place is free");
        assert.equal(ended?.next_charge_at, null);
        assertRefused(
          await stop({ PersonId: String(customer), StrategyId: String(strategyId) }, p.keys.wlAdminB),
          404,
          "StrategyId",
          "2013",
        );
      } finally {
        await setClock(service, NOW);
      }
    });
  });

  describe(`keys the operator CLI makes and revokes: refusals (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let env: NodeJS.ProcessEnv;
    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      env = childEnv(service.env);
    });
    after(() => service.close());

    const cli = (...args: string[]) => runCli(env, args);

    test("key create refuses an unknown person, an unknown platform and a comment over 200 characters; no key is made", async () => {
      const before = await rowCount(service.storage, "access_keys");
      const person = String(p.people.personA);
      assertCliRefused(await cli("key", "create", "--person", "999999", "--json"), "PersonId", /No person 999999/);
      assertCliRefused(
        await cli("key", "create", "--person", person, "--platform", "999999", "--json"),
        "PlatformId",
        /No platform 999999/,
      );
      assertCliRefused(
        await cli("key", "create", "--person", person, "--comment", "c".repeat(201), "--json"),
        "Comment",
        /at most 200 characters/,
      );
      // Without --json: one line on stderr, nothing on stdout, no stack trace.
      const text = await cli("key", "create", "--person", person, "--comment", "c".repeat(201));
      assert.equal(text.code, 1);
      assert.equal(text.stdout, "");
      assert.equal(text.stderr, "Comment must be at most 200 characters\n");
      assert.equal(await rowCount(service.storage, "access_keys"), before);

      // 200 characters is the limit, and such a key works at once.
      const made = await cli("key", "create", "--person", person, "--comment", "c".repeat(200), "--json");
      assertSucceeded(made);
      const { AccessKey } = onlyJson(made);
      const r = await service.call("WL", "GET", "/General/GetAccessKey", { key: AccessKey });
      assert.equal(r.status, 200, r.text);
      assert.equal(await rowCount(service.storage, "access_keys"), before + 1);
    });

    test("key revoke of a key that does not exist is refused naming Id; no key changes", async () => {
      assertCliRefused(await cli("key", "revoke", "--id", "999999", "--json"), "Id", /No key 999999/);
      const revoked = await service.storage.db
        .selectFrom("access_keys")
        .select("id")
        .where("revoked_at", "is not", null)
        .execute();
      assert.deepEqual(revoked, []);
      const r = await service.call("WL", "GET", "/General/GetAccessKey", { key: p.keys.personA });
      assert.equal(r.status, 200, r.text);
    });
  });

  describe(`webhook registration: URLs long only once written canonically (${backend})`, () => {
    let service: TestService;
    let p: Population;
    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
    });
    after(() => service.close());

    const register = (Url: string) =>
      service.call("WL", "POST", "/Webhooks/Register", { key: p.keys.wlAdminA, body: { Url } });
    const endpoints = () =>
      service.storage.db.selectFrom("webhook_endpoints").select("url").where("site_id", "=", p.siteA).execute();

    test("a URL within 2048 characters as sent but longer percent-encoded is refused naming Url; nothing is registered", async () => {
      const base = "https://hooks.example.com/";
      // Each "é" is written %C3%A9 in the URL kept: 337 of them make 2048 characters, 338 make 2054.
      const fits = `${base}${"é".repeat(337)}`;
      const over = `${base}${"é".repeat(338)}`;
      assert.equal(new URL(fits).href.length, 2048);
      assert.ok(over.length < 400, "far within the limit as sent");

      const refused = await register(over);
      assertRefused(refused, 400, "Url", "1101");
      // Told why a URL of 364 characters is too long: its kept form's length.
      assert.equal(errorOf(refused).Message, "Url is 2054 characters percent-encoded, as it is kept: at most 2048");
      assert.deepEqual(await endpoints(), []);
      const unregistered = await service.call("WL", "DELETE", "/Webhooks/Register", {
        key: p.keys.wlAdminA,
        query: { Url: over },
      });
      assertRefused(unregistered, 404, "Url", "2013");

      const accepted = await register(fits);
      assert.equal(accepted.status, 200, accepted.text);
      assert.equal(accepted.json.Results[0].Url, new URL(fits).href);
      assert.deepEqual(await endpoints(), [{ url: new URL(fits).href }]);
    });
  });
}
