import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  type AccountSummary,
  cashOfFill,
  equityOf,
  type MarkedPosition,
  marginOf,
  openingRequirement,
  summarize,
} from "../../src/core/account.js";
import { COMMISSION_PLANS, commission } from "../../src/core/commissions.js";
import {
  add,
  type Decimal,
  decimal,
  formatDecimal,
  fromInteger,
  ONE,
  round,
  sub,
  ZERO,
} from "../../src/core/decimal.js";
import type { Side } from "../../src/core/fills.js";
import { applyFill, FLAT, openProfit, type Position } from "../../src/core/positions.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const d = decimal;
const fmt = (x: Decimal) => formatDecimal(x);
const at = (symbol: string): Instrument => {
  const instrument = fromServiceSymbol(symbol);
  assert.ok(instrument, symbol);
  return instrument;
};
const DEFAULT_PLAN = COMMISSION_PLANS[0] as (typeof COMMISSION_PLANS)[number];
const AAPL = at("AAPL");
const CALL = at("AAPL261218C00150000");
const ES = at("@ESM26");
const FDAX = at("@FDAXM26");

const position = (quantity: string, cost: string): Position => ({ quantity: d(quantity), cost: d(cost) });
const marked = (instrument: Instrument, p: Position, mark: string, usdRate = "1"): MarkedPosition => ({
  instrument,
  position: p,
  mark: d(mark),
  usdRate: d(usdRate),
});
const show = (s: AccountSummary) => ({
  cash: fmt(s.cash),
  equity: fmt(s.equity),
  marginUsed: fmt(s.marginUsed),
  buyingPower: fmt(s.buyingPower),
});
const fee = (instrument: Instrument, quantity: string, price: string) =>
  commission(DEFAULT_PLAN, instrument, d(quantity), d(price));
const cash = (instrument: Instrument, side: Side, quantity: string, price: string, realized = "0", usdRate = "1") =>
  fmt(cashOfFill(instrument, side, d(quantity), d(price), d(realized), d(usdRate)));
const margin = (instrument: Instrument, quantity: string, price: string, usdRate = "1") =>
  fmt(marginOf(instrument, d(quantity), d(price), d(usdRate)));
const requirement = (instrument: Instrument, side: Side, quantity: string, price: string, usdRate = "1") =>
  fmt(openingRequirement(instrument, side, d(quantity), d(price), d(usdRate)));

test("a long stock: cash pays the notional, equity holds apart from the commission, 50% margin", () => {
  assert.equal(cash(AAPL, "buy", "100", "50"), "-5000");
  assert.equal(fmt(fee(AAPL, "100", "50")), "1");
  const afterBuy = sub(sub(d("10000"), d("5000")), fee(AAPL, "100", "50"));
  assert.deepEqual(show(summarize(afterBuy, [marked(AAPL, position("100", "5000"), "50")])), {
    cash: "4999",
    equity: "9999",
    marginUsed: "2500",
    buyingPower: "14998",
  });
  assert.deepEqual(show(summarize(afterBuy, [marked(AAPL, position("100", "5000"), "55")])), {
    cash: "4999",
    equity: "10499",
    marginUsed: "2750",
    buyingPower: "15498",
  });
  assert.equal(requirement(AAPL, "buy", "100", "50"), "2500");
  assert.equal(margin(AAPL, "100", "50"), "2500");
});

test("a short stock: the sale's proceeds are cash, the position is a liability, 50% margin", () => {
  assert.equal(cash(AAPL, "sell", "100", "50"), "5000");
  const afterSale = d("14999");
  assert.deepEqual(show(summarize(afterSale, [marked(AAPL, position("-100", "-5000"), "50")])), {
    cash: "14999",
    equity: "9999",
    marginUsed: "2500",
    buyingPower: "14998",
  });
  assert.deepEqual(show(summarize(afterSale, [marked(AAPL, position("-100", "-5000"), "60")])), {
    cash: "14999",
    equity: "8999",
    marginUsed: "3000",
    buyingPower: "11998",
  });
  assert.equal(margin(AAPL, "-100", "50"), "2500");
  assert.equal(requirement(AAPL, "sell", "100", "50"), "2500");
});

