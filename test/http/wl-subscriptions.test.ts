import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { houseAccount, ownerAccount } from "../../src/core/ledger.js";
import { successBody } from "../../src/http/v4/envelope.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import { setNegativeBilling } from "../../src/services/commerce-admin.js";
import { balances } from "../../src/services/ledger.js";
import { assertRefused, fund, houseBalance, newCustomer, newStrategy, only, simulate } from "../helpers/commerce.js";
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

/**
 * WhiteLabelStartSubscription and WhiteLabelStopSubscription through HTTP
 * (docs/decisions.md "White-label commerce (issue 12)"): the owned lane's
 * grants, extensions and replays; the resold lane's first charge, house
 * balance refusal and Already subscribed; supersession of a simulation;
 * both stop modes; concurrent starts with one key.
 */
const NOW = "2027-04-01T10:00:00.000Z";

for (const backend of BACKENDS) {
  describe(`white-label subscriptions through HTTP (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** Site A owns it (person A's strategy). */
    let owned: number;
    /** Person B's marketplace strategy in site A's catalog: 49 dollars wholesale, 10 markup. */
    let resold: number;
    /** Public, priced, in no catalog. */
    let elsewhere: number;
    let privateOfB: number;
    let keys = 0;
    const freshKey = () => `key-${backend}-${++keys}`;

    const start = (body: Record<string, unknown>, key = p.keys.wlAdminA) =>
      service.call("WL", "POST", "/Strategies/WhiteLabelStartSubscription", { key, body });
    const stop = (query: Record<string, string | number>, key = p.keys.wlAdminA) =>
      service.call("WL", "DELETE", "/Strategies/WhiteLabelStopSubscription", {
        key,
        query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
      });
    const subscriptionsOf = (personId: number) =>
      service.storage.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("person_id", "=", personId)
        .orderBy("id")
        .execute();

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await setClock(service, NOW);
      owned = await newStrategy(service, p.keys.wlAdminA, p.people.personA, { monthly: 15 });
      resold = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 49 });
      elsewhere = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 12 });
      privateOfB = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 12, isPublic: false });
      const added = await service.call("WL", "POST", "/Strategies/UpdateSiteCatalog", {
        key: p.keys.wlAdminA,
        body: { StrategyIds: [resold], Action: "Add" },
      });
      assert.equal(only(added).Result, "added");
      only(
        await service.call("WL", "POST", "/Strategies/WhiteLabelUpdateSiteCatalogPricing", {
          key: p.keys.wlAdminA,
          body: { StrategyId: resold, MonthlyMarkup: 10 },
        }),
      );
    });
    after(() => service.close());

    test("owned: a grant of Months, replayed by its key, refused with other parameters, extended by a fresh key", async () => {
      const customer = await newCustomer(service, p.siteA);
      const key = freshKey();
      const before = await rowCount(service.storage, "ledger_transactions");
      const granted = only(await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: key, Months: 3 }));
      assert.equal(granted.Lane, "Owned");
      assert.equal(granted.IsIdempotentReplay, false);
      assert.equal(granted.IsFirstChargeSuccessful, null);
      assert.equal(granted.StartDate, NOW);
      assert.equal(granted.AccessUntil, "2027-07-01T10:00:00.000Z");
      assert.equal(granted.EndDate, "2027-07-01T10:00:00.000Z");
      assert.equal(granted.NextChargeDate, null);
      assert.equal(granted.WholesaleMonthly, null);

      const replayed = only(await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: key, Months: 3 }));
      assert.deepEqual(replayed, { ...granted, IsIdempotentReplay: true });
      const reused = await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: key, Months: 4 });
      assertRefused(reused, 409, "IdempotencyKey", "1203");
      const otherCustomer = await newCustomer(service, p.siteA);
      assertRefused(
        await start({ PersonId: otherCustomer, StrategyId: owned, IdempotencyKey: key, Months: 3 }),
        409,
        "IdempotencyKey",
        "1203",
      );

      const extended = only(
        await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey(), Months: 1 }),
      );
      assert.equal(extended.SubscriptionId, granted.SubscriptionId);
      assert.equal(extended.AccessUntil, "2027-08-01T10:00:00.000Z", "from the current end");
      // A late retry of the first call replays it: no second extension.
      assert.equal(
        only(await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: key, Months: 3 })).IsIdempotentReplay,
        true,
      );
      const until = only(
        await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey(), AccessUntil: "2028-01-15" }),
      );
      assert.equal(until.AccessUntil, "2028-01-15T00:00:00.000Z");
      const earlier = only(
        await start({
          PersonId: customer,
          StrategyId: owned,
          IdempotencyKey: freshKey(),
          AccessUntil: "2027-09-01T00:00:00Z",
        }),
      );
      assert.equal(earlier.AccessUntil, "2028-01-15T00:00:00.000Z", "a grant never shortens access");
      const [row] = await subscriptionsOf(customer);
      assert.equal(row?.lane, "grant");
      assert.equal(row?.kind, "real");
      assert.equal(row?.price_cents, 0);
      assert.equal(row?.site_id, p.siteA);
      assert.equal((await subscriptionsOf(customer)).length, 1);
      assert.equal(
        await rowCount(service.storage, "ledger_transactions"),
        before,
        "the service charges nothing for a grant",
      );
    });

    test("owned: term refusals", async () => {
      const customer = await newCustomer(service, p.siteA);
      const base = { PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey() };
      assertRefused(await start(base), 400, "Months", "1102");
      assertRefused(await start({ ...base, Months: 2, AccessUntil: "2027-12-01" }), 400, "Months", "1101");
      assertRefused(await start({ ...base, Months: 0 }), 400, "Months", "1101");
      assertRefused(await start({ ...base, Months: 25 }), 400, "Months", "1101");
      assertRefused(await start({ ...base, Months: 1.5 }), 400, "Months", "1101");
      assertRefused(await start({ ...base, AccessUntil: "2027-03-31" }), 400, "AccessUntil", "1101");
      assertRefused(await start({ ...base, AccessUntil: NOW }), 400, "AccessUntil", "1101");
      assertRefused(await start({ ...base, AccessUntil: "next week" }), 400, "AccessUntil", "1101");
      assertRefused(await start({ PersonId: customer, StrategyId: owned, Months: 1 }), 400, "IdempotencyKey", "1102");
      assertRefused(await start({ ...base, IdempotencyKey: "" }), 400, "IdempotencyKey", "1101");
      assert.deepEqual(await subscriptionsOf(customer), []);
      // 24 months is the longest term.
      assert.equal(only(await start({ ...base, Months: 24 })).AccessUntil, "2029-04-01T10:00:00.000Z");
    });

    test("owned: access lapses at the grant's end; the next grant is a new subscription", async () => {
      const customer = await newCustomer(service, p.siteA);
      const first = only(await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey(), Months: 1 }));
      await setClock(service, "2027-05-02T00:00:00Z");
      try {
        assertRefused(await stop({ PersonId: customer, StrategyId: owned }), 404, "StrategyId", "2013");
        const second = only(
          await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey(), Months: 1 }),
        );
        assert.notEqual(second.SubscriptionId, first.SubscriptionId);
        assert.equal(second.AccessUntil, "2027-06-02T00:00:00.000Z");
      } finally {
        await setClock(service, NOW);
      }
    });

    test("resold: refused without house funds (402, nothing written), then the first charge is made in the call", async () => {
      const customer = await newCustomer(service, p.siteA);
      const body = { PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() };
      const ledgerBefore = await rowCount(service.storage, "ledger_transactions");
      const poor = assertRefused(await start(body), 402, "", "2020");
      assert.deepEqual(poor.Meta, { HouseAccountBalance: 0, WholesaleMonthly: 49 });
      assert.deepEqual(await subscriptionsOf(customer), []);
      assert.equal(await rowCount(service.storage, "ledger_transactions"), ledgerBefore);

      await fund(service, p.siteA, 100.5);
      const started = only(await start(body));
      assert.equal(started.Lane, "Resold");
      assert.equal(started.IsFirstChargeSuccessful, true);
      assert.equal(started.IsIdempotentReplay, false);
      assert.equal(started.StartDate, NOW);
      assert.equal(started.AccessUntil, "2027-05-01T10:00:00.000Z");
      assert.equal(started.NextChargeDate, "2027-05-01T10:00:00.000Z");
      assert.equal(started.NextBillingPrice, 49);
      assert.equal(started.WholesaleMonthly, 49);
      assert.equal(started.EndDate, null);
      assert.equal(started.IsCancelPending, false);
      assert.equal(await houseBalance(service, p.siteA), 5150);
      const owner = ownerAccount(p.people.personB);
      assert.equal((await balances(service.storage.db, [owner])).get(owner), 4900);
      const [row] = await subscriptionsOf(customer);
      assert.equal(row?.lane, "resale");
      assert.equal(row?.price_cents, 4900);
      assert.equal(row?.base_price_cents, 4900);
      assert.equal(row?.markup_cents, 1000);
      assert.equal(row?.billing_interval, "month");
      assert.equal(row?.billing_interval_count, 1);
      assert.equal(row?.idempotency_key, body.IdempotencyKey, "recorded for audit");
      assert.equal(row?.charge_seq, 1);

      // A retry, with its key or another, is told the subscription is live.
      for (const retry of [body, { ...body, IdempotencyKey: freshKey() }]) {
        const again = assertRefused(await start(retry), 409, "StrategyId", "1201");
        assert.equal(again.Message, "Already subscribed");
        assert.deepEqual(again.Meta, { SubscriptionId: started.SubscriptionId });
      }
      assert.equal((await subscriptionsOf(customer)).length, 1);
      assert.equal(await houseBalance(service, p.siteA), 5150);
    });

    test("resold: negative billing lets a site charge past its balance", async () => {
      const before = await houseBalance(service, p.siteA);
      const drained: number[] = [];
      // Spend the balance down below one wholesale charge.
      while ((await houseBalance(service, p.siteA)) >= 4900) {
        const customer = await newCustomer(service, p.siteA);
        only(await start({ PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() }));
        drained.push(customer);
      }
      const left = await houseBalance(service, p.siteA);
      assert.equal(left, before - drained.length * 4900);
      const customer = await newCustomer(service, p.siteA);
      const refused = assertRefused(
        await start({ PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() }),
        402,
        "",
        "2020",
      );
      assert.deepEqual(refused.Meta, { HouseAccountBalance: left / 100, WholesaleMonthly: 49 });
      await setNegativeBilling(service.app.runtime, p.siteA, true);
      try {
        const started = only(await start({ PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() }));
        assert.equal(started.IsFirstChargeSuccessful, true);
        assert.equal(await houseBalance(service, p.siteA), left - 4900);
      } finally {
        await setNegativeBilling(service.app.runtime, p.siteA, false);
        await fund(service, p.siteA, 1000);
      }
    });

    test("resold and unknown strategies: refusals", async () => {
      const customer = await newCustomer(service, p.siteA);
      const base = { PersonId: customer, IdempotencyKey: freshKey() };
      assertRefused(await start({ ...base, StrategyId: resold, Months: 1 }), 400, "Months", "1101");
      assertRefused(
        await start({ ...base, StrategyId: resold, AccessUntil: "2027-12-01" }),
        400,
        "AccessUntil",
        "1101",
      );
      assertRefused(await start({ ...base, StrategyId: elsewhere }), 409, "StrategyId", "1202");
      assertRefused(await start({ ...base, StrategyId: privateOfB }), 404, "StrategyId", "2013");
      assertRefused(await start({ ...base, StrategyId: 987654 }), 404, "StrategyId", "2013");
      // Customers of other sites do not exist for this one.
      assertRefused(await start({ ...base, PersonId: p.people.personB, StrategyId: resold }), 404, "PersonId", "2013");
      assertRefused(await start({ ...base, StrategyId: resold }, p.keys.wlAdminB), 404, "PersonId", "2013");
      assertRefused(
        await start({ ...base, StrategyId: resold, WhiteLabelSiteId: p.siteA }, p.keys.wlAdminB),
        403,
        "WhiteLabelSiteId",
        "1002",
      );
      assertRefused(await start({ ...base, StrategyId: resold }, p.keys.admin), 400, "WhiteLabelSiteId", "1102");
      assert.equal((await start({ ...base, StrategyId: resold }, p.keys.personA)).status, 403);
      assert.equal((await start({ ...base, StrategyId: resold }, p.keys.geoAdmin)).status, 403);
      assert.deepEqual(await subscriptionsOf(customer), []);
      // A service admin names the site.
      assert.equal(
        only(await start({ ...base, StrategyId: resold, WhiteLabelSiteId: p.siteA }, p.keys.admin)).Lane,
        "Resold",
      );
    });

    test("a live simulated subscription is superseded by the real one, in either lane", async () => {
      for (const [strategyId, extra] of [
        [resold, {}],
        [owned, { Months: 2 }],
      ] as const) {
        const customer = await newCustomer(service, p.siteA);
        const simulated = await simulate(service, customer, strategyId);
        const started = only(
          await start({ PersonId: customer, StrategyId: strategyId, IdempotencyKey: freshKey(), ...extra }),
        );
        const [sim, real] = await subscriptionsOf(customer);
        assert.equal(sim?.id, simulated);
        assert.equal(sim?.end_reason, "superseded");
        assert.equal(sim?.ended_at, Date.parse(NOW));
        assert.equal(sim?.live_key, null);
        assert.equal(real?.id, started.SubscriptionId);
        assert.equal(real?.kind, "real");
      }
    });

    test("stop EndOfTerm: billing stops, access runs to the paid end, repeating changes nothing", async () => {
      const customer = await newCustomer(service, p.siteA);
      const started = only(await start({ PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() }));
      const stopped = only(await stop({ PersonId: customer, StrategyId: resold }));
      assert.equal(stopped.SubscriptionId, started.SubscriptionId);
      assert.equal(stopped.Lane, "Resold");
      assert.equal(stopped.IsCancelPending, true);
      assert.equal(stopped.EndDate, "2027-05-01T10:00:00.000Z");
      assert.equal(stopped.AccessUntil, "2027-05-01T10:00:00.000Z");
      assert.equal(stopped.NextChargeDate, null);
      assert.equal(stopped.NextBillingPrice, null);
      const [row] = await subscriptionsOf(customer);
      assert.equal(row?.next_charge_at, null);
      assert.equal(row?.end_reason, "stopped");
      assert.deepEqual(only(await stop({ PersonId: customer, StrategyId: resold, Mode: "EndOfTerm" })), stopped);
      assert.deepEqual(await subscriptionsOf(customer), [row]);
      // Still live until the term ends: a start is Already subscribed; after it, a start is a new subscription.
      assertRefused(
        await start({ PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() }),
        409,
        "StrategyId",
        "1201",
      );
      await advanceClock(service, 31 * 86_400);
      try {
        assertRefused(await stop({ PersonId: customer, StrategyId: resold }), 404, "StrategyId", "2013");
        const again = only(await start({ PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() }));
        assert.notEqual(again.SubscriptionId, started.SubscriptionId);
        only(await stop({ PersonId: customer, StrategyId: resold, Mode: "Immediate" }));
      } finally {
        await setClock(service, NOW);
      }
    });

    test("stop Immediate: ends now, the rest of the term forfeited; a grant's EndOfTerm confirms its end", async () => {
      const customer = await newCustomer(service, p.siteA);
      only(await start({ PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() }));
      const ended = only(
        await stop({ PersonId: customer, StrategyId: resold, Mode: "Immediate", AutotradePositions: "LeaveInPlace" }),
      );
      assert.equal(ended.EndDate, NOW);
      assert.equal(ended.AccessUntil, NOW);
      assert.equal(ended.NextChargeDate, null);
      const [row] = await subscriptionsOf(customer);
      assert.equal(row?.end_reason, "immediate");
      assert.equal(row?.live_key, null);
      assertRefused(
        await stop({ PersonId: customer, StrategyId: resold, Mode: "Immediate" }),
        404,
        "StrategyId",
        "2013",
      );

      const granted = only(
        await start({ PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey(), Months: 6 }),
      );
      const confirmed = only(await stop({ PersonId: customer, StrategyId: owned }));
      assert.equal(confirmed.Lane, "Owned");
      assert.equal(confirmed.EndDate, granted.EndDate);
      assert.equal(confirmed.AccessUntil, "2027-10-01T10:00:00.000Z");
      const forfeited = only(
        await stop({ PersonId: customer, StrategyId: owned, Mode: "Immediate", AutotradePositions: "AttemptToClose" }),
      );
      assert.equal(forfeited.EndDate, NOW);
    });

    test("stop refusals: simulated subscriptions, none live, bad values, other sites", async () => {
      const customer = await newCustomer(service, p.siteA);
      await simulate(service, customer, resold);
      assertRefused(await stop({ PersonId: customer, StrategyId: resold }), 409, "StrategyId", "1202");
      assertRefused(await stop({ PersonId: customer, StrategyId: owned }), 404, "StrategyId", "2013");
      assertRefused(await stop({ PersonId: customer, StrategyId: resold, Mode: "Later" }), 400, "Mode", "1101");
      assertRefused(
        await stop({ PersonId: customer, StrategyId: resold, AutotradePositions: "Sell" }),
        400,
        "AutotradePositions",
        "1101",
      );
      assertRefused(await stop({ StrategyId: resold }), 400, "PersonId", "1102");
      assertRefused(await stop({ PersonId: customer, StrategyId: resold }, p.keys.wlAdminB), 404, "PersonId", "2013");
      assertRefused(
        await stop({ PersonId: customer, StrategyId: resold, WhiteLabelSiteId: p.siteA }, p.keys.wlAdminB),
        403,
        "WhiteLabelSiteId",
        "1002",
      );
      assert.equal((await stop({ PersonId: customer, StrategyId: resold }, p.keys.personA)).status, 403);
      const [sim] = await subscriptionsOf(customer);
      assert.equal(sim?.ended_at, null, "the simulation still runs");
    });

    test("20 concurrent resold starts with one IdempotencyKey: one subscription, one charge, 19 Already subscribed", async () => {
      const customer = await newCustomer(service, p.siteA);
      const body = { PersonId: customer, StrategyId: resold, IdempotencyKey: freshKey() };
      const houseBefore = await houseBalance(service, p.siteA);
      const answers: CallResult[] = await Promise.all(Array.from({ length: 20 }, () => start(body)));
      const won = answers.filter((r) => r.status === 200);
      assert.equal(won.length, 1, answers.map((r) => r.text).join("\n"));
      const id = only(won[0] as CallResult).SubscriptionId;
      for (const lost of answers.filter((r) => r.status !== 200)) {
        assert.deepEqual(assertRefused(lost, 409, "StrategyId", "1201").Meta, { SubscriptionId: id });
      }
      assert.equal((await subscriptionsOf(customer)).length, 1);
      const charges = await service.storage.db
        .selectFrom("ledger_transactions")
        .select("id")
        .where("subscription_id", "=", id)
        .execute();
      assert.equal(charges.length, 1);
      assert.equal(await houseBalance(service, p.siteA), houseBefore - 4900);
    });

    test("20 concurrent owned grants with one IdempotencyKey: one grant, the rest replay it", async () => {
      const customer = await newCustomer(service, p.siteA);
      const body = { PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey(), Months: 2 };
      const answers = await Promise.all(Array.from({ length: 20 }, () => start(body)));
      const results = answers.map(only);
      assert.equal(results.filter((r) => !r.IsIdempotentReplay).length, 1);
      assert.equal(new Set(results.map((r) => r.SubscriptionId)).size, 1);
      assert.deepEqual(new Set(results.map((r) => r.AccessUntil)), new Set(["2027-06-01T10:00:00.000Z"]));
      assert.equal((await subscriptionsOf(customer)).length, 1);
      const grants = await service.storage.db
        .selectFrom("subscription_grants")
        .select("id")
        .where("idempotency_key", "=", body.IdempotencyKey)
        .execute();
      assert.equal(grants.length, 1);
    });

    test("concurrent grants with different keys extend one after the other", async () => {
      const customer = await newCustomer(service, p.siteA);
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          start({ PersonId: customer, StrategyId: owned, IdempotencyKey: freshKey(), Months: 1 }),
        ),
      );
      const results = answers.map(only);
      assert.equal(new Set(results.map((r) => r.SubscriptionId)).size, 1);
      const [row] = await subscriptionsOf(customer);
      assert.equal(row?.ended_at, Date.parse("2027-10-01T10:00:00.000Z"), "six months, each added once");
    });

    test("the house account's balance is its entries' sum", async () => {
      const house = houseAccount(p.siteA);
      const entries = await service.storage.db
        .selectFrom("ledger_entries as e")
        .innerJoin("ledger_accounts as a", "a.id", "e.account_id")
        .select("e.amount_cents")
        .where("a.owner_key", "=", house)
        .execute();
      assert.equal(
        entries.reduce((sum, e) => sum + Number(e.amount_cents), 0),
        await houseBalance(service, p.siteA),
      );
    });
  });
}

test("a first charge that did not settle is told in ResponseStatus.Message; a settled one answers OK", () => {
  const operation = OPERATIONS.find((o) => o.id === "WhiteLabelStartSubscription");
  const message = operation?.successMessage;
  assert.ok(message);
  assert.equal(
    message([{ IsFirstChargeSuccessful: false, LastBillingFailureReason: "Insufficient house account funds" }]),
    "The first charge did not settle (Insufficient house account funds): the recurring biller retries it",
  );
  assert.equal(message([{ IsFirstChargeSuccessful: true, LastBillingFailureReason: null }]), undefined);
  assert.equal(message([{ IsFirstChargeSuccessful: null, LastBillingFailureReason: null }]), undefined);
  assert.equal(successBody([], undefined, "detail").ResponseStatus.Message, "detail");
  assert.equal(successBody([]).ResponseStatus.Message, "OK");
});
