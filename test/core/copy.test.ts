import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type CopyInput, copyDecision } from "../../src/core/autotrade/copy.js";
import { type SetupSettings, settingsOfStart } from "../../src/core/autotrade/settings.js";
import { abs, compare, decimal, formatDecimal, fromInteger, sign, ZERO } from "../../src/core/decimal.js";

const d = decimal;
const ALL_ON = settingsOfStart({ EnableStocks: true, EnableFutures: true, EnableForex: true, EnableOptions: true });

const input = (over: Partial<CopyInput> = {}): CopyInput => ({
  symbolType: "stock",
  side: "buy",
  openClose: "open",
  quantity: d("100"),
  strategyHeld: ZERO,
  followerHeld: ZERO,
  scalingPercentage: d("50"),
  accountValue: d("50000"),
  modelValue: d("100000"),
  price: d("200"),
  settings: ALL_ON,
  ...over,
});

const quantityOf = (over: Partial<CopyInput>) => {
  const decision = copyDecision(input(over));
  return decision.copy ? formatDecimal(decision.quantity) : decision.reason;
};

test("an opening order is scaled by the percentage and the accounts' values, rounded down to whole units", () => {
  assert.equal(quantityOf({}), "25");
  assert.equal(quantityOf({ quantity: d("7") }), "1");
  assert.equal(quantityOf({ quantity: d("3") }), "rounds_to_zero");
  // Forex trades in lots of 1,000 units.
  assert.equal(quantityOf({ symbolType: "forex", quantity: d("25000") }), "6000");
  assert.equal(quantityOf({ symbolType: "future", quantity: d("3"), scalingPercentage: d("100") }), "1");
});

test("what the setup forbids is skipped with its reason", () => {
  const stocksOff = settingsOfStart({ EnableFutures: true });
  assert.equal(quantityOf({ settings: stocksOff }), "class_disabled");
  assert.equal(quantityOf({ settings: { ...ALL_ON, closingOrdersOnly: true } }), "closing_orders_only");
  const noShorts: SetupSettings = { ...ALL_ON, stocks: { ...ALL_ON.stocks, short: false } };
  assert.equal(quantityOf({ settings: noShorts, side: "sell" }), "short_disabled");
  // Options are not shorted unless the start allowed it.
  assert.equal(
    quantityOf({ symbolType: "option", side: "sell", settings: settingsOfStart({ EnableOptions: true }) }),
    "short_disabled",
  );
  assert.equal(quantityOf({ accountValue: ZERO }), "no_account_value");
});

test("minimums raise and maximums clamp, counting what the setup holds the same way", () => {
  const futures = (min: number, max: number | null): SetupSettings => ({
    ...ALL_ON,
    futures: { ...ALL_ON.futures, min, max },
  });
  assert.equal(quantityOf({ symbolType: "future", quantity: d("1"), settings: futures(2, null) }), "2");
  assert.equal(quantityOf({ symbolType: "future", quantity: d("40"), settings: futures(0, 5) }), "5");
  assert.equal(
    quantityOf({ symbolType: "future", quantity: d("40"), followerHeld: d("3"), settings: futures(0, 5) }),
    "2",
  );
  assert.equal(
    quantityOf({ symbolType: "future", quantity: d("40"), followerHeld: d("5"), settings: futures(0, 5) }),
    "at_maximum",
  );
  // Stocks are capped in dollars at the order's price.
  const dollars: SetupSettings = { ...ALL_ON, stocks: { ...ALL_ON.stocks, maxDollars: 1000 } };
  assert.equal(quantityOf({ settings: dollars }), "5");
  assert.equal(quantityOf({ settings: dollars, price: null }), "no_price");
});

test("closing orders follow the follower's holding in proportion, all of it when the strategy closes all", () => {
  const close = (held: string, strategyHeld: string, quantity: string) =>
    quantityOf({
      openClose: "close",
      side: "sell",
      followerHeld: d(held),
      strategyHeld: d(strategyHeld),
      quantity: d(quantity),
    });
  assert.equal(close("30", "100", "50"), "15");
  assert.equal(close("30", "100", "100"), "30");
  // Scaling made the follower's holding odd: closing all closes all of it.
  assert.equal(close("7", "100", "100"), "7");
  assert.equal(close("1", "100", "10"), "rounds_to_zero");
  assert.equal(close("0", "100", "10"), "nothing_to_close");
  // A class switched off later still closes what was copied before.
  assert.equal(
    quantityOf({
      openClose: "close",
      side: "sell",
      followerHeld: d("4"),
      strategyHeld: d("8"),
      quantity: d("8"),
      settings: settingsOfStart({}),
    }),
    "4",
  );
});

test("a copy is always whole units, positive, within the maximum's room, and a close never more than is held", () => {
  fc.assert(
    fc.property(
      fc.constantFrom("stock", "future", "forex", "option" as const),
      fc.constantFrom("buy", "sell" as const),
      fc.constantFrom("open", "close" as const),
      fc.integer({ min: 1, max: 100_000 }),
      fc.integer({ min: -5000, max: 5000 }),
      fc.integer({ min: 1, max: 1000 }),
      fc.integer({ min: 1, max: 10_000_000 }),
      fc.option(fc.integer({ min: 1, max: 50 }), { nil: null }),
      (symbolType, side, openClose, quantity, held, scaling, value, max) => {
        const settings: SetupSettings = {
          ...ALL_ON,
          futures: { ...ALL_ON.futures, max },
          options: { ...ALL_ON.options, short: true, max },
          forex: { ...ALL_ON.forex, max },
        };
        const decision = copyDecision(
          input({
            symbolType,
            side,
            openClose,
            quantity: fromInteger(quantity),
            followerHeld: fromInteger(held),
            strategyHeld: fromInteger(quantity * 2),
            scalingPercentage: fromInteger(scaling),
            accountValue: fromInteger(value),
            settings,
          }),
        );
        if (!decision.copy) return;
        const unit = symbolType === "forex" ? fromInteger(1000) : fromInteger(1);
        assert.equal(sign(decision.quantity), 1);
        assert.equal(decision.quantity % unit, 0n);
        if (openClose === "close") assert.ok(compare(decision.quantity, abs(fromInteger(held))) <= 0);
        if (openClose === "open" && max !== null && symbolType !== "stock") {
          const cap = symbolType === "forex" ? fromInteger(max * 1000) : fromInteger(max);
          const sameWay = (side === "buy" ? held > 0 : held < 0) ? abs(fromInteger(held)) : ZERO;
          assert.ok(compare((decision.quantity + sameWay) as typeof cap, cap) <= 0);
        }
      },
    ),
  );
});