test("a long option: the premium is paid in full, ties up no margin, and is the whole requirement", () => {
  assert.equal(cash(CALL, "buy", "2", "3.5"), "-700", "2 contracts x 100 x 3.50");
  assert.equal(fmt(fee(CALL, "2", "3.5")), "1.3");
  assert.equal(margin(CALL, "2", "3.5"), "0");
  assert.equal(requirement(CALL, "buy", "2", "3.5"), "700");
  assert.deepEqual(show(summarize(d("9298.7"), [marked(CALL, position("2", "7"), "3.5")])), {
    cash: "9298.7",
    equity: "9998.7",
    marginUsed: "0",
    buyingPower: "19997.4",
  });
  assert.equal(fmt(summarize(d("9298.7"), [marked(CALL, position("2", "7"), "4")]).equity), "10098.7");
});

test("a short option: the premium is received, and 100% of the option's value is margin", () => {
  assert.equal(cash(CALL, "sell", "2", "3.5"), "700");
  assert.equal(margin(CALL, "-2", "3.5"), "700");
  assert.equal(requirement(CALL, "sell", "2", "3.5"), "700");
  assert.deepEqual(show(summarize(d("10700"), [marked(CALL, position("-2", "-7"), "3.5")])), {
    cash: "10700",
    equity: "10000",
    marginUsed: "700",
    buyingPower: "18600",
  });
  assert.deepEqual(show(summarize(d("10700"), [marked(CALL, position("-2", "-7"), "5")])), {
    cash: "10700",
    equity: "9700",
    marginUsed: "1000",
    buyingPower: "17400",
  });
});

test("a future: no cash on opening, the realized P&L on closing, 5% margin, open P&L in equity", () => {
  assert.equal(cash(ES, "buy", "2", "5000"), "0");
  assert.equal(margin(ES, "2", "5000"), "25000", "2 x 5000 x $50 x 5%");
  assert.equal(margin(ES, "-2", "5000"), "25000", "short the same");
  assert.equal(requirement(ES, "sell", "2", "5000"), "25000");
  assert.deepEqual(show(summarize(d("100000"), [marked(ES, position("2", "10000"), "5010")])), {
    cash: "100000",
    equity: "101000",
    marginUsed: "25050",
    buyingPower: "151900",
  });
  const closed = applyFill(position("2", "10000"), "sell", d("2"), d("5010"), ES.multiplier);
  assert.equal(fmt(closed.realized), "1000");
  assert.equal(cash(ES, "sell", "2", "5010", fmt(closed.realized)), "1000");
  assert.deepEqual(closed.position, FLAT);
});

test("forex: 2% margin between the majors, 5% for other pairs, on the notional in dollars", () => {
  assert.equal(margin(at("EURUSD"), "100000", "1.08"), "2160");
  assert.equal(margin(at("USDJPY"), "100000", "150", "0.0066"), "1980", "JPY 15,000,000 at $0.0066");
  assert.equal(margin(at("EURJPY"), "-100000", "160", "0.0066"), "2112");
  assert.equal(margin(at("USDMXN"), "100000", "17", "0.05"), "4250", "MXN is not a major");
  assert.equal(margin(at("EURSEK"), "100000", "11", "0.1"), "5500", "SEK is not a major");
  assert.equal(cash(at("EURUSD"), "buy", "100000", "1.08"), "0", "margined: no cash on opening");
  assert.equal(cash(at("USDJPY"), "sell", "100000", "151", "100000", "0.0066"), "660");
  assert.deepEqual(
    show(summarize(d("10000"), [marked(at("USDJPY"), position("100000", "15000000"), "151", "0.0066")])),
    { cash: "10000", equity: "10660", marginUsed: "1993.2", buyingPower: "17333.6" },
  );
});

