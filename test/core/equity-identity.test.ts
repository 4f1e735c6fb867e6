import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { markPositions, summarize } from "../../src/core/account.js";
import { COMMISSION_PLANS, type CommissionPlan } from "../../src/core/commissions.js";
import {
  abs,
  add,
  compare,
  type Decimal,
  decimal,
  div,
  formatDecimal,
  isZero,
  mul,
  mulInteger,
  neg,
  ONE,
  sign,
  sub,
  ZERO,
} from "../../src/core/decimal.js";
import type { OrderType, Quote, Side } from "../../src/core/fills.js";
import { submit } from "../../src/core/orders/book.js";
import { advance, type FillRecord, type MarketView, type TradingState } from "../../src/core/orders/execution.js";
import { WORKING } from "../../src/core/orders/status.js";
import { type OrderTerms, SIGNAL_TYPES } from "../../src/core/orders/terms.js";
import { openProfit } from "../../src/core/positions.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

/**
 * The equity identity of the model account, at every mark:
 *
 *   equity = starting cash + Σ fill.realized + Σ open P&L − Σ fill.commission
 *
 * where equity is `summarize(cash, markPositions(positions, market)).equity`
 * and a position's open P&L is `openProfit(position, mid, multiplier)` × the
 * dollar rate of the mark. The open P&L (not the market value) is the term
 * for both kinds of account: a cash-settled stock's cash already paid its
 * cost, so market value + cash = −cost + q × mark = open P&L + realized; a
 * margined future or forex position moved no cash but its realized P&L, and
 * is valued at its open P&L.
 *
 * Tolerance. Without rounding the identity is exact. The rounding the rules
 * allow, and no more:
 * - summarize rounds equity to the cent: ½¢;
 * - a margined fill's cash is its realized P&L rounded to the cent, the same
 *   number FillRecord.realized holds: they cancel, nothing more;
 * - a cash-settled fill's cash is its notional rounded to the cent (exact for
 *   whole shares at cent prices in dollars, as AAPL is here), while its
 *   FillRecord.realized is rounded to the cent separately: ½¢ for every such
 *   fill that closes something (a partial close of a position bought at
 *   several prices takes a sub-cent share of the cost).
 * So |equity − identity| ≤ ½¢ × (1 + AAPL fills that closed something). When
 * every price, quantity and rate keeps the arithmetic in cents (the exact
 * universe below) the two sides are checked equal, and two worked examples
 * show both allowances are reached.
 *
 * Each step also checks what a fill does to equity: marked at the step's
 * quotes before and after, equity moves by −commission − quantity × the
 * distance from the fill price to the mid (half the spread for a market
 * order): a fill at the mark costs only its commission. Tolerance: 1¢ for
 * the two roundings of equity, ½¢ per margined closing fill (its cash is its
 * realized P&L rounded to the cent; the open P&L it leaves was not rounded),
 * and 10⁻⁶ for the 8-place rounding of products; exact in the exact universe.
 */

const d = decimal;
const fmt = (x: Decimal) => formatDecimal(x);
const at = (symbol: string): Instrument => {
  const instrument = fromServiceSymbol(symbol);
  assert.ok(instrument, symbol);
  return instrument;
};
const AAPL = at("AAPL");
const ES = at("@ESM26");
const EURUSD = at("EURUSD");
const EURJPY = at("EURJPY");
const NO_COMMISSION = COMMISSION_PLANS[2] as CommissionPlan;
/** Monday 2026-03-02, 10:00 New York. */
const NOW = Date.parse("2026-03-02T15:00:00Z");
const START = d("100000");
const TWO = d("2");
const CENT = d("0.01");
const HALF_CENT = d("0.005");
const PRODUCT_ROUNDING = d("0.000001");

const settlesInCash = (instrument: Instrument) =>
  instrument.symbolType === "stock" || instrument.symbolType === "option";

interface Lots {
  /** One lot, and the most lots an order asks for. */
  readonly unit: Decimal;
  readonly max: number;
}

