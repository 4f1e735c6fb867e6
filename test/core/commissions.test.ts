import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  COMMISSION_PLANS,
  commission,
  commissionPlan,
  type PlanCommissions,
  planCommissionsOf,
  planCommissionsText,
} from "../../src/core/commissions.js";
import { type Decimal, decimal, formatDecimal } from "../../src/core/decimal.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const at = (symbol: string) => fromServiceSymbol(symbol) as Instrument;
const fee = (plan: string, symbol: string, quantity: string, price: string) =>
  formatDecimal(commission(commissionPlan(plan) as never, at(symbol), decimal(quantity), decimal(price)));

test("Default plan: per share with a minimum and a cap, per contract, per forex unit", () => {
  assert.equal(fee("Default", "AAPL", "1000", "150"), "5", "1000 shares x $0.005");
  assert.equal(fee("Default", "AAPL", "10", "150"), "1", "the $1 minimum");
  assert.equal(fee("Default", "SIRI", "1000", "0.05"), "0.5", "capped at 1% of a $50 trade");
  assert.equal(fee("Default", "AAPL261218C00150000", "3", "2.5"), "1.95");
  assert.equal(fee("Default", "@ESM26", "2", "4500"), "5");
  assert.equal(fee("Default", "EURUSD", "250000", "1.08"), "5", "$2 per 100,000 units");
  assert.equal(fee("Default", "EURUSD", "10000", "1.08"), "2", "the $2 minimum");
});

test("amounts round to the cent, half to even", () => {
  assert.equal(fee("Default", "AAPL", "333", "150"), "1.66", "1.665 -> 1.66");
  assert.equal(fee("Institutional", "AAPL", "1001", "150"), "2", "2.002 -> 2.00");
});

test("plans are found by name without regard to case; None costs nothing", () => {
  assert.equal(commissionPlan("default")?.name, "Default");
  assert.equal(commissionPlan("Retail"), null);
  for (const symbol of ["AAPL", "@ESM26", "EURUSD", "AAPL261218C00150000"]) {
    assert.equal(fee("none", symbol, "100", "10"), "0", symbol);
  }
});

test("plan totals are stored as JSON of each plan's decimal text, and read back as they were", () => {
  const amount = fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }).map((units) => units as Decimal);
  const planName = fc.oneof(fc.constantFrom(...COMMISSION_PLANS.map((plan) => plan.name)), fc.string());
  fc.assert(
    fc.property(fc.dictionary(planName, amount, { noNullPrototype: true }), (totals: PlanCommissions) => {
      const text = planCommissionsText(totals);
      const formatted = Object.fromEntries(Object.entries(totals).map(([name, fee]) => [name, formatDecimal(fee)]));
      assert.equal(text, JSON.stringify(formatted));
      assert.deepEqual(planCommissionsOf(text), totals);
    }),
  );
  assert.equal(planCommissionsText({}), "{}");
});
