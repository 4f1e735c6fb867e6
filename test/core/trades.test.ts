import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { COMMISSION_PLANS, type CommissionPlan, commission } from "../../src/core/commissions.js";
import {
  abs,
  add,
  compare,
  type Decimal,
  decimal,
  formatDecimal,
  fromInteger,
  mul,
  neg,
  round,
  sign,
  sub,
  ZERO,
} from "../../src/core/decimal.js";
import type { Quote, Side } from "../../src/core/fills.js";
import { submit } from "../../src/core/orders/book.js";
import {
  type Advanced,
  advance,
  type FillRecord,
  type MarketView,
  type TradingState,
} from "../../src/core/orders/execution.js";
import { type OrderTerms, SIGNAL_TYPES } from "../../src/core/orders/terms.js";
import { openProfit, type Position } from "../../src/core/positions.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";
import {
  addToTrade,
  adversePrice,
  averageClosePrice,
  averageOpenPrice,
  observe,
  openTrade,
  reduceTrade,
  splitFee,
  type TradeRecord,
} from "../../src/core/trades.js";

const d = decimal;
const fmt = (x: Decimal) => formatDecimal(x);
const at = (symbol: string): Instrument => {
  const instrument = fromServiceSymbol(symbol);
  assert.ok(instrument, symbol);
  return instrument;
};
const AAPL = at("AAPL");
const ES = at("@ESM26");
const FDAX = at("@FDAXM26");
const DEFAULT_PLAN = COMMISSION_PLANS[0] as CommissionPlan;
const INSTITUTIONAL = COMMISSION_PLANS[1] as CommissionPlan;
const NO_COMMISSION = COMMISSION_PLANS[2] as CommissionPlan;
/** Monday 2026-03-02, 10:00 New York. */
const NOW = Date.parse("2026-03-02T15:00:00Z");

const termsOf = (over: Partial<OrderTerms> = {}): OrderTerms => ({
  instrument: AAPL,
  type: "market",
  side: "buy",
  openClose: "open",
  tif: "gtc",
  quantity: d("100"),
  limit: null,
  stop: null,
  profitTarget: null,
  stopLoss: null,
  signalType: SIGNAL_TYPES.owner,
  ...over,
});

const emptyState = (cash = "100000"): TradingState => ({
  book: new Map(),
  terms: new Map(),
  expiresAtMs: new Map(),
  notes: new Map(),
  positions: new Map(),
  trades: new Map(),
  cash: d(cash),
});

/** The state with one more order submitted (terms built directly, so no position check applies). */
function place(state: TradingState, id: number, over: Partial<OrderTerms>, nowMs = NOW): TradingState {
  const terms = termsOf(over);
  const result = submit(
    state.book,
    { id, quantity: terms.quantity, parentId: null, ocaGroup: null, parkedUntilMs: null },
    nowMs,
  );
  assert.ok(result.ok, result.ok ? "" : result.reason);
  return { ...state, book: result.book, terms: new Map(state.terms).set(id, terms) };
}

const quote = (bid: string, ask: string, bidSize: string | null = null, askSize: string | null = null): Quote => ({
  bid: d(bid),
  ask: d(ask),
  bidSize: bidSize === null ? null : d(bidSize),
  askSize: askSize === null ? null : d(askSize),
});

interface MarketSpec {
  readonly open?: boolean;
  readonly rates?: Readonly<Record<string, string | null>>;
}

function marketOf(quotes: Readonly<Record<string, Quote>>, spec: MarketSpec = {}): MarketView {
  const rates: Record<string, string | null> = { USD: "1", ...spec.rates };
  return {
    quote: (instrument) => quotes[instrument.fullSymbol] ?? null,
    isOpen: () => spec.open ?? true,
    usdRate: (currency) => {
      const rate = rates[currency];
      return rate === undefined || rate === null ? null : d(rate);
    },
  };
}

const sum = (values: readonly Decimal[]): Decimal => values.reduce(add, ZERO);
const signed = (side: Side, quantity: Decimal) => (side === "buy" ? quantity : neg(quantity));
const onlyTrade = (state: TradingState): TradeRecord => {
  assert.equal(state.trades.size, 1);
  const [trade] = state.trades.values();
  assert.ok(trade);
  return trade;
};
const tradeOf = (state: TradingState, key: number | undefined): TradeRecord => {
  assert.ok(key !== undefined);
  const trade = state.trades.get(key);
  assert.ok(trade, `trade ${key}`);
  return trade;
};

