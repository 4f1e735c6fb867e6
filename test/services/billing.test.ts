import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { addMonths, RETRY_DELAYS_MS } from "../../src/core/billing.js";
import { ControllableClock } from "../../src/core/clock.js";
import { EXTERNAL_ACCOUNT, houseAccount, ownerAccount } from "../../src/core/ledger.js";
import { type BillingRuntime, billDue } from "../../src/services/billing.js";
import { chargeHouses, INSUFFICIENT_FUNDS } from "../../src/services/charges.js";
import { balances, post } from "../../src/services/ledger.js";
import type { PaymentOutcome, PaymentProvider, PaymentRequest } from "../../src/services/payments.js";
import { createPerson } from "../../src/services/people.js";
import { createSite } from "../../src/services/sites.js";
import { givesAccess, startSubscription } from "../../src/services/subscription-rows.js";
import { createSystem } from "../../src/services/systems.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { transaction } from "../../src/store/transaction.js";
import { BACKENDS, freshStorage, type TestStorage } from "../helpers/service.js";

/**
 * The recurring biller on the service clock: resold subscriptions renew from
 * their house accounts, direct ones through the payment provider; failures
 * retry on the schedule and then give up, access lapsing with what was paid;
 * an end-of-term stop charges nothing more; no period is charged twice, by
 * a second pass, a second biller or a provider asked again.
 */

const START = Date.UTC(2026, 0, 31, 12);

/** A payment provider at the edge: answers what the test says, settling each reference once. */
class ScriptedProvider implements PaymentProvider {
  readonly asked: PaymentRequest[] = [];
  readonly settled = new Map<string, PaymentOutcome>();
  next: PaymentOutcome | "unreachable" = { status: "settled", providerRef: "p" };

  async charge(request: PaymentRequest): Promise<PaymentOutcome> {
    this.asked.push(request);
    const earlier = this.settled.get(request.reference);
    if (earlier) return earlier;
    if (this.next === "unreachable") throw new Error("connection refused");
    if (this.next.status === "settled") this.settled.set(request.reference, this.next);
    return this.next;
  }
}

