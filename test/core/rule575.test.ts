import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { add, decimal, formatDecimal, fromInteger, mulInteger, ZERO } from "../../src/core/decimal.js";
import {
  judgeCopyFill,
  RULE575_DEFAULTS,
  readToleranceBps,
  readWindowSeconds,
  type StrategyFills,
} from "../../src/core/rule575.js";

const d = decimal;
const T0 = Date.UTC(2026, 2, 10, 14, 0, 0);
const terms = { toleranceBps: d("25"), windowSeconds: 60 };

/** The strategy filled `fills` ([quantity, price, at]) of its order. */
function strategyOf(fills: readonly (readonly [string, string, number])[]): StrategyFills {
  let quantity = ZERO;
  let notional = ZERO;
  for (const [q, price] of fills) {
    quantity = add(quantity, d(q));
    notional = add(notional, mulInteger(d(price), BigInt(q)));
  }
  return { quantity, notional, firstAt: fills[0]?.[2] ?? 0, lastAt: fills.at(-1)?.[2] ?? 0 };
}

test("a buy filled higher than the strategy by more than the tolerance is slippage; within it, it is not", () => {
  const strategy = strategyOf([["100", "200", T0]]);
  // 25 bps of 200 is 0.50: 200.50 is at the tolerance, 200.51 beyond it.
  const at = judgeCopyFill({ side: "buy", price: d("200.5"), filledAt: T0 + 1000 }, strategy, terms);
  assert.deepEqual(at.reasons, []);
  assert.equal(formatDecimal(at.slippage ?? ZERO), "0.5");
  assert.equal(formatDecimal(at.slippageBps ?? ZERO), "25");
  const beyond = judgeCopyFill({ side: "buy", price: d("200.51"), filledAt: T0 + 1000 }, strategy, terms);
  assert.deepEqual(beyond.reasons, ["Slippage"]);
  assert.equal(formatDecimal(beyond.slippageBps ?? ZERO), "25.5");
  // Better is never an exception.
  const better = judgeCopyFill({ side: "buy", price: d("190"), filledAt: T0 }, strategy, terms);
  assert.deepEqual(better.reasons, []);
  assert.equal(formatDecimal(better.slippage ?? ZERO), "-10");
});

test("for a sell, worse is lower", () => {
  const strategy = strategyOf([["10", "50", T0]]);
  assert.deepEqual(judgeCopyFill({ side: "sell", price: d("49.87"), filledAt: T0 }, strategy, terms).reasons, [
    "Slippage",
  ]);
  assert.deepEqual(judgeCopyFill({ side: "sell", price: d("49.875"), filledAt: T0 }, strategy, terms).reasons, []);
  assert.deepEqual(judgeCopyFill({ side: "sell", price: d("55"), filledAt: T0 }, strategy, terms).reasons, []);
});

test("a partly filled strategy order is judged at its volume-weighted price, exactly", () => {
  // 1 at 100 and 2 at 100.01: 100.00666..., which no eight places hold.
  const strategy = strategyOf([
    ["1", "100", T0],
    ["2", "100.01", T0 + 5000],
  ]);
  const judged = judgeCopyFill({ side: "buy", price: d("100.01"), filledAt: T0 + 5000 }, strategy, {
    toleranceBps: d("0.33"),
    windowSeconds: 60,
  });
  // 0.00333.../100.00666... is 0.3333 bps: beyond 0.33, within 0.34.
  assert.deepEqual(judged.reasons, ["Slippage"]);
  assert.equal(formatDecimal(judged.strategyPrice ?? ZERO), "100.00666667");
  const within = judgeCopyFill({ side: "buy", price: d("100.01"), filledAt: T0 + 5000 }, strategy, {
    toleranceBps: d("0.34"),
    windowSeconds: 60,
  });
  assert.deepEqual(within.reasons, []);
});

test("the window runs from the strategy's first fill to the window's seconds after its last", () => {
  const strategy = strategyOf([
    ["5", "10", T0],
    ["5", "10", T0 + 30_000],
  ]);
  const at = (ms: number) => judgeCopyFill({ side: "buy", price: d("10"), filledAt: ms }, strategy, terms);
  assert.deepEqual(at(T0).reasons, []);
  assert.deepEqual(at(T0 + 90_000).reasons, []);
  assert.equal(at(T0).windowEndsAt, T0 + 90_000);
  assert.deepEqual(at(T0 + 90_001).reasons, ["OutsideWindow"]);
  assert.deepEqual(at(T0 - 1).reasons, ["OutsideWindow"], "before the strategy filled");
  const both = judgeCopyFill({ side: "buy", price: d("11"), filledAt: T0 + 200_000 }, strategy, terms);
  assert.deepEqual(both.reasons, ["Slippage", "OutsideWindow"]);
});

test("a copy of a strategy order that never filled is outside any window, with no price to compare", () => {
  const judged = judgeCopyFill({ side: "buy", price: d("10"), filledAt: T0 }, null, terms);
  assert.deepEqual(judged.reasons, ["OutsideWindow"]);
  assert.equal(judged.strategyPrice, null);
  assert.equal(judged.slippageBps, null);
});

test("slippage is reported exactly when the price is beyond the tolerance (property)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.integer({ min: 1, max: 1000 }),
      fc.integer({ min: -5000, max: 5000 }),
      fc.integer({ min: 0, max: 1000 }),
      fc.constantFrom("buy" as const, "sell" as const),
      (cents, quantity, offsetCents, toleranceBps, side) => {
        const price = mulInteger(d("0.01"), BigInt(cents));
        const strategy = {
          quantity: fromInteger(quantity),
          notional: mulInteger(price, BigInt(quantity)),
          firstAt: 0,
          lastAt: 0,
        };
        const copyPrice = add(price, mulInteger(d("0.01"), BigInt(offsetCents)));
        if (copyPrice <= ZERO) return;
        const judged = judgeCopyFill({ side, price: copyPrice, filledAt: 0 }, strategy, {
          toleranceBps: fromInteger(toleranceBps),
          windowSeconds: 0,
        });
        // Worse by offset cents (a buy) out of `cents`: beyond when offset × 10^4 > tolerance × cents.
        const worse = side === "buy" ? offsetCents : -offsetCents;
        assert.equal(judged.reasons.includes("Slippage"), worse * 10_000 > toleranceBps * cents);
      },
    ),
  );
});

test("operators state tolerances in basis points to the hundredth and windows in whole seconds", () => {
  assert.equal(formatDecimal(RULE575_DEFAULTS.toleranceBps), "25");
  assert.equal(formatDecimal(readToleranceBps("12.5") ?? ZERO), "12.5");
  for (const bad of ["-1", "10000.01", "1.005", "ten", ""]) assert.equal(readToleranceBps(bad), null, bad);
  assert.equal(readToleranceBps("0"), ZERO);
  assert.equal(readWindowSeconds("90"), 90);
  for (const bad of ["-1", "1.5", "86401", "x", ""]) assert.equal(readWindowSeconds(bad), null, bad);
});
