import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { autoStopPrice } from "../../src/core/autotrade/auto-stop.js";
import { compare, decimal, formatDecimal, fromInteger, mul, neg, sub } from "../../src/core/decimal.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const AAPL = fromServiceSymbol("AAPL") as Instrument;
const stopOf = (quantity: string, cost: string, dollars: number, instrument = AAPL) => {
  const price = autoStopPrice({ quantity: decimal(quantity), cost: decimal(cost) }, dollars, instrument);
  return price === null ? null : formatDecimal(price);
};

test("the stop sits where the holding has lost the dollars, on the price grid, toward the average cost", () => {
  assert.equal(stopOf("50", "10005", 100), "198.1");
  assert.equal(stopOf("30", "6003", 100), "196.77");
  // A short's stop is above, rounded down.
  assert.equal(stopOf("-30", "-6003", 100), "203.43");
  assert.equal(stopOf("0", "0", 100), null);
  // A loss reached only at zero or below: no stop.
  assert.equal(stopOf("1", "5", 100), null);
});

test("the loss at the stop is never more than the dollars asked, nor more than a tick short of them", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5000 }),
      fc.integer({ min: 100, max: 100_000 }),
      fc.integer({ min: 1, max: 10_000 }),
      fc.boolean(),
      (quantity, cents, dollars, long) => {
        const signed = fromInteger(long ? quantity : -quantity);
        const average = decimal((cents / 100).toFixed(2));
        const price = autoStopPrice({ quantity: signed, cost: mul(signed, average) }, dollars, AAPL);
        if (price === null) return;
        const perShare = long ? sub(average, price) : sub(price, average);
        const loss = mul(perShare, fromInteger(quantity));
        assert.ok(compare(loss, fromInteger(dollars)) <= 0, `loss ${formatDecimal(loss)} over ${dollars}`);
        const tickMore = mul(sub(perShare, neg(decimal("0.01"))), fromInteger(quantity));
        assert.ok(compare(tickMore, fromInteger(dollars)) > 0 || compare(price, decimal("1")) < 0);
      },
    ),
  );
});
