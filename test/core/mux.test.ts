import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { abs, compare, decimal, formatDecimal, fromInteger, ZERO } from "../../src/core/decimal.js";
import {
  type MuxOrder,
  muxLocalId,
  muxQuantity,
  readScaling,
  replacementQuantity,
  scaled,
  wouldCycle,
} from "../../src/core/mux.js";

const d = decimal;
const order = (over: Partial<MuxOrder> = {}): MuxOrder => ({
  side: "buy",
  openClose: "open",
  quantity: d("100"),
  parentHeld: ZERO,
  conditional: false,
  ...over,
});
const quantityOf = (over: Partial<MuxOrder>, childHeld = "0", scaling = "50") => {
  const decision = muxQuantity(order(over), d(childHeld), d(scaling));
  return decision.mirror ? formatDecimal(decision.quantity) : decision.reason;
};

test("an opening order is the parent's quantity at the variant's percentage, whole units toward zero", () => {
  assert.equal(quantityOf({}), "50");
  assert.equal(quantityOf({ quantity: d("3") }), "1");
  assert.equal(quantityOf({ quantity: d("1") }), "rounds_to_zero");
  assert.equal(quantityOf({ quantity: d("3") }, "0", "250"), "7");
  assert.equal(quantityOf({ side: "sell", quantity: d("9") }, "0", "33.5"), "3");
});

test("a close closes the variant's holding in the share the parent's closes of its own; all of it closes all", () => {
  const close = (quantity: string, parentHeld: string, side: "buy" | "sell" = "sell") =>
    ({ side, openClose: "close", quantity: d(quantity), parentHeld: d(parentHeld) }) as const;
  assert.equal(quantityOf(close("40", "100"), "30"), "12");
  assert.equal(quantityOf(close("100", "100"), "33"), "33");
  assert.equal(quantityOf(close("150", "100"), "33"), "33", "more than held closes all");
  assert.equal(quantityOf(close("1", "3"), "1"), "rounds_to_zero");
  assert.equal(quantityOf(close("5", "10"), "0"), "nothing_to_close");
  assert.equal(quantityOf(close("5", "10", "buy"), "6"), "nothing_to_close", "a buy closes only a short");
  assert.equal(quantityOf(close("5", "-10", "buy"), "-6"), "3");
});

test("an order waiting on another is scaled like an opening one: its position does not exist yet", () => {
  assert.equal(quantityOf({ openClose: "close", side: "sell", quantity: d("10"), conditional: true }), "5");
});

test("a close never closes more than the variant holds, and what the variant ends with follows the parent's share (property)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 10_000 }),
      fc.integer({ min: 1, max: 10_000 }),
      fc.integer({ min: 1, max: 10_000 }),
      (parentHeld, closing, childHeld) => {
        const decision = muxQuantity(
          order({
            side: "sell",
            openClose: "close",
            quantity: fromInteger(closing),
            parentHeld: fromInteger(parentHeld),
          }),
          fromInteger(childHeld),
          d("100"),
        );
        if (!decision.mirror) {
          assert.equal(decision.reason, "rounds_to_zero");
          assert.ok(closing < parentHeld);
          return;
        }
        assert.ok(compare(decision.quantity, fromInteger(childHeld)) <= 0);
        if (closing >= parentHeld) assert.equal(formatDecimal(decision.quantity), String(childHeld));
        else
          assert.equal(
            formatDecimal(decision.quantity),
            String(Math.min(childHeld, Math.floor((childHeld * closing) / parentHeld))),
          );
      },
    ),
  );
});

test("the expected position is the parent's scaled toward zero, a short staying short", () => {
  assert.equal(formatDecimal(scaled(d("-7"), d("50"))), "-3");
  assert.equal(formatDecimal(abs(scaled(d("7"), d("50")))), "3");
  assert.equal(formatDecimal(scaled(d("0"), d("50"))), "0");
});

test("a replacement changes the variant's order in the proportion the parent's changed", () => {
  assert.equal(formatDecimal(replacementQuantity(d("5"), d("10"), d("20"))), "10");
  assert.equal(formatDecimal(replacementQuantity(d("5"), d("10"), d("10"))), "5");
  assert.equal(formatDecimal(replacementQuantity(d("1"), d("3"), d("2"))), "0");
});

test("a variant's order carries its parent order's id as its signal id", () => {
  assert.equal(muxLocalId(42), "mux:42");
});

test("scalings are above 0 and at most 1000 percent", () => {
  assert.equal(formatDecimal(readScaling("12.5") ?? ZERO), "12.5");
  assert.equal(formatDecimal(readScaling("1000") ?? ZERO), "1000");
  for (const bad of ["0", "-5", "1000.01", "x", "", "1e9"]) assert.equal(readScaling(bad), null, bad);
});

test("a link that makes a strategy its own ancestor is a cycle", () => {
  const parentOf = new Map([
    [2, 1],
    [3, 2],
  ]);
  assert.equal(wouldCycle(parentOf, 3, 1), true, "1 → 2 → 3 → 1");
  assert.equal(wouldCycle(parentOf, 2, 1), true);
  assert.equal(wouldCycle(parentOf, 1, 4), false);
  assert.equal(wouldCycle(parentOf, 3, 4), false);
});