// ---------------------------------------------------------------------------
// openTrade / addToTrade / reduceTrade

test("openTrade: one fill opens a trade with its quantity, notional and fee, nothing closed", () => {
  const trade = openTrade(-1, AAPL, "buy", d("100"), d("100.02"), d("1"), NOW);
  assert.deepEqual(trade, {
    key: -1,
    instrument: AAPL,
    side: "buy",
    openedAtMs: NOW,
    closedAtMs: null,
    openedQuantity: d("100"),
    closedQuantity: ZERO,
    openNotional: d("10002"),
    closeNotional: ZERO,
    realized: ZERO,
    commission: d("1"),
    planCommissions: {},
    excursion: null,
    evaluatedAtMs: NOW,
  });
});

test("addToTrade: more opened on the trade's side; the opening time and the rest stay", () => {
  const opened = openTrade(-1, AAPL, "sell", d("100"), d("10"), d("1"), NOW);
  const added = addToTrade(opened, d("50"), d("13.5"), d("0.35"));
  assert.deepEqual(
    [fmt(added.openedQuantity), fmt(added.openNotional), fmt(added.commission)],
    ["150", "1675", "1.35"],
  );
  assert.deepEqual(
    { ...added, openedQuantity: 0, openNotional: 0, commission: 0 },
    {
      ...opened,
      openedQuantity: 0,
      openNotional: 0,
      commission: 0,
    },
  );
  assert.equal(fmt(opened.openedQuantity), "100", "the trade passed in is left as it was");
});

test("reduceTrade: closes part, then the rest; realized and fees add up, closedAtMs only on the close", () => {
  const opened = openTrade(-1, AAPL, "buy", d("150"), d("10"), d("1"), NOW);
  const part = reduceTrade(opened, d("60"), d("12"), d("120"), d("0.5"), false, NOW + 1);
  assert.deepEqual(
    [fmt(part.closedQuantity), fmt(part.closeNotional), fmt(part.realized), fmt(part.commission), part.closedAtMs],
    ["60", "720", "120", "1.5", null],
  );
  assert.equal(fmt(part.openedQuantity), "150");
  const closed = reduceTrade(part, d("90"), d("9.5"), d("-45"), d("0.75"), true, NOW + 2);
  assert.deepEqual(
    [fmt(closed.closedQuantity), fmt(closed.closeNotional), fmt(closed.realized), fmt(closed.commission)],
    ["150", "1575", "75", "2.25"],
  );
  assert.equal(closed.closedAtMs, NOW + 2);
  assert.equal(closed.openedAtMs, NOW);
  assert.equal(closed.side, "buy");
});

test("averageOpenPrice/averageClosePrice: notional over quantity; no close price before a close", () => {
  let trade = openTrade(-1, AAPL, "buy", d("100"), d("10"), ZERO, NOW);
  assert.equal(fmt(averageOpenPrice(trade)), "10");
  assert.equal(averageClosePrice(trade), null);
  trade = addToTrade(trade, d("50"), d("13"), ZERO);
  assert.equal(fmt(averageOpenPrice(trade)), "11");
  trade = reduceTrade(trade, d("60"), d("12"), ZERO, ZERO, false, NOW);
  assert.equal(fmt(averageClosePrice(trade) ?? ZERO), "12");
  trade = reduceTrade(trade, d("90"), d("14"), ZERO, ZERO, true, NOW);
  assert.equal(fmt(averageClosePrice(trade) ?? ZERO), "13.2");
  const thirds = addToTrade(openTrade(-1, AAPL, "sell", d("1"), d("1"), ZERO, NOW), d("2"), d("2"), ZERO);
  assert.equal(fmt(averageOpenPrice(thirds)), "1.66666667", "rounded half-to-even to 8 places");
});

// ---------------------------------------------------------------------------
// splitFee

