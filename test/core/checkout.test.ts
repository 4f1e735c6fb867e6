import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  awaitsCustomer,
  CHECKOUT_STATUSES,
  type CheckoutEvent,
  type CheckoutStatus,
  checkoutTerms,
  isPending,
  MAX_INTERVAL_COUNT,
  nextStatus,
} from "../../src/core/checkout.js";

const EVENTS: readonly CheckoutEvent[] = [
  "pay",
  "confirm",
  "resume",
  "settled",
  "declined",
  "action_required",
  "cancel",
  "expire",
  "supersede",
];
const FINAL: readonly CheckoutStatus[] = ["Active", "Declined", "Canceled", "Expired", "Superseded"];

test("the state table, transition by transition", () => {
  const allowed: [CheckoutStatus, CheckoutEvent, CheckoutStatus][] = [
    ["PendingCustomer", "pay", "Processing"],
    ["PendingCustomer", "cancel", "Canceled"],
    ["PendingCustomer", "expire", "Expired"],
    ["PendingCustomer", "supersede", "Superseded"],
    ["RequiresAction", "confirm", "Processing"],
    ["RequiresAction", "cancel", "Canceled"],
    ["RequiresAction", "expire", "Expired"],
    ["RequiresAction", "supersede", "Superseded"],
    ["Processing", "resume", "Processing"],
    ["Processing", "settled", "Active"],
    ["Processing", "declined", "Declined"],
    ["Processing", "action_required", "RequiresAction"],
  ];
  for (const status of CHECKOUT_STATUSES) {
    for (const event of EVENTS) {
      const expected = allowed.find(([from, on]) => from === status && on === event)?.[2] ?? null;
      assert.equal(nextStatus(status, event), expected, `${status} on ${event}`);
    }
  }
});

test("any sequence of events: finished checkouts never move, money is asked for only from Processing, and a pending checkout keeps its place", () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...EVENTS), { maxLength: 30 }), (events) => {
      let status: CheckoutStatus = "PendingCustomer";
      for (const event of events) {
        const next = nextStatus(status, event);
        if (FINAL.includes(status)) assert.equal(next, null);
        // Only a provider's answer leaves Processing, and only to where it says.
        if (status === "Processing" && next !== null && next !== "Processing") {
          assert.ok(["settled", "declined", "action_required"].includes(event));
        }
        // A charge is settled only after the customer's consent or confirmation brought it to Processing.
        if (next === "Active") assert.equal(status, "Processing");
        if (next === "Processing") assert.ok(["pay", "confirm", "resume"].includes(event));
        status = next ?? status;
        assert.equal(isPending(status), !FINAL.includes(status));
        assert.equal(awaitsCustomer(status), status === "PendingCustomer" || status === "RequiresAction");
      }
    }),
  );
});

test("terms: the price per interval, the counts offered and annual billing only where offered", () => {
  const prices = { monthlyCents: 4950, annualCents: 50_000 };
  assert.deepEqual(checkoutTerms(prices, "month", 1), { ok: true, priceCents: 4950 });
  assert.deepEqual(checkoutTerms(prices, "month", 3), { ok: true, priceCents: 14_850 });
  assert.deepEqual(checkoutTerms(prices, "year", 2), { ok: true, priceCents: 100_000 });
  assert.equal(checkoutTerms({ ...prices, annualCents: null }, "year", 1).ok, false);
  fc.assert(
    fc.property(
      fc.constantFrom("month" as const, "year" as const),
      fc.integer({ min: -5, max: 20 }),
      fc.integer({ min: 1, max: 10_000_000 }),
      (interval, count, cents) => {
        const terms = checkoutTerms({ monthlyCents: cents, annualCents: cents * 10 }, interval, count);
        const offered = count >= 1 && count <= MAX_INTERVAL_COUNT[interval];
        assert.equal(terms.ok, offered);
        if (terms.ok) {
          assert.ok(Number.isSafeInteger(terms.priceCents));
          assert.equal(terms.priceCents, (interval === "year" ? cents * 10 : cents) * count);
        } else {
          assert.equal(terms.field, "BillingIntervalCount");
        }
      },
    ),
  );
});
