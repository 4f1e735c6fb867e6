import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { sql } from "kysely";
import { ControllableClock } from "../../src/core/clock.js";
import { decimal } from "../../src/core/decimal.js";
import { covers, houseAccount, ownerAccount } from "../../src/core/ledger.js";
import { chargeHouses, chargeReference } from "../../src/services/charges.js";
import { fundHouseAccount, setNegativeBilling } from "../../src/services/commerce-admin.js";
import { balances, refundCharge } from "../../src/services/ledger.js";
import { createPerson } from "../../src/services/people.js";
import type { Runtime } from "../../src/services/runtime.js";
import { createSite } from "../../src/services/sites.js";
import { endSubscription, startSubscription } from "../../src/services/subscription-rows.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { insertStrategy } from "../../src/store/strategy-rows.js";
import { transaction } from "../../src/store/transaction.js";
import { BACKENDS, freshStorage, type TestStorage } from "../helpers/service.js";

/**
 * The ledger under any sequence of house fundings, resold subscriptions'
 * charges (chargeHouses, as the biller and WhiteLabelStartSubscription make
 * them), refunds of charges and stops: every transaction's entries sum to
 * zero, all entries together sum to zero, and every house account's balance
 * is the sum of its entries and what a model of the same sequence expects.
 */

type Step =
  | { readonly kind: "fund"; readonly site: number; readonly cents: number }
  | { readonly kind: "subscribe"; readonly site: number; readonly cents: number }
  | { readonly kind: "charge"; readonly subscription: number }
  | { readonly kind: "refund"; readonly charge: number }
  | { readonly kind: "stop"; readonly subscription: number; readonly immediate: boolean }
  | { readonly kind: "negative"; readonly site: number; readonly allow: boolean };

const SITES = 2;
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("fund" as const),
    site: fc.nat(SITES - 1),
    cents: fc.integer({ min: 1, max: 50_000 }),
  }),
  fc.record({
    kind: fc.constant("subscribe" as const),
    site: fc.nat(SITES - 1),
    cents: fc.integer({ min: 1, max: 20_000 }),
  }),
  fc.record({ kind: fc.constant("charge" as const), subscription: fc.nat(50) }),
  fc.record({ kind: fc.constant("charge" as const), subscription: fc.nat(50) }),
  fc.record({ kind: fc.constant("refund" as const), charge: fc.nat(50) }),
  fc.record({ kind: fc.constant("stop" as const), subscription: fc.nat(50), immediate: fc.boolean() }),
  fc.record({ kind: fc.constant("negative" as const), site: fc.nat(SITES - 1), allow: fc.boolean() }),
);

const NUM_RUNS = 25;