test("splitFee: parts by quantity to the cent, adding up to the fee", () => {
  const cases: [string, string, string, string, string][] = [
    ["1", "100", "150", "0.67", "0.33"],
    ["0.35", "100", "150", "0.23", "0.12"],
    ["7.5", "1000", "1500", "5", "2.5"],
    ["0", "3", "7", "0", "0"],
    ["0.01", "1", "2", "0", "0.01"],
    ["0.03", "1", "2", "0.02", "0.01"],
    ["2.75", "1", "1", "2.75", "0"],
  ];
  for (const [fee, first, total, a, b] of cases) {
    const [x, y] = splitFee(d(fee), d(first), d(total));
    assert.deepEqual([fmt(x), fmt(y)], [a, b], `${fee} split ${first}/${total}`);
  }
});

test("splitFee property: the parts add up exactly and the first is within half a cent of its share", () => {
  const CENT_UNITS = 1_000_000n; // 0.01 in 10^-8 units
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 10_000_000 }),
      fc.integer({ min: 1, max: 100_000 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (feeCents, total, share) => {
        const first = Math.min(total, Math.max(0, Math.floor(total * share)));
        const fee = d((feeCents / 100).toFixed(2));
        const [a, b] = splitFee(fee, fromInteger(first), fromInteger(total));
        assert.equal(add(a, b), fee);
        assert.equal(round(a, 2), a, "to the cent");
        assert.ok(compare(a, ZERO) >= 0 && compare(b, ZERO) >= 0, "neither part negative");
        // |a − fee × first / total| ≤ half a cent, exactly: |a × total − fee × first| × 2 ≤ cent × total.
        const error = BigInt(a) * BigInt(total) - BigInt(fee) * BigInt(first);
        const absError = error < 0n ? -error : error;
        assert.ok(absError * 2n <= CENT_UNITS * BigInt(total), `${fmt(fee)} ${first}/${total} → ${fmt(a)}`);
      },
    ),
    { numRuns: 500 },
  );
});

// ---------------------------------------------------------------------------
// observe / adversePrice

test("adversePrice: the bid for a long trade, the ask for a short one", () => {
  assert.equal(adversePrice({ side: "buy" }, d("99.98"), d("100.02")), d("99.98"));
  assert.equal(adversePrice({ side: "sell" }, d("99.98"), d("100.02")), d("100.02"));
});

test("observe: no excursion while never under water, but evaluatedAtMs moves", () => {
  const trade = openTrade(-1, AAPL, "buy", d("100"), d("100"), ZERO, NOW);
  const position: Position = { quantity: d("100"), cost: d("10000") };
  const above = observe(trade, position, d("101"), d("1"), d("50000"), NOW + 1000);
  assert.equal(above.excursion, null);
  assert.equal(above.evaluatedAtMs, NOW + 1000);
  const even = observe(above, position, d("100"), d("1"), d("50000"), NOW + 2000);
  assert.equal(even.excursion, null, "an open profit of zero is not under water");
  assert.equal(even.evaluatedAtMs, NOW + 2000);
  assert.equal(observe(even, position, d("105"), d("1"), d("1"), NOW + 2000), even, "same moment: the same trade");
});

test("observe: the excursion is replaced only when strictly worse, with the entry and quantity of the moment", () => {
  const trade = openTrade(-1, AAPL, "buy", d("100"), d("100"), ZERO, NOW);
  const position: Position = { quantity: d("100"), cost: d("10000") };
  const first = observe(trade, position, d("99"), d("1"), d("49900"), NOW + 1000);
  assert.deepEqual(first.excursion, {
    amount: d("-100"),
    worstPrice: d("99"),
    worstPriceAtMs: NOW + 1000,
    equity: d("49900"),
    entryPrice: d("100"),
    openQuantity: d("100"),
  });
  const better = observe(first, position, d("99.5"), d("1"), d("49950"), NOW + 2000);
  assert.equal(better.excursion, first.excursion, "not worse: kept as it was");
  assert.equal(better.evaluatedAtMs, NOW + 2000);
  const equal = observe(better, position, d("99"), d("1"), d("1"), NOW + 3000);
  assert.equal(equal.excursion, first.excursion, "as bad is not worse: the first time it was seen stays");
  assert.equal(equal.evaluatedAtMs, NOW + 3000);
  const grown: Position = { quantity: d("150"), cost: d("15150") };
  const worse = observe(equal, grown, d("98"), d("1"), d("49000"), NOW + 4000);
  assert.deepEqual(worse.excursion, {
    amount: d("-450"),
    worstPrice: d("98"),
    worstPriceAtMs: NOW + 4000,
    equity: d("49000"),
    entryPrice: d("101"),
    openQuantity: d("150"),
  });
  assert.equal(worse.evaluatedAtMs, NOW + 4000);
  assert.equal(worse.openedQuantity, trade.openedQuantity, "observing changes nothing else");
});

