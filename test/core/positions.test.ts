import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { add, type Decimal, decimal, formatDecimal, fromInteger, mul, neg, sub, ZERO } from "../../src/core/decimal.js";
import type { Side } from "../../src/core/fills.js";
import { applyFill, averagePrice, FLAT, openProfit, type Position } from "../../src/core/positions.js";

const d = decimal;
const fmt = (x: Decimal | null) => (x === null ? "null" : formatDecimal(x));

test("buying, adding, and selling part at a profit", () => {
  let p: Position = FLAT;
  p = applyFill(p, "buy", d("100"), d("10"), d("1")).position;
  p = applyFill(p, "buy", d("100"), d("12"), d("1")).position;
  assert.equal(fmt(averagePrice(p)), "11");
  const sold = applyFill(p, "sell", d("50"), d("15"), d("1"));
  assert.equal(fmt(sold.realized), "200");
  assert.equal(fmt(sold.closedQuantity), "50");
  assert.equal(fmt(sold.position.quantity), "150");
  assert.equal(fmt(averagePrice(sold.position)), "11");
});

test("a short position gains when the price falls", () => {
  const short = applyFill(FLAT, "sell", d("2"), d("4500"), d("50")).position;
  assert.equal(fmt(short.quantity), "-2");
  assert.equal(fmt(openProfit(short, d("4490"), d("50"))), "1000");
  const covered = applyFill(short, "buy", d("2"), d("4490.25"), d("50"));
  assert.equal(fmt(covered.realized), "975");
  assert.deepEqual(covered.position, FLAT);
});

test("a fill larger than the position closes it and opens the other way", () => {
  const long = applyFill(FLAT, "buy", d("3"), d("100"), d("100")).position;
  const flipped = applyFill(long, "sell", d("5"), d("99"), d("100"));
  assert.equal(fmt(flipped.realized), "-300");
  assert.equal(fmt(flipped.closedQuantity), "3");
  assert.equal(fmt(flipped.position.quantity), "-2");
  assert.equal(fmt(averagePrice(flipped.position)), "99");
});

test("closing a third of an uneven cost keeps every unit of cost somewhere", () => {
  let p = applyFill(FLAT, "buy", d("3"), d("10.01"), d("1")).position;
  p = applyFill(p, "buy", d("1"), d("10.02"), d("1")).position;
  const third = applyFill(p, "sell", d("1"), d("10"), d("1"));
  const rest = applyFill(third.position, "sell", d("3"), d("10"), d("1"));
  assert.deepEqual(rest.position, FLAT);
  assert.equal(fmt(add(third.realized, rest.realized)), "-0.05", "the whole loss, to the last unit");
});

/**
 * Cash-flow identity: realized + open profit = what the fills paid and received,
 * marked to the price. Exact in points; in money each realized amount rounds
 * once to 10^-8, so a fractional multiplier (MYM's $0.50) may leave that much per fill.
 */
test("realized plus open profit always equals the fills' cash flow marked to market", () => {
  const fill = fc.record({
    side: fc.constantFrom<Side>("buy", "sell"),
    quantity: fc.integer({ min: 1, max: 1000 }),
    price: fc.integer({ min: 1, max: 2_000_000 }),
  });
  fc.assert(
    fc.property(
      fc.array(fill, { minLength: 1, maxLength: 30 }),
      fc.integer({ min: 1, max: 2_000_000 }),
      fc.constantFrom("1", "50", "100", "0.5", "12500000"),
      (fills, markCents, multiplierText) => {
        const multiplier = d(multiplierText);
        let position: Position = FLAT;
        let realized = ZERO;
        let cashFlow = ZERO;
        let quantity = ZERO;
        for (const f of fills) {
          const qty = fromInteger(f.quantity);
          const price = d((f.price / 100).toFixed(2));
          const change = applyFill(position, f.side, qty, price, multiplier);
          position = change.position;
          realized = add(realized, change.realized);
          const signed = f.side === "buy" ? qty : neg(qty);
          cashFlow = sub(cashFlow, mul(signed, price));
          quantity = add(quantity, signed);
        }
        assert.equal(position.quantity, quantity, "quantity is conserved");
        const mark = d((markCents / 100).toFixed(2));
        const expected = mul(add(cashFlow, mul(quantity, mark)), multiplier);
        const actual = add(realized, openProfit(position, mark, multiplier));
        const error = actual > expected ? actual - expected : expected - actual;
        if (Number.isInteger(Number(multiplierText))) assert.equal(fmt(actual), fmt(expected));
        else assert.ok(error <= BigInt(fills.length + 1), `off by ${error} units of 10^-8`);
      },
    ),
  );
});