for (const backend of BACKENDS) {
  describe(`ledger properties (${backend})`, () => {
    let fresh: TestStorage;
    let runtime: Runtime;
    let ownerId: number;
    let strategyId: number;
    let people = 0;
    /** Across the runs: settled charges and refunds made, so the property is known to have exercised them. */
    const seen = { charges: 0, refunds: 0 };

    before(async () => {
      fresh = await freshStorage(backend);
      await migrateToLatest(fresh.storage);
      runtime = { storage: fresh.storage, clock: new ControllableClock(() => Date.parse("2027-01-01T00:00:00Z")) };
      ownerId = (
        await createPerson(runtime, {
          email: "ledger.owner@example.com",
          firstName: "Ledger",
          lastName: "Owner",
          role: "person",
        })
      ).personId;
      strategyId = await transaction(fresh.storage, (tx) =>
        insertStrategy(tx, {
          name: "Ledger Strategy",
          owner: { id: ownerId, white_label_site_id: null },
          startingCapital: decimal("100000"),
          isPublic: true,
          nowMs: runtime.clock.nowMs(),
        }),
      );
    });
    after(() => fresh.dispose());

    const balanceOf = async (account: string) => (await balances(fresh.storage.db, [account])).get(account) ?? 0;
    const entriesSum = async (account: string) => {
      const row = await fresh.storage.db
        .selectFrom("ledger_entries as e")
        .innerJoin("ledger_accounts as a", "a.id", "e.account_id")
        .select(sql<string | number | null>`sum(e.amount_cents)`.as("total"))
        .where("a.owner_key", "=", account)
        .executeTakeFirstOrThrow();
      return Number(row.total ?? 0);
    };

    test("every transaction balances, all entries sum to zero, house balances are their entries and the model's", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
          const sites: number[] = [];
          const allowNegative: boolean[] = [];
          for (let i = 0; i < SITES; i++) {
            sites.push((await createSite(runtime, { kind: "whitelabel", name: `Ledger site ${people}-${i}` })).id);
            allowNegative.push(false);
          }
          const houses = sites.map((site) => houseAccount(site));
          const expected = houses.map(() => 0);
          const ownerKey = ownerAccount(ownerId);
          let expectedOwner = await balanceOf(ownerKey);
          const subscriptions: { id: number; site: number; cents: number; stopped: boolean }[] = [];
          const charges: { reference: string; site: number; cents: number; refunded: boolean }[] = [];
          const now = runtime.clock.nowMs();

          for (const s of steps) {
            if (s.kind === "fund") {
              await fundHouseAccount(runtime, sites[s.site] as number, s.cents);
              expected[s.site] = (expected[s.site] as number) + s.cents;
            } else if (s.kind === "negative") {
              await setNegativeBilling(runtime, sites[s.site] as number, s.allow);
              allowNegative[s.site] = s.allow;
            } else if (s.kind === "subscribe") {
              people += 1;
              const { personId } = await createPerson(runtime, {
                email: `ledger.customer${people}@example.com`,
                firstName: "Ledger",
                lastName: "Customer",
                role: "person",
                siteId: sites[s.site],
              });
              const started = await transaction(fresh.storage, (tx) =>
                startSubscription(tx, personId, strategyId, now, {
                  kind: "real",
                  lane: "resale",
                  site_id: sites[s.site],
                  price_cents: s.cents,
                  base_price_cents: s.cents,
                  billing_interval: "month",
                  billing_interval_count: 1,
                  next_charge_at: now,
                  next_charge_cents: s.cents,
                }),
              );
              assert.ok(started.started);
              subscriptions.push({ id: started.row.id, site: s.site, cents: s.cents, stopped: false });
            } else if (s.kind === "charge" && subscriptions.length > 0) {
              const sub = subscriptions[s.subscription % subscriptions.length] as (typeof subscriptions)[number];
              await transaction(fresh.storage, async (tx) => {
                const row = await tx
                  .selectFrom("subscriptions")
                  .selectAll()
                  .where("id", "=", sub.id)
                  .executeTakeFirstOrThrow();
                // As the biller: only what is due is charged; a stopped subscription is not.
                if (row.next_charge_at === null) return;
                const reference = chargeReference(row);
                const [result] = await chargeHouses(tx, backend, [row], now);
                const balance = expected[sub.site] as number;
                const settles = covers(balance, sub.cents, allowNegative[sub.site] as boolean);
                assert.equal(result?.settled, settles);
                if (settles) {
                  expected[sub.site] = balance - sub.cents;
                  expectedOwner += sub.cents;
                  charges.push({ reference, site: sub.site, cents: sub.cents, refunded: false });
                  seen.charges += 1;
                }
              });
            } else if (s.kind === "refund" && charges.length > 0) {
              const charge = charges[s.charge % charges.length] as (typeof charges)[number];
              const { transactionId: id } = await transaction(fresh.storage, (tx) =>
                refundCharge(tx, charge.reference, now),
              );
              assert.equal(id === null, charge.refunded, "a charge is refunded once");
              if (!charge.refunded) {
                charge.refunded = true;
                seen.refunds += 1;
                expected[charge.site] = (expected[charge.site] as number) + charge.cents;
                expectedOwner -= charge.cents;
              }
            } else if (s.kind === "stop" && subscriptions.length > 0) {
              const sub = subscriptions[s.subscription % subscriptions.length] as (typeof subscriptions)[number];
              await transaction(fresh.storage, async (tx) => {
                const row = await tx
                  .selectFrom("subscriptions")
                  .selectAll()
                  .where("id", "=", sub.id)
                  .executeTakeFirstOrThrow();
                const end = s.immediate ? now : Math.max(row.paid_until ?? now, now);
                await endSubscription(tx, sub.id, end, now, s.immediate ? "immediate" : "stopped");
              });
              sub.stopped = true;
            }
          }

          const unbalanced = await fresh.storage.db
            .selectFrom("ledger_entries")
            .select(["transaction_id", sql<string | number>`sum(amount_cents)`.as("total")])
            .groupBy("transaction_id")
            .having(sql`sum(amount_cents)`, "<>", 0)
            .execute();
          assert.deepEqual(unbalanced, []);
          const all = await fresh.storage.db
            .selectFrom("ledger_entries")
            .select(sql<string | number | null>`sum(amount_cents)`.as("total"))
            .executeTakeFirstOrThrow();
          assert.equal(Number(all.total ?? 0), 0);
          for (const [i, house] of houses.entries()) {
            const balance = await balanceOf(house);
            assert.equal(balance, expected[i], `${house}`);
            assert.equal(balance, await entriesSum(house), `${house}: the sum of its entries`);
          }
          assert.equal(await balanceOf(ownerKey), expectedOwner);
        }),
        {
          numRuns: NUM_RUNS,
          // One sequence that surely charges, refunds twice and stops, whatever the random ones do.
          examples: [
            [
              [
                { kind: "fund", site: 0, cents: 10_000 },
                { kind: "subscribe", site: 0, cents: 2_500 },
                { kind: "charge", subscription: 0 },
                { kind: "refund", charge: 0 },
                { kind: "refund", charge: 0 },
                { kind: "stop", subscription: 0, immediate: false },
                { kind: "charge", subscription: 0 },
              ],
            ],
          ],
        },
      );
      assert.ok(seen.charges > 0 && seen.refunds > 0, JSON.stringify(seen));
    });
  });
}