interface Traded {
  readonly instrument: Instrument;
  /** Lowest and highest bid, in ticks. */
  readonly bidTicks: readonly [number, number];
  /** Any quantity in general; in the exact universe lots whose tick is worth whole cents. */
  readonly general: Lots;
  readonly exact: Lots;
}

const TRADED: readonly Traded[] = [
  { instrument: AAPL, bidTicks: [9_000, 11_000], general: { unit: ONE, max: 300 }, exact: { unit: ONE, max: 300 } },
  // 0.25 × 50 = $12.50 a tick a contract.
  { instrument: ES, bidTicks: [19_600, 20_400], general: { unit: ONE, max: 6 }, exact: { unit: ONE, max: 6 } },
  // 1,000 units × 0.00001 = 1¢ a tick.
  {
    instrument: EURUSD,
    bidTicks: [105_000, 115_000],
    general: { unit: ONE, max: 300_000 },
    exact: { unit: d("1000"), max: 300 },
  },
  // 10,000 units × 0.001 = ¥10 a tick: whole cents at a rate of k/1000 dollars a yen.
  {
    instrument: EURJPY,
    bidTicks: [155_000, 170_000],
    general: { unit: ONE, max: 300_000 },
    exact: { unit: d("10000"), max: 30 },
  },
];

type Universe = "general" | "exact" | "at the mark";

interface QuoteStep {
  readonly bid: number;
  readonly spread: number;
  readonly bidSize: number | null;
  readonly askSize: number | null;
}

interface OrderStep {
  readonly which: number;
  readonly type: OrderType;
  readonly side: Side;
  readonly close: boolean;
  /** The order's quantity: some lots, the position held (closes it), or more than held (reverses it). */
  readonly size: "lots" | "held" | "beyond";
  readonly lots: number;
  /** The limit, in ticks through the touch (marketable) or short of it (rests). */
  readonly offset: number;
}

interface Step {
  readonly quotes: readonly QuoteStep[];
  readonly orders: readonly OrderStep[];
  readonly open: boolean;
  /** Dollars per yen, in units of 10⁻⁸ (general) or 10⁻³ (exact). */
  readonly jpy: number;
}

const lotsOf = (t: Traded, universe: Universe) => (universe === "general" ? t.general : t.exact);

function stepArb(universe: Universe): fc.Arbitrary<Step> {
  const general = universe === "general";
  const quotes = fc.tuple(
    ...TRADED.map((t) => {
      const size = general
        ? fc.oneof(
            { weight: 4, arbitrary: fc.constant(null) },
            { weight: 1, arbitrary: fc.integer({ min: 0, max: t.general.max }) },
          )
        : fc.constant(null);
      return fc.record({
        bid: fc.integer({ min: t.bidTicks[0], max: t.bidTicks[1] }),
        // Even spreads put the mid on the tick grid.
        spread: universe === "at the mark" ? fc.constant(0) : general ? fc.nat(5) : fc.constantFrom(0, 2, 4),
        bidSize: size,
        askSize: size,
      });
    }),
  );
  const order = fc.oneof(
    ...TRADED.map((t, which) =>
      fc.record({
        which: fc.constant(which),
        type: fc.constantFrom<OrderType>("market", "limit"),
        side: fc.constantFrom<Side>("buy", "sell"),
        close: fc.nat(3).map((n) => n === 0),
        size: fc.constantFrom<OrderStep["size"]>("lots", "lots", "held", "beyond"),
        lots: fc.integer({ min: 1, max: lotsOf(t, universe).max }),
        offset: fc.integer({ min: -3, max: 3 }),
      }),
    ),
  );
  return fc.record({
    quotes,
    orders: fc.array(order, { maxLength: 3 }),
    open: general ? fc.nat(4).map((n) => n > 0) : fc.constant(true),
    jpy: general ? fc.integer({ min: 600_000, max: 720_000 }) : fc.integer({ min: 5, max: 8 }),
  });
}

interface Marks {
  readonly quotes: ReadonlyMap<string, Quote>;
  readonly open: boolean;
  readonly jpy: Decimal;
}

