import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { monthlyCostCents, type SubscriptionPrice } from "../../src/core/subscription-cost.js";

const price = (over: Partial<SubscriptionPrice>): SubscriptionPrice => ({
  lane: "direct",
  priceCents: 0,
  basePriceCents: 0,
  markupCents: 0,
  billingInterval: "month",
  billingIntervalCount: 1,
  ...over,
});

test("monthly cost of each lane: resale base plus markup, direct spread over its months, grants and free ones nothing", () => {
  assert.equal(
    monthlyCostCents(price({ lane: "resale", priceCents: 4900, basePriceCents: 4900, markupCents: 1000 })),
    5900,
  );
  assert.equal(monthlyCostCents(price({ priceCents: 4900 })), 4900);
  assert.equal(monthlyCostCents(price({ priceCents: 10000, billingInterval: "year" })), 833);
  assert.equal(monthlyCostCents(price({ priceCents: 50000, billingInterval: "year" })), 4167, "41.666… rounds half up");
  assert.equal(monthlyCostCents(price({ priceCents: 9000, billingInterval: "month", billingIntervalCount: 3 })), 3000);
  assert.equal(monthlyCostCents(price({ priceCents: 150, billingIntervalCount: 12 })), 13, "12.5 cents rounds up");
  assert.equal(monthlyCostCents(price({ lane: "grant", priceCents: 4900 })), 0);
  assert.equal(monthlyCostCents(price({ lane: "free" })), 0);
  assert.equal(monthlyCostCents(price({ priceCents: 4900, billingInterval: null, billingIntervalCount: null })), 4900);
});

test("a direct price spread over its months is within half a cent of its exact monthly share", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 10_000_000_00 }),
      fc.constantFrom("month" as const, "year" as const),
      fc.integer({ min: 1, max: 24 }),
      (priceCents, billingInterval, count) => {
        const months = billingInterval === "year" ? 12 * count : count;
        const monthly = monthlyCostCents(price({ priceCents, billingInterval, billingIntervalCount: count }));
        assert.ok(Number.isInteger(monthly));
        assert.ok(Math.abs(monthly * months - priceCents) * 2 <= months, `${monthly} × ${months} vs ${priceCents}`);
      },
    ),
  );
});