for (const backend of BACKENDS) {
  describe(`the recurring biller (${backend})`, () => {
    let fresh: TestStorage;
    let clock: ControllableClock;
    let provider: ScriptedProvider;
    let runtime: BillingRuntime;
    let siteId: number;
    let ownerId: number;
    let n = 0;
    /** The machine's time, which claims run on: it moves on its own while the service clock stands. */
    let realNow = START;

    before(async () => {
      fresh = await freshStorage(backend);
      await migrateToLatest(fresh.storage);
      clock = new ControllableClock(() => realNow, { kind: "fixed", atMs: START });
      provider = new ScriptedProvider();
      runtime = { storage: fresh.storage, clock, payments: provider };
      siteId = (await createSite(runtime, { kind: "whitelabel", name: "Reseller" })).id;
      ownerId = (
        await createPerson(runtime, { email: "owner@example.com", firstName: "O", lastName: "W", role: "person" })
      ).personId;
    });
    after(() => fresh?.dispose());

    const setClock = (atMs: number) => clock.apply({ kind: "fixed", atMs });

    const customer = async () => {
      n += 1;
      return (
        await createPerson(runtime, {
          email: `customer${n}@example.com`,
          firstName: "C",
          lastName: `N${n}`,
          role: "person",
          siteId,
        })
      ).personId;
    };
    const strategy = async () =>
      createSystem(runtime, {
        name: `Strategy ${++n}`,
        startingCapital: "100000",
        ownerPersonId: ownerId,
        isPublic: true,
      });

    const fund = (cents: number) =>
      transaction(fresh.storage, (tx) =>
        post(
          tx,
          [
            {
              kind: "fund",
              reference: null,
              subscriptionId: null,
              memo: null,
              transfers: [{ from: EXTERNAL_ACCOUNT, to: houseAccount(siteId), cents }],
            },
          ],
          clock.nowMs(),
        ),
      );
    /** Everything the house holds taken out: its next charge cannot be paid. */
    const drainHouse = async () => {
      const cents = await houseBalance();
      await transaction(fresh.storage, (tx) =>
        post(
          tx,
          [
            {
              kind: "fund",
              reference: null,
              subscriptionId: null,
              memo: "withdrawal",
              transfers: [{ from: houseAccount(siteId), to: EXTERNAL_ACCOUNT, cents }],
            },
          ],
          clock.nowMs(),
        ),
      );
    };
    const houseBalance = async () =>
      (await balances(fresh.storage.db, [houseAccount(siteId)])).get(houseAccount(siteId)) ?? 0;
    const row = (id: number) =>
      fresh.storage.db.selectFrom("subscriptions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    const charges = async (id: number) =>
      fresh.storage.db
        .selectFrom("ledger_transactions")
        .select("reference")
        .where("subscription_id", "=", id)
        .where("kind", "=", "charge")
        .orderBy("id")
        .execute();

    /** A resold subscription started now, its first period charged as WhiteLabelStartSubscription does. */
    const resale = async (cents: number) => {
      const [personId, strategyId] = [await customer(), await strategy()];
      return transaction(fresh.storage, async (tx) => {
        const start = await startSubscription(tx, personId, strategyId, clock.nowMs(), {
          lane: "resale",
          site_id: siteId,
          price_cents: cents,
          base_price_cents: cents,
          billing_interval: "month",
          billing_interval_count: 1,
          paid_until: clock.nowMs(),
          next_charge_at: clock.nowMs(),
          next_charge_cents: cents,
        });
        assert.ok(start.started);
        const [charged] = await chargeHouses(tx, fresh.storage.backend, [start.row], clock.nowMs());
        return { id: start.row.id, settled: charged?.settled };
      });
    };

    const direct = async (cents: number) => {
      const [personId, strategyId] = [await customer(), await strategy()];
      const start = await transaction(fresh.storage, (tx) =>
        startSubscription(tx, personId, strategyId, clock.nowMs(), {
          lane: "direct",
          price_cents: cents,
          base_price_cents: cents,
          billing_interval: "month",
          billing_interval_count: 1,
          paid_until: clock.nowMs(),
          next_charge_at: clock.nowMs(),
          next_charge_cents: cents,
          payment_ref: "card-1",
        }),
      );
      assert.ok(start.started);
      return start.row.id;
    };

    test("a resold subscription renews each anchored month from the house account", async () => {
      setClock(START);
      await fund(10_000);
      const before = await houseBalance();
      const { id, settled } = await resale(2_500);
      assert.equal(settled, true);
      assert.equal((await row(id)).paid_until, addMonths(START, 1));
      setClock(addMonths(START, 1));
      await billDue(runtime);
      setClock(addMonths(START, 2));
      await billDue(runtime);
      await billDue(runtime);
      const after = await row(id);
      // Anchored on January 31: February 28, March 31, April 30.
      assert.equal(after.paid_until, addMonths(START, 3));
      assert.equal(new Date(after.paid_until as number).getUTCDate(), 30);
      assert.equal(after.charge_seq, 3);
      assert.deepEqual(
        (await charges(id)).map((c) => c.reference),
        [`charge:${id}:1`, `charge:${id}:2`, `charge:${id}:3`],
      );
      assert.equal(await houseBalance(), before - 7_500);
      const owner = await balances(fresh.storage.db, [ownerAccount(ownerId)]);
      assert.ok((owner.get(ownerAccount(ownerId)) ?? 0) >= 7_500);
    });

    test("an unpaid house retries on the schedule, access lapsing at the end of what was paid, then gives up", async () => {
      setClock(START);
      await fund(1_000_000);
      const { id } = await resale(1_000);
      // Drain the house so the renewal cannot be paid.
      await drainHouse();
      let at = addMonths(START, 1);
      setClock(at);
      await billDue(runtime);
      let now = await row(id);
      assert.equal(now.failure_count, 1);
      assert.equal(now.last_failure_reason, INSUFFICIENT_FUNDS);
      assert.equal(now.next_charge_at, at + (RETRY_DELAYS_MS[0] as number));
      assert.equal(givesAccess(now, at), false, "the paid month is over");
      for (const delay of RETRY_DELAYS_MS.slice(0, -1)) {
        at += delay;
        setClock(at);
        await billDue(runtime);
      }
      at += RETRY_DELAYS_MS.at(-1) as number;
      setClock(at);
      const pass = await billDue(runtime);
      assert.ok(pass.givenUp >= 1);
      now = await row(id);
      assert.equal(now.failure_count, RETRY_DELAYS_MS.length + 1);
      assert.equal(now.end_reason, "billing_failed");
      assert.equal(now.next_charge_at, null);
      assert.equal(now.ended_at, at);
      assert.equal(now.live_key, null);
      assert.equal((await charges(id)).length, 1, "only the first month was ever charged");
    });

    test("a house that pays again after a failure settles the overdue period and runs on", async () => {
      setClock(START);
      await fund(1_000_000);
      const { id } = await resale(500);
      await drainHouse();
      const due = addMonths(START, 1);
      setClock(due);
      await billDue(runtime);
      await fund(10_000);
      setClock(due + (RETRY_DELAYS_MS[0] as number));
      await billDue(runtime);
      const now = await row(id);
      assert.equal(now.failure_count, 0);
      assert.equal(now.charge_seq, 2);
      assert.equal(now.paid_until, addMonths(START, 2));
      assert.equal(givesAccess(now, clock.nowMs()), true);
    });

    test("an end-of-term stop is not charged again and ends with its term", async () => {
      setClock(START);
      await fund(10_000);
      const { id } = await resale(700);
      const paidUntil = (await row(id)).paid_until as number;
      await fresh.storage.db
        .updateTable("subscriptions")
        .set({ cancel_pending: 1, next_charge_at: null, ended_at: paidUntil })
        .where("id", "=", id)
        .execute();
      setClock(addMonths(START, 2));
      await billDue(runtime);
      assert.equal((await charges(id)).length, 1);
      assert.equal(givesAccess(await row(id), clock.nowMs()), false);
    });

    test("a direct subscription is charged through the provider, once per period whatever is retried", async () => {
      setClock(START);
      provider.next = { status: "settled", providerRef: "p" };
      const id = await direct(1_999);
      await billDue(runtime);
      let now = await row(id);
      assert.equal(now.charge_seq, 1);
      assert.equal(now.paid_until, addMonths(START, 1));
      const asked = provider.asked.filter((r) => r.reference === `charge:${id}:1:attempt:1`);
      assert.equal(asked.length, 1);
      assert.deepEqual(
        { paymentRef: asked[0]?.paymentRef, amountCents: asked[0]?.amountCents },
        { paymentRef: "card-1", amountCents: 1_999 },
      );
      // The provider is down at the renewal: nothing is recorded, the claim holds the row until it runs out.
      setClock(addMonths(START, 1));
      provider.next = "unreachable";
      await billDue(runtime, { claimMs: 60_000 });
      now = await row(id);
      assert.equal(now.charge_seq, 1);
      assert.equal(now.failure_count, 0);
      provider.next = { status: "declined", reason: "card_declined" };
      await billDue(runtime);
      assert.equal((await row(id)).failure_count, 0, "claimed: left alone until the claim runs out");
      // Declined once the claim has run out: a failure, retried later.
      realNow += 60_001;
      await billDue(runtime);
      now = await row(id);
      assert.equal(now.failure_count, 1);
      assert.equal(now.last_failure_reason, "card_declined");
      provider.next = { status: "settled", providerRef: "p" };
      setClock((now.next_charge_at as number) + 1);
      await billDue(runtime);
      now = await row(id);
      assert.equal(now.charge_seq, 2);
      assert.deepEqual(
        provider.asked.filter((r) => r.reference.startsWith(`charge:${id}:2:`)).map((r) => r.reference),
        [`charge:${id}:2:attempt:1`, `charge:${id}:2:attempt:1`, `charge:${id}:2:attempt:2`],
        "unanswered, then declined: the same attempt; the retry after the decline: a new one",
      );
      assert.deepEqual(
        (await charges(id)).map((c) => c.reference),
        [`charge:${id}:1`, `charge:${id}:2`],
      );
    });

    test("two billers at once charge each due period once", async () => {
      setClock(START);
      await fund(1_000_000);
      const ids: number[] = [];
      for (let i = 0; i < 12; i++) ids.push((await resale(100)).id);
      for (let i = 0; i < 6; i++) ids.push(await direct(100));
      provider.next = { status: "settled", providerRef: "p" };
      setClock(addMonths(START, 1));
      // PostgreSQL: a second connection, as a second process has. SQLite: one process's two billers
      // share its connection (a second connection in the same process would wait on the first
      // synchronously, holding the event loop); two processes are the kill test's.
      const other = backend === "postgres" ? await fresh.openAnother() : fresh.storage;
      try {
        await Promise.all([billDue(runtime, { batch: 5 }), billDue({ ...runtime, storage: other }, { batch: 5 })]);
      } finally {
        if (other !== fresh.storage) await other.close();
      }
      for (const id of ids) {
        const refs = (await charges(id)).map((c) => c.reference);
        assert.deepEqual(refs, [`charge:${id}:1`, `charge:${id}:2`], `subscription ${id}`);
      }
      const unbalanced = await fresh.storage.db
        .selectFrom("ledger_entries")
        .select(["transaction_id", (eb) => eb.fn.sum<number>("amount_cents").as("total")])
        .groupBy("transaction_id")
        .having((eb) => eb.fn.sum("amount_cents"), "!=", 0)
        .execute();
      assert.deepEqual(unbalanced, []);
    });
  });
}