test("observe: a short is under water above its entry; multiplier and dollar rate apply, rounded to the cent", () => {
  const short = openTrade(-1, AAPL, "sell", d("10"), d("100"), ZERO, NOW);
  const observed = observe(short, { quantity: d("-10"), cost: d("-1000") }, d("101"), d("1"), d("9"), NOW + 1);
  assert.equal(fmt(observed.excursion?.amount ?? ZERO), "-10");
  assert.equal(fmt(observed.excursion?.entryPrice ?? ZERO), "100");
  assert.equal(fmt(observed.excursion?.openQuantity ?? ZERO), "-10", "the position's signed quantity");
  assert.equal(observe(short, { quantity: d("-10"), cost: d("-1000") }, d("99"), d("1"), d("9"), NOW).excursion, null);
  const es = openTrade(-1, ES, "buy", d("2"), d("5000"), ZERO, NOW);
  const esObserved = observe(es, { quantity: d("2"), cost: d("10000") }, d("4990.25"), d("1"), d("1"), NOW + 1);
  assert.equal(fmt(esObserved.excursion?.amount ?? ZERO), "-975", "2 × 9.75 points × $50");
  const dax = openTrade(-1, FDAX, "buy", d("1"), d("18000"), ZERO, NOW);
  const daxObserved = observe(dax, { quantity: d("1"), cost: d("18000") }, d("17999.5"), d("1.0837"), d("1"), NOW);
  assert.equal(fmt(daxObserved.excursion?.amount ?? ZERO), "-13.55", "EUR 12.50 at 1.0837, to the cent");
});

test("observe property: the excursion is the worst open profit seen, first seen, or null if never below zero", () => {
  const position: Position = { quantity: d("7"), cost: d("700") };
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 9_000, max: 11_000 }), { minLength: 1, maxLength: 20 }), (prices) => {
      let trade = openTrade(-1, AAPL, "buy", d("7"), d("100"), ZERO, NOW);
      let worst: { amount: Decimal; at: number; price: Decimal } | null = null;
      for (const [i, cents] of prices.entries()) {
        const price = d((cents / 100).toFixed(2));
        const amount = openProfit(position, price, AAPL.multiplier);
        if (compare(amount, worst?.amount ?? ZERO) < 0) worst = { amount, at: NOW + i, price };
        trade = observe(trade, position, price, d("1"), d("1000"), NOW + i);
        assert.equal(trade.evaluatedAtMs, NOW + i);
      }
      if (worst === null) assert.equal(trade.excursion, null);
      else {
        assert.equal(trade.excursion?.amount, worst.amount);
        assert.equal(trade.excursion?.worstPriceAtMs, worst.at);
        assert.equal(trade.excursion?.worstPrice, worst.price);
      }
    }),
    { numRuns: 200 },
  );
});

// ---------------------------------------------------------------------------
// Through advance