function marksOf(step: Step, universe: Universe): Marks {
  const quotes = new Map<string, Quote>();
  for (const [i, t] of TRADED.entries()) {
    const q = step.quotes[i] as QuoteStep;
    const unit = lotsOf(t, universe).unit;
    const size = (n: number | null) => (n === null ? null : mulInteger(unit, n));
    quotes.set(t.instrument.fullSymbol, {
      bid: mulInteger(t.instrument.tickSize, q.bid),
      ask: mulInteger(t.instrument.tickSize, q.bid + q.spread),
      bidSize: size(q.bidSize),
      askSize: size(q.askSize),
    });
  }
  const jpy = universe === "general" ? mulInteger(d("0.00000001"), step.jpy) : mulInteger(d("0.001"), step.jpy);
  return { quotes, open: step.open, jpy };
}

const marketOf = (marks: Marks): MarketView => ({
  quote: (instrument) => marks.quotes.get(instrument.fullSymbol) ?? null,
  isOpen: () => marks.open,
  usdRate: (currency) => (currency === "USD" ? ONE : currency === "JPY" ? marks.jpy : null),
});

const quoteOf = (marks: Marks, instrument: Instrument): Quote => {
  const quote = marks.quotes.get(instrument.fullSymbol);
  assert.ok(quote, instrument.fullSymbol);
  return quote;
};
const midOf = (marks: Marks, instrument: Instrument) => {
  const { bid, ask } = quoteOf(marks, instrument);
  return div(add(bid, ask), TWO);
};
const rateOf = (marks: Marks, instrument: Instrument) => (instrument.currency === "JPY" ? marks.jpy : ONE);

const emptyState = (): TradingState => ({
  book: new Map(),
  terms: new Map(),
  expiresAtMs: new Map(),
  notes: new Map(),
  positions: new Map(),
  trades: new Map(),
  cash: START,
});

const heldOf = (state: TradingState, instrument: Instrument) =>
  state.positions.get(instrument.fullSymbol)?.position.quantity ?? ZERO;

const flip = (side: Side): Side => (side === "buy" ? "sell" : "buy");

/**
 * The terms of a step's order against the state now. In the exact universe no
 * order adds to a position (an average of several prices is not in cents) and
 * every order fills at once: the market is open, sizes unlimited, limits
 * marketable.
 */
function termsOf(order: OrderStep, state: TradingState, marks: Marks, universe: Universe): OrderTerms {
  const t = TRADED[order.which] as Traded;
  const { instrument } = t;
  const general = universe === "general";
  const held = heldOf(state, instrument);
  let side = order.side;
  let openClose: OrderTerms["openClose"] = order.close ? "close" : "open";
  if (openClose === "close" && !isZero(held)) side = sign(held) > 0 ? "sell" : "buy";
  if (!general) {
    if (openClose === "close" && isZero(held)) openClose = "open";
    if (openClose === "open" && sign(held) === (side === "buy" ? 1 : -1)) side = flip(side);
  }
  const lots = mulInteger(lotsOf(t, universe).unit, order.lots);
  const quantity =
    order.size === "held" && !isZero(held) ? abs(held) : order.size === "beyond" ? add(abs(held), lots) : lots;
  const quote = quoteOf(marks, instrument);
  const offset = mulInteger(instrument.tickSize, general ? order.offset : Math.abs(order.offset));
  const limit = order.type === "market" ? null : side === "buy" ? add(quote.ask, offset) : sub(quote.bid, offset);
  return {
    instrument,
    type: order.type,
    side,
    openClose,
    tif: "gtc",
    quantity,
    limit,
    stop: null,
    profitTarget: null,
    stopLoss: null,
    signalType: SIGNAL_TYPES.owner,
  };
}

function place(state: TradingState, id: number, terms: OrderTerms, nowMs: number): TradingState {
  const result = submit(state.book, { id, quantity: terms.quantity }, nowMs);
  assert.ok(result.ok, result.ok ? "" : result.reason);
  return { ...state, book: result.book, terms: new Map(state.terms).set(id, terms) };
}

const equityOf = (state: TradingState, market: MarketView) =>
  summarize(state.cash, markPositions(state.positions.values(), market)).equity;