test("an instrument in another currency is converted at the rate given", () => {
  assert.equal(margin(FDAX, "1", "18000", "1.08"), "24300", "EUR 450,000 x 1.08 x 5%");
  assert.equal(cash(FDAX, "sell", "1", "18100", "2500", "1.08"), "2700");
  assert.deepEqual(show(summarize(d("50000"), [marked(FDAX, position("1", "18000"), "18100", "1.1")])), {
    cash: "50000",
    equity: "52750",
    marginUsed: "24887.5",
    buyingPower: "55725",
  });
});

test("each fill's cash rounds to the cent", () => {
  assert.equal(cash(at("SNDL"), "buy", "3", "0.1234"), "-0.37");
  assert.equal(cash(at("SNDL"), "sell", "5", "0.125"), "0.62", "0.625 rounds half to even");
  assert.equal(cash(at("USDJPY"), "sell", "100000", "150.01", "1001", "0.0066"), "6.61");
});

test("positions add up, and buying power is twice the excess but never negative", () => {
  const both = summarize(d("4999"), [
    marked(AAPL, position("100", "5000"), "50"),
    marked(ES, position("-1", "-5000"), "4990"),
  ]);
  assert.deepEqual(show(both), {
    cash: "4999",
    equity: "10499",
    marginUsed: "14975",
    buyingPower: "0",
  });
  assert.deepEqual(show(summarize(d("-10000"), [marked(AAPL, position("100", "5000"), "50")])), {
    cash: "-10000",
    equity: "-5000",
    marginUsed: "2500",
    buyingPower: "0",
  });
  assert.deepEqual(show(summarize(d("1000"), [])), {
    cash: "1000",
    equity: "1000",
    marginUsed: "0",
    buyingPower: "2000",
  });
});

test("equity alone (what an excursion notes) is the summary's equity", () => {
  for (const [cash, positions] of [
    [d("4999"), [marked(AAPL, position("100", "5000"), "50"), marked(ES, position("-1", "-5000"), "4990")]],
    [d("-10000"), [marked(AAPL, position("100", "5000"), "50.005")]],
    [d("1000"), []],
  ] as const) {
    assert.equal(fmt(equityOf(cash, positions)), fmt(summarize(cash, positions).equity));
  }
});

test("equity after any fills of a stock = starting cash + realized + open P&L - commissions, to the cent", () => {
  const fill = fc.record({
    side: fc.constantFrom<Side>("buy", "sell"),
    quantity: fc.integer({ min: 1, max: 5000 }),
    cents: fc.integer({ min: 1, max: 200_000 }),
  });
  const dollars = (cents: number) => d((cents / 100).toFixed(2));
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 10_000_000 }),
      fc.array(fill, { minLength: 1, maxLength: 25 }),
      fc.integer({ min: 1, max: 200_000 }),
      (startDollars, fills, markCents) => {
        const start = fromInteger(startDollars);
        let cashNow = start;
        let p: Position = FLAT;
        let realized = ZERO;
        let commissions = ZERO;
        for (const f of fills) {
          const quantity = fromInteger(f.quantity);
          const price = dollars(f.cents);
          const change = applyFill(p, f.side, quantity, price, AAPL.multiplier);
          const paid = commission(DEFAULT_PLAN, AAPL, quantity, price);
          cashNow = sub(add(cashNow, cashOfFill(AAPL, f.side, quantity, price, change.realized, ONE)), paid);
          realized = add(realized, change.realized);
          commissions = add(commissions, paid);
          p = change.position;
        }
        const mark = dollars(markCents);
        const summary = summarize(cashNow, [marked(AAPL, p, formatDecimal(mark))]);
        const expected = round(sub(add(add(start, realized), openProfit(p, mark, AAPL.multiplier)), commissions), 2);
        assert.equal(fmt(summary.equity), fmt(expected));
        assert.equal(fmt(summary.marginUsed), fmt(round(marginOf(AAPL, p.quantity, mark, ONE), 2)));
      },
    ),
    { numRuns: 300 },
  );
});