test("a long trade opened, added to, reduced and closed is one trade with every fill's quantity, profit and fee", () => {
  const market = (bid: string, ask: string) => marketOf({ AAPL: quote(bid, ask) });
  const steps: [Partial<OrderTerms>, string, string][] = [
    [{ quantity: d("1000") }, "99.98", "100.02"],
    [{ quantity: d("500") }, "100.98", "101.02"],
    [{ side: "sell", openClose: "close", quantity: d("600") }, "102", "102.02"],
    [{ side: "sell", openClose: "close", quantity: d("2000") }, "98.5", "98.52"],
  ];
  let state = emptyState("1000000");
  const fills: FillRecord[] = [];
  for (const [i, [terms, bid, ask]] of steps.entries()) {
    state = place(state, i + 1, terms, NOW + i * 1000);
    const result: Advanced = advance(state, market(bid, ask), DEFAULT_PLAN, NOW + i * 1000);
    assert.equal(result.fills.length, 1, `step ${i + 1}`);
    fills.push(...result.fills);
    state = result.state;
    if (i < steps.length - 1) {
      const held = state.positions.get("AAPL");
      assert.equal(held?.tradeKey, fills[0]?.tradeKey, "the position is the open trade");
    }
  }
  assert.deepEqual(
    fills.map((f) => `${f.side} ${fmt(f.quantity)}@${fmt(f.price)} fee ${fmt(f.commission)}`),
    ["buy 1000@100.02 fee 5", "buy 500@101.02 fee 2.5", "sell 600@102 fee 3", "sell 900@98.5 fee 4.5"],
    "the last close is capped at the 900 still held",
  );
  const trade = onlyTrade(state);
  assert.equal(state.positions.size, 0);
  assert.ok(
    fills.every((f) => f.tradeKey === trade.key),
    "every fill in the one trade",
  );
  assert.equal(trade.side, "buy");
  assert.equal(trade.openedAtMs, NOW);
  assert.equal(trade.closedAtMs, NOW + 3000);
  assert.equal(fmt(trade.openedQuantity), "1500");
  assert.equal(trade.closedQuantity, trade.openedQuantity);
  assert.equal(trade.realized, sum(fills.map((f) => f.realized)));
  assert.equal(trade.commission, sum(fills.map((f) => f.commission)));
  assert.equal(fmt(trade.commission), "15");
  assert.equal(fmt(averageOpenPrice(trade)), "100.35333333", "(100020 + 50510) / 1500");
  assert.equal(fmt(averageClosePrice(trade) ?? ZERO), "99.9", "(61200 + 88650) / 1500");
  assert.equal(fmt(trade.realized), "-680", "149850 closed against 150530 of cost");
});

test("a sell of 150 against a long 100 is split: the close of one trade and the opening of the next", () => {
  let state = place(emptyState(), 1, { quantity: d("100") });
  state = advance(state, marketOf({ AAPL: quote("99.98", "100.02") }), INSTITUTIONAL, NOW).state;
  const firstKey = state.positions.get("AAPL")?.tradeKey;
  state = place(state, 2, { side: "sell", openClose: "open", quantity: d("150") }, NOW + 1000);
  const result = advance(state, marketOf({ AAPL: quote("101", "101.02") }), INSTITUTIONAL, NOW + 1000);
  const [closing, opening] = result.fills;
  assert.ok(closing && opening);
  assert.equal(result.fills.length, 2);
  assert.deepEqual(
    result.fills.map((f) => [f.orderId, f.side, fmt(f.quantity), fmt(f.price), fmt(f.positionAfter)]),
    [
      [2, "sell", "100", "101", "0"],
      [2, "sell", "50", "101", "-50"],
    ],
  );
  assert.equal(closing.tradeKey, firstKey);
  assert.notEqual(opening.tradeKey, closing.tradeKey);
  const wholeFee = commission(INSTITUTIONAL, AAPL, d("150"), d("101"));
  assert.equal(fmt(wholeFee), "0.35");
  assert.equal(add(closing.commission, opening.commission), wholeFee, "the fee of one 150 fill");
  assert.deepEqual([fmt(closing.commission), fmt(opening.commission)], ["0.23", "0.12"]);
  assert.equal(fmt(closing.realized), "98", "100 × (101 − 100.02)");
  assert.equal(fmt(opening.realized), "0");
  assert.equal(add(closing.cash, opening.cash), sub(d("15150"), wholeFee), "the cash of one 150 sale");

  const closed = tradeOf(result.state, closing.tradeKey);
  assert.equal(closed.closedAtMs, NOW + 1000);
  assert.deepEqual([fmt(closed.openedQuantity), fmt(closed.closedQuantity)], ["100", "100"]);
  assert.equal(fmt(closed.commission), "0.58", "0.35 opening + 0.23 of the split");
  assert.equal(fmt(closed.realized), "98");
  const opened = tradeOf(result.state, opening.tradeKey);
  assert.equal(opened.side, "sell");
  assert.equal(opened.closedAtMs, null);
  assert.equal(opened.openedAtMs, NOW + 1000);
  assert.deepEqual([fmt(opened.openedQuantity), fmt(opened.closedQuantity)], ["50", "0"]);
  assert.equal(fmt(opened.commission), "0.12");
  assert.equal(fmt(averageOpenPrice(opened)), "101");
  const held = result.state.positions.get("AAPL");
  assert.equal(held?.tradeKey, opening.tradeKey, "the position points at the open trade");
  assert.equal(fmt(held?.position.quantity ?? ZERO), "-50");
});