/** Whether the fill reduced a position (a reversal comes as two fills: the close, then the open). */
function closes(fill: FillRecord): boolean {
  const signed = fill.side === "buy" ? fill.quantity : neg(fill.quantity);
  const before = sub(fill.positionAfter, signed);
  return sign(before) !== 0 && sign(before) !== sign(signed);
}

const within = (actual: Decimal, expected: Decimal, tolerance: Decimal) =>
  compare(abs(sub(actual, expected)), tolerance) <= 0;

interface Totals {
  realized: Decimal;
  commission: Decimal;
  cashSettledCloses: number;
}

/** Starting cash + Σ realized + Σ open P&L at the marks − Σ commission. */
function identity(state: TradingState, marks: Marks, totals: Totals): Decimal {
  let open = ZERO;
  for (const { instrument, position } of state.positions.values()) {
    const profit = openProfit(position, midOf(marks, instrument), instrument.multiplier);
    open = add(open, mul(profit, rateOf(marks, instrument)));
  }
  return sub(add(add(START, totals.realized), open), totals.commission);
}

/** Drives the steps through `advance`, checking the identity and each step's change of equity after every step. */
function drive(steps: readonly Step[], plan: CommissionPlan, universe: Universe): void {
  const exact = universe !== "general";
  let state = emptyState();
  const totals: Totals = { realized: ZERO, commission: ZERO, cashSettledCloses: 0 };
  let nextId = 1;
  for (const [i, step] of steps.entries()) {
    const nowMs = NOW + i * 60_000;
    const marks = marksOf(step, universe);
    const market = marketOf(marks);
    const ordered = new Set<number>();
    for (const order of step.orders) {
      if (exact && (!step.open || ordered.has(order.which))) continue;
      ordered.add(order.which);
      state = place(state, nextId++, termsOf(order, state, marks, universe), nowMs);
    }
    const before = equityOf(state, market);
    const result = advance(state, market, plan, nowMs);
    if (!step.open) assert.deepEqual(result.fills, [], "nothing fills while the market is closed");
    let fees = ZERO;
    let spread = ZERO;
    let marginedCloses = 0;
    for (const f of result.fills) {
      assert.equal(f.usdRate, rateOf(marks, f.instrument), "a fill settles at the rate of the moment");
      if (closes(f)) {
        if (settlesInCash(f.instrument)) totals.cashSettledCloses++;
        else marginedCloses++;
      }
      totals.realized = add(totals.realized, f.realized);
      totals.commission = add(totals.commission, f.commission);
      fees = add(fees, f.commission);
      const mid = midOf(marks, f.instrument);
      const away = f.side === "buy" ? sub(f.price, mid) : sub(mid, f.price);
      spread = add(spread, mul(mul(mul(f.quantity, away), f.instrument.multiplier), f.usdRate));
    }
    if (exact) {
      const working = [...result.state.book.values()].filter((o) => WORKING.has(o.state.status));
      assert.deepEqual(working, [], "in the exact universe every order fills at once");
    }
    state = result.state;
    const after = equityOf(state, market);
    const expected = identity(state, marks, totals);
    const where = `step ${i}: equity ${fmt(after)}, identity ${fmt(expected)}`;
    const moved = sub(after, before);
    const cost = neg(add(fees, spread));
    const how = `step ${i}: equity moved ${fmt(moved)}, −commission − spread ${fmt(cost)}`;
    if (exact) {
      assert.equal(fmt(after), fmt(expected), where);
      assert.equal(fmt(moved), fmt(cost), how);
      if (universe === "at the mark") assert.equal(fmt(moved), fmt(neg(fees)), how);
    } else {
      const tolerance = mulInteger(HALF_CENT, 1 + totals.cashSettledCloses);
      assert.ok(within(after, expected, tolerance), `${where}, tolerance ${fmt(tolerance)}`);
      const stepTolerance = add(add(CENT, mulInteger(HALF_CENT, marginedCloses)), PRODUCT_ROUNDING);
      assert.ok(within(moved, cost, stepTolerance), `${how}, tolerance ${fmt(stepTolerance)}`);
    }
  }
}