test("an open long's excursion follows the bid of lower quotes, and a closing fill's price is observed too", () => {
  let state = place(emptyState(), 1, { quantity: d("100") });
  state = advance(state, marketOf({ AAPL: quote("99.98", "100.02") }), NO_COMMISSION, NOW).state;
  const key = state.positions.get("AAPL")?.tradeKey;
  assert.equal(fmt(tradeOf(state, key).excursion?.amount ?? ZERO), "-4", "at once: 100 × the spread, at the bid");

  const lower = advance(state, marketOf({ AAPL: quote("95", "95.02") }), NO_COMMISSION, NOW + 1000).state;
  assert.deepEqual(tradeOf(lower, key).excursion, {
    amount: d("-502"),
    worstPrice: d("95"),
    worstPriceAtMs: NOW + 1000,
    equity: d("99499"),
    entryPrice: d("100.02"),
    openQuantity: d("100"),
  });
  const better = advance(lower, marketOf({ AAPL: quote("96", "96.02") }), NO_COMMISSION, NOW + 1500).state;
  assert.equal(tradeOf(better, key).excursion, tradeOf(lower, key).excursion, "not worse: kept");
  assert.equal(tradeOf(better, key).evaluatedAtMs, NOW + 1500, "but evaluated");
  const wide = advance(better, marketOf({ AAPL: quote("94", "200") }), NO_COMMISSION, NOW + 2000).state;
  assert.equal(fmt(tradeOf(wide, key).excursion?.amount ?? ZERO), "-602", "a long is valued at the bid, not the mid");
  assert.equal(fmt(tradeOf(wide, key).excursion?.worstPrice ?? ZERO), "94");
  assert.equal(tradeOf(wide, key).evaluatedAtMs, NOW + 2000);
  const shut = advance(lower, marketOf({ AAPL: quote("50", "50.02") }, { open: false }), NO_COMMISSION, NOW + 1500);
  assert.equal(shut.state.trades, lower.trades, "nothing observed while the market is closed");

  const selling = place(wide, 2, { side: "sell", openClose: "close", quantity: d("40") }, NOW + 3000);
  const reduced = advance(selling, marketOf({ AAPL: quote("90", "90.02") }), NO_COMMISSION, NOW + 3000).state;
  const excursion = tradeOf(reduced, key).excursion;
  assert.equal(fmt(excursion?.amount ?? ZERO), "-1002", "the fill at 90 observed on the 100 held before it");
  assert.equal(fmt(excursion?.openQuantity ?? ZERO), "100");
  assert.equal(fmt(excursion?.worstPrice ?? ZERO), "90");
});

test("the most adverse prices the fill loop saw between works count, with when they were seen", () => {
  let state = place(emptyState(), 1, { quantity: d("100") });
  state = advance(state, marketOf({ AAPL: quote("99.98", "100.02") }), NO_COMMISSION, NOW).state;
  const key = state.positions.get("AAPL")?.tradeKey;
  // The market dipped to a 94 bid between two works and is back at 99 now.
  const extremes = new Map([["AAPL", { bid: d("94"), bidAtMs: NOW + 500, ask: d("101"), askAtMs: NOW + 700 }]]);
  const worked = advance(state, marketOf({ AAPL: quote("99", "99.02") }), NO_COMMISSION, NOW + 1000, extremes).state;
  const excursion = tradeOf(worked, key).excursion;
  assert.equal(fmt(excursion?.amount ?? ZERO), "-602", "100 × (94 − 100.02), the long's worst: the lowest bid");
  assert.equal(excursion?.worstPriceAtMs, NOW + 500);
  assert.equal(tradeOf(worked, key).evaluatedAtMs, NOW + 1000);
});

test("an open short's excursion follows the ask", () => {
  let state = place(emptyState(), 1, { side: "sell", quantity: d("10") });
  state = advance(state, marketOf({ AAPL: quote("99.98", "100.02") }), NO_COMMISSION, NOW).state;
  const key = state.positions.get("AAPL")?.tradeKey;
  state = advance(state, marketOf({ AAPL: quote("100.5", "101") }), NO_COMMISSION, NOW + 1000).state;
  const excursion = tradeOf(state, key).excursion;
  assert.equal(fmt(excursion?.amount ?? ZERO), "-10.2", "10 × (101 − 99.98)");
  assert.equal(fmt(excursion?.worstPrice ?? ZERO), "101");
});

// ---------------------------------------------------------------------------
// Property: trade grouping through advance

interface Symbolic {
  readonly instrument: Instrument;
  /** Price of one tick in cents, and the range of bids in ticks. */
  readonly tickCents: number;
  readonly minTicks: number;
  readonly maxTicks: number;
}

const SYMBOLS: readonly Symbolic[] = [
  { instrument: AAPL, tickCents: 1, minTicks: 9_500, maxTicks: 10_500 },
  { instrument: ES, tickCents: 25, minTicks: 19_800, maxTicks: 20_200 },
  { instrument: FDAX, tickCents: 100, minTicks: 17_900, maxTicks: 18_100 },
];

const priceOf = (ticks: number, tickCents: number) => d(((ticks * tickCents) / 100).toFixed(2));

test("random fills: trades conserve quantity, profit and fees, and the open trade is the position", () => {
  const orderArb = fc.record({
    symbol: fc.integer({ min: 0, max: SYMBOLS.length - 1 }),
    type: fc.constantFrom("market" as const, "market" as const, "limit" as const),
    side: fc.constantFrom("buy" as const, "sell" as const),
    close: fc.boolean(),
    quantity: fc.integer({ min: 1, max: 60 }),
    offset: fc.integer({ min: -5, max: 5 }),
  });
  const quoteArb = fc.record({
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    spread: fc.integer({ min: 1, max: 4 }),
    bidSize: fc.option(fc.integer({ min: 0, max: 40 }), { freq: 2 }),
    askSize: fc.option(fc.integer({ min: 0, max: 40 }), { freq: 2 }),
  });
  const stepArb = fc.record({
    orders: fc.array(orderArb, { maxLength: 4 }),
    quotes: fc.tuple(quoteArb, quoteArb, quoteArb),
    open: fc.constantFrom(true, true, true, false),
    eurRate: fc.constantFrom("1.1", "1.0837", "0.95"),
  });
  fc.assert(
    fc.property(fc.array(stepArb, { minLength: 1, maxLength: 10 }), (steps) => {
      let state = emptyState("1000000");
      let nextId = 1;
      const allFills: FillRecord[] = [];
      const held = new Map<string, Decimal>();
      const lastExcursion = new Map<number, Decimal>();
      for (const [i, step] of steps.entries()) {
        const nowMs = NOW + i * 1000;
        const quotes: Record<string, Quote> = {};
        for (const [s, symbol] of SYMBOLS.entries()) {
          const q = step.quotes[s];
          assert.ok(q);
          const ticks = symbol.minTicks + Math.floor(q.at * (symbol.maxTicks - symbol.minTicks));
          quotes[symbol.instrument.fullSymbol] = {
            bid: priceOf(ticks, symbol.tickCents),
            ask: priceOf(ticks + q.spread, symbol.tickCents),
            bidSize: q.bidSize === null ? null : fromInteger(q.bidSize),
            askSize: q.askSize === null ? null : fromInteger(q.askSize),
          };
        }
        for (const order of step.orders) {
          const symbol = SYMBOLS[order.symbol];
          assert.ok(symbol);
          const mid = quotes[symbol.instrument.fullSymbol];
          assert.ok(mid);
          state = place(
            state,
            nextId++,
            {
              instrument: symbol.instrument,
              type: order.type,
              side: order.side,
              openClose: order.close ? "close" : "open",
              quantity: fromInteger(order.quantity),
              limit:
                order.type === "limit"
                  ? add(mid.bid, mul(fromInteger(order.offset), symbol.instrument.tickSize))
                  : null,
            },
            nowMs,
          );
        }
        const market = marketOf(quotes, { open: step.open, rates: { EUR: step.eurRate } });
        const result = advance(state, market, DEFAULT_PLAN, nowMs);
        state = result.state;
        for (const f of result.fills) {
          const symbol = f.instrument.fullSymbol;
          const before = held.get(symbol) ?? ZERO;
          const after = add(before, signed(f.side, f.quantity));
          held.set(symbol, after);
          assert.equal(f.positionAfter, after);
          const trade = tradeOf(state, f.tradeKey);
          assert.equal(trade.instrument.fullSymbol, symbol);
          const tradeSign = trade.side === "buy" ? 1 : -1;
          // A fill never reverses: it leaves the position flat or on its trade's side.
          assert.ok(sign(after) === 0 || sign(after) === tradeSign, "a fill stays within its trade");
          if (f.side !== trade.side) assert.equal(sign(before), tradeSign, "a closing part closes a held position");
          else assert.ok(sign(before) === 0 || sign(before) === tradeSign);
        }
        allFills.push(...result.fills);

        // Every trade is the sum of its fills.
        for (const trade of state.trades.values()) {
          const own = allFills.filter((f) => f.tradeKey === trade.key);
          assert.ok(own.length > 0, `trade ${trade.key} has fills`);
          const opening = own.filter((f) => f.side === trade.side);
          const closing = own.filter((f) => f.side !== trade.side);
          assert.equal(trade.openedQuantity, sum(opening.map((f) => f.quantity)), "opened = opening fills");
          assert.equal(trade.closedQuantity, sum(closing.map((f) => f.quantity)), "closed = closing fills");
          assert.equal(trade.realized, sum(own.map((f) => f.realized)));
          assert.equal(trade.commission, sum(own.map((f) => f.commission)));
          assert.equal(trade.openNotional, sum(opening.map((f) => mul(f.quantity, f.price))));
          assert.equal(trade.openedAtMs, own[0]?.atMs);
          assert.equal(own[0]?.side, trade.side, "a trade starts with an opening fill");
          assert.ok(compare(trade.closedQuantity, trade.openedQuantity) <= 0);
          if (trade.closedAtMs !== null) {
            assert.equal(trade.closedQuantity, trade.openedQuantity, "a closed trade is flat");
            assert.equal(trade.closedAtMs, own[own.length - 1]?.atMs);
          } else {
            assert.ok(compare(trade.closedQuantity, trade.openedQuantity) < 0, "an open trade holds something");
          }
          if (trade.excursion !== null) assert.ok(compare(trade.excursion.amount, ZERO) < 0);
        }

        // At most one open trade per symbol, and it is the position.
        const openBySymbol = new Map<string, TradeRecord>();
        for (const trade of state.trades.values()) {
          if (trade.closedAtMs !== null) continue;
          assert.ok(!openBySymbol.has(trade.instrument.fullSymbol), "one open trade per symbol");
          openBySymbol.set(trade.instrument.fullSymbol, trade);
        }
        assert.deepEqual([...openBySymbol.keys()].sort(), [...state.positions.keys()].sort());
        for (const symbol of SYMBOLS) {
          const name = symbol.instrument.fullSymbol;
          const position = state.positions.get(name);
          assert.equal(position?.position.quantity ?? ZERO, held.get(name) ?? ZERO, "position = signed sum of fills");
          const trade = openBySymbol.get(name);
          if (!position || !trade) continue;
          assert.equal(position.tradeKey, trade.key);
          assert.equal(abs(position.position.quantity), sub(trade.openedQuantity, trade.closedQuantity));
          assert.equal(sign(position.position.quantity), trade.side === "buy" ? 1 : -1);
          // The excursion: never increases, and no better than the adverse price of this step.
          const previous = lastExcursion.get(trade.key);
          const amount = trade.excursion?.amount ?? ZERO;
          if (previous !== undefined) assert.ok(compare(amount, previous) <= 0, "the excursion only gets worse");
          lastExcursion.set(trade.key, amount);
          if (step.open) {
            assert.equal(trade.evaluatedAtMs, nowMs, "evaluated at every open step");
            const q = quotes[name];
            assert.ok(q);
            const rate = market.usdRate(symbol.instrument.currency) ?? ZERO;
            const adverse = adversePrice(trade, q.bid, q.ask);
            const now = round(mul(openProfit(position.position, adverse, symbol.instrument.multiplier), rate), 2);
            assert.ok(compare(amount, now) <= 0, `excursion ${fmt(amount)} vs ${fmt(now)} at ${fmt(adverse)}`);
          }
        }
      }
    }),
    { numRuns: 200 },
  );
});