const plans = fc.constantFrom(...COMMISSION_PLANS);

test("equity = starting cash + realized + open P&L − commissions at every mark, within the rounding allowed", () => {
  fc.assert(
    fc.property(fc.array(stepArb("general"), { minLength: 1, maxLength: 12 }), plans, (steps, plan) =>
      drive(steps, plan, "general"),
    ),
    { numRuns: 200 },
  );
});

test("equity = starting cash + realized + open P&L − commissions exactly when the arithmetic stays in cents", () => {
  fc.assert(
    fc.property(fc.array(stepArb("exact"), { minLength: 1, maxLength: 12 }), plans, (steps, plan) =>
      drive(steps, plan, "exact"),
    ),
    { numRuns: 200 },
  );
});

test("a fill at the mark (no spread) changes equity by exactly −commission", () => {
  fc.assert(
    fc.property(fc.array(stepArb("at the mark"), { minLength: 1, maxLength: 10 }), plans, (steps, plan) =>
      drive(steps, plan, "at the mark"),
    ),
    { numRuns: 100 },
  );
});

/** One market order on AAPL against a quote, no commission; the state after and its fills. */
function trade(state: TradingState, id: number, side: Side, quantity: string, bid: string, ask: string) {
  const marks: Marks = {
    quotes: new Map([["AAPL", { bid: d(bid), ask: d(ask), bidSize: null, askSize: null }]]),
    open: true,
    jpy: ONE,
  };
  const terms: OrderTerms = {
    instrument: AAPL,
    type: "market",
    side,
    openClose: "open",
    tif: "gtc",
    quantity: d(quantity),
    limit: null,
    stop: null,
    profitTarget: null,
    stopLoss: null,
    signalType: SIGNAL_TYPES.owner,
  };
  const result = advance(place(state, id, terms, NOW), marketOf(marks), NO_COMMISSION, NOW + id);
  return { ...result, marks, market: marketOf(marks) };
}

test("the ½¢ of summarize's rounding is reached: a share marked at a half-cent mid", () => {
  const bought = trade(emptyState(), 1, "buy", "1", "100", "100.01");
  const totals: Totals = { realized: ZERO, commission: ZERO, cashSettledCloses: 0 };
  assert.equal(fmt(bought.state.cash), "99899.99");
  assert.equal(fmt(identity(bought.state, bought.marks, totals)), "99999.995", "100000 + (100.005 − 100.01)");
  assert.equal(fmt(equityOf(bought.state, bought.market)), "100000", "rounded half to even");
});

test("the ½¢ of each cash-settled closing fill is reached: partial closes of shares bought at two prices", () => {
  let state = emptyState();
  const realized: Decimal[] = [];
  for (const [id, side, quantity, bid, ask] of [
    [1, "buy", "1", "99.99", "100"],
    [2, "buy", "2", "100", "100.01"],
    [3, "sell", "1", "100", "100"],
    [4, "sell", "1", "100", "100"],
  ] as const) {
    const step = trade(state, id, side, quantity, bid, ask);
    state = step.state;
    realized.push(...step.fills.map((f) => f.realized));
    const totals: Totals = { realized: realized.reduce(add, ZERO), commission: ZERO, cashSettledCloses: 0 };
    if (id === 4) {
      // Cost 300.02 for 3: the closes take 100.00666667 and 100.00666666 of it, realizing −0.0067 each,
      // recorded as −0.01 each; the last share's cost is 100.00666667.
      assert.deepEqual(realized.map(fmt), ["0", "0", "-0.01", "-0.01"]);
      assert.equal(fmt(state.cash), "99899.98", "cash moved the exact notionals");
      const equity = equityOf(state, step.market);
      const expected = identity(state, step.marks, totals);
      assert.equal(fmt(equity), "99999.98");
      assert.equal(fmt(expected), "99999.97333333");
      assert.ok(!within(equity, expected, HALF_CENT), "over ½¢ after two closing fills");
      assert.ok(within(equity, expected, mulInteger(HALF_CENT, 3)), "within ½¢ × (1 + 2 closing fills)");
    }
  }
});
