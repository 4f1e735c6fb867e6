import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { COMMISSION_PLANS, type CommissionPlan } from "../../src/core/commissions.js";
import {
  abs,
  add,
  compare,
  type Decimal,
  decimal,
  div,
  formatDecimal,
  fromInteger,
  neg,
  sign,
  sub,
  ZERO,
} from "../../src/core/decimal.js";
import type { Quote } from "../../src/core/fills.js";
import { type Book, type BookEvent, cancel, expire, submit } from "../../src/core/orders/book.js";
import {
  type Advanced,
  advance,
  type HeldPosition,
  type MarketView,
  stampExpiries,
  type TradingState,
  withBook,
} from "../../src/core/orders/execution.js";
import type { OrderStatus } from "../../src/core/orders/status.js";
import { isExitSignal, type OrderTerms, SIGNAL_TYPES } from "../../src/core/orders/terms.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";
import { openTrade, type TradeRecord } from "../../src/core/trades.js";

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
const NO_COMMISSION = COMMISSION_PLANS[2] as CommissionPlan;
/** Monday 2026-03-02, 10:00 New York (EST): US stocks close at 21:00Z. */
const NOW = Date.parse("2026-03-02T15:00:00Z");
const iso = (ms: number | undefined) => (ms === undefined ? "none" : new Date(ms).toISOString());
const NO_LONGER_OPEN = "Canceled: the position it would close is no longer open";

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

interface OrderSpec {
  readonly id: number;
  readonly terms?: Partial<OrderTerms>;
  readonly parentId?: number;
  readonly ocaGroup?: number;
  readonly parkedUntilMs?: number;
}

interface StateSpec {
  readonly positions?: readonly [Instrument, string, string][];
  readonly cash?: string;
  readonly expiresAtMs?: readonly [number, number][];
  readonly placedAtMs?: number;
}

/** A trading state with the orders submitted in id order, and positions given as [instrument, quantity, cost]. */
function stateOf(orders: readonly OrderSpec[], spec: StateSpec = {}): TradingState {
  let book: Book = new Map();
  const terms = new Map<number, OrderTerms>();
  for (const order of orders) {
    const t = termsOf(order.terms);
    terms.set(order.id, t);
    const result = submit(
      book,
      {
        id: order.id,
        quantity: t.quantity,
        parentId: order.parentId ?? null,
        ocaGroup: order.ocaGroup ?? null,
        parkedUntilMs: order.parkedUntilMs ?? null,
        exit: isExitSignal(t.signalType),
      },
      spec.placedAtMs ?? NOW,
    );
    assert.ok(result.ok, result.ok ? "" : result.reason);
    book = result.book;
  }
  const positions = new Map<string, HeldPosition>();
  const trades = new Map<number, TradeRecord>();
  for (const [instrument, quantity, cost] of spec.positions ?? []) {
    const key = positions.size + 1;
    const q = d(quantity);
    const side = compare(q, ZERO) > 0 ? "buy" : "sell";
    positions.set(instrument.fullSymbol, {
      instrument,
      position: { quantity: q, cost: d(cost) },
      openedAtMs: 0,
      tradeKey: key,
    });
    trades.set(key, openTrade(key, instrument, side, abs(q), div(abs(d(cost)), abs(q)), ZERO, 0));
  }
  return {
    book,
    trades,
    terms,
    expiresAtMs: new Map(spec.expiresAtMs ?? []),
    notes: new Map(),
    positions,
    cash: d(spec.cash ?? "100000"),
  };
}

const quote = (bid: string, ask: string, bidSize: string | null = null, askSize: string | null = null): Quote => ({
  bid: d(bid),
  ask: d(ask),
  bidSize: bidSize === null ? null : d(bidSize),
  askSize: askSize === null ? null : d(askSize),
});

interface MarketSpec {
  readonly open?: boolean;
  /** Dollars per unit of each currency; USD is 1 unless given. */
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

const status = (state: TradingState, id: number): OrderStatus | undefined => state.book.get(id)?.state.status;
const statuses = (state: TradingState, ...ids: number[]) => ids.map((id) => status(state, id));
const filled = (state: TradingState, id: number) => fmt(state.book.get(id)?.state.filledQuantity ?? ZERO);
const fillsOf = (advanced: Advanced) => advanced.fills.map((f) => `${f.orderId}:${fmt(f.quantity)}@${fmt(f.price)}`);
const positionOf = (state: TradingState, instrument: Instrument) => {
  const held = state.positions.get(instrument.fullSymbol);
  return held ? `${fmt(held.position.quantity)} cost ${fmt(held.position.cost)}` : "flat";
};
const eventsOf = (advanced: Advanced) => advanced.events.map((e) => `${e.orderId} ${e.event.kind}`);

test("a market buy fills at the ask; the fill moves the position and pays notional and commission", () => {
  const before = stateOf([{ id: 1 }]);
  const result = advance(before, marketOf({ AAPL: quote("99.98", "100.02") }), DEFAULT_PLAN, NOW);
  assert.deepEqual(result.fills, [
    {
      orderId: 1,
      instrument: AAPL,
      side: "buy",
      quantity: d("100"),
      price: d("100.02"),
      commission: d("1"),
      realized: ZERO,
      cash: d("-10003"),
      usdRate: d("1"),
      positionAfter: d("100"),
      tradeKey: -1,
      atMs: NOW,
      // 100 shares: Default $1 (the $0.50 is below the minimum), Institutional $0.35 (its minimum), None 0.
      planCommissions: { Default: d("1"), Institutional: d("0.35"), None: ZERO },
    },
  ]);
  assert.equal(status(result.state, 1), "Filled");
  assert.equal(fmt(result.state.cash), "89997");
  assert.equal(positionOf(result.state, AAPL), "100 cost 10002");
  assert.equal(result.state.positions.get("AAPL")?.openedAtMs, NOW);
  assert.deepEqual(eventsOf(result), ["1 fill"]);
  assert.equal(status(before, 1), "Working", "the state passed in is left as it was");
  assert.equal(fmt(before.cash), "100000");
});

test("a market sell fills at the bid and opens a short", () => {
  const result = advance(
    stateOf([{ id: 1, terms: { side: "sell" } }]),
    marketOf({ AAPL: quote("99.98", "100.02") }),
    NO_COMMISSION,
    NOW,
  );
  assert.deepEqual(fillsOf(result), ["1:100@99.98"]);
  assert.equal(positionOf(result.state, AAPL), "-100 cost -9998");
  assert.equal(fmt(result.state.cash), "109998");
});

test("a position keeps its opening time while it grows or shrinks, and restarts it when it reverses", () => {
  const market = marketOf({ AAPL: quote("99.98", "100.02") });
  const long = { positions: [[AAPL, "50", "5000"]] as [Instrument, string, string][] };
  const added = advance(stateOf([{ id: 1, terms: { quantity: d("10") } }], long), market, NO_COMMISSION, NOW);
  assert.equal(added.state.positions.get("AAPL")?.openedAtMs, 0);
  const reduced = advance(
    stateOf([{ id: 1, terms: { side: "sell", openClose: "close", quantity: d("10") } }], long),
    market,
    NO_COMMISSION,
    NOW,
  );
  assert.equal(reduced.state.positions.get("AAPL")?.openedAtMs, 0);
  const reversed = advance(
    stateOf([{ id: 1, terms: { side: "sell", quantity: d("80") } }], long),
    market,
    NO_COMMISSION,
    NOW,
  );
  assert.equal(positionOf(reversed.state, AAPL), "-30 cost -2999.4");
  assert.equal(fmt(reversed.fills[0]?.realized ?? ZERO), "-1", "50 closed at 99.98 against a cost of 100");
  assert.equal(reversed.state.positions.get("AAPL")?.openedAtMs, NOW);
});

test("prices seen since the last work are judged on the trades open then: one a fill closes, not one it opens", () => {
  const seenAtMs = NOW - 1_000;
  const extremes = new Map([["AAPL", { bid: d("90"), bidAtMs: seenAtMs, ask: d("110"), askAtMs: seenAtMs }]]);
  // Long 100 at 100, sold 200: the long trade closes and a short one opens, both at the bid of 99.98.
  const long = { positions: [[AAPL, "100", "10000"]] as [Instrument, string, string][] };
  const reversed = advance(
    stateOf([{ id: 1, terms: { side: "sell", quantity: d("200") } }], long),
    marketOf({ AAPL: quote("99.98", "100.02") }),
    NO_COMMISSION,
    NOW,
    extremes,
  );
  const closed = reversed.state.trades.get(1);
  assert.equal(closed?.closedAtMs, NOW);
  assert.deepEqual([fmt(closed?.excursion?.worstPrice ?? ZERO), closed?.excursion?.worstPriceAtMs], ["90", seenAtMs]);
  assert.equal(fmt(closed?.excursion?.amount ?? ZERO), "-1000");
  const opened = [...reversed.state.trades.values()].find((trade) => trade.closedAtMs === null);
  // The ask of 110 came before the short opened: its worst is the ask it opened under.
  assert.deepEqual([fmt(opened?.excursion?.worstPrice ?? ZERO), opened?.excursion?.worstPriceAtMs], ["100.02", NOW]);
});

test("nothing fills while the market is closed, without a quote, or without a dollar rate", () => {
  const state = stateOf([{ id: 1 }]);
  const marketable = { AAPL: quote("99.98", "100.02") };
  for (const [why, market] of [
    ["closed", marketOf(marketable, { open: false })],
    ["no quote", marketOf({})],
    ["no dollar rate", marketOf(marketable, { rates: { USD: null } })],
  ] as const) {
    const result = advance(state, market, NO_COMMISSION, NOW);
    assert.deepEqual(result.fills, [], why);
    assert.equal(status(result.state, 1), "Working", why);
    assert.equal(result.state.cash, state.cash, why);
  }
});

test("a fill in another currency waits for its rate and settles in dollars at it", () => {
  const state = stateOf([{ id: 1, terms: { instrument: FDAX, side: "sell", openClose: "close", quantity: d("1") } }], {
    positions: [[FDAX, "1", "18000"]],
  });
  const quotes = { "@FDAXM26": quote("18100", "18101") };
  assert.deepEqual(advance(state, marketOf(quotes), DEFAULT_PLAN, NOW).fills, [], "no EUR rate");
  const result = advance(state, marketOf(quotes, { rates: { EUR: "1.1" } }), DEFAULT_PLAN, NOW);
  const [f] = result.fills;
  assert.ok(f);
  assert.deepEqual(
    [fmt(f.realized), fmt(f.commission), fmt(f.cash), fmt(f.usdRate)],
    ["2750", "2.75", "2747.25", "1.1"],
    "EUR 2,500 profit and EUR 2.50 commission at 1.1",
  );
  assert.equal(fmt(result.state.cash), "102747.25");
  assert.equal(positionOf(result.state, FDAX), "flat");
});

test("two orders on one symbol share the size the quote shows", () => {
  const state = stateOf([
    { id: 1, terms: { quantity: d("300") } },
    { id: 2, terms: { quantity: d("300") } },
    { id: 3, terms: { instrument: ES, quantity: d("5") } },
  ]);
  const quotes = { AAPL: quote("99.98", "100.02", "1000", "400"), "@ESM26": quote("5000", "5000.25", "1", "5") };
  const first = advance(state, marketOf(quotes), NO_COMMISSION, NOW);
  assert.deepEqual(fillsOf(first), ["1:300@100.02", "2:100@100.02", "3:5@5000.25"]);
  assert.deepEqual(statuses(first.state, 1, 2, 3), ["Filled", "PartiallyFilled", "Filled"]);
  assert.equal(positionOf(first.state, AAPL), "400 cost 40008");
  const second = advance(first.state, marketOf(quotes), NO_COMMISSION, NOW + 1000);
  assert.deepEqual(fillsOf(second), ["2:200@100.02"], "the next quote's size is new");
  assert.equal(status(second.state, 2), "Filled");
});

test("a zero size on the quote fills nothing, and buys and sells draw on their own sides", () => {
  const held = { positions: [[AAPL, "500", "50000"]] as [Instrument, string, string][] };
  const none = advance(
    stateOf([{ id: 1, terms: { quantity: d("300") } }]),
    marketOf({ AAPL: quote("99.98", "100.02", "100", "0") }),
    NO_COMMISSION,
    NOW,
  );
  assert.deepEqual(none.fills, []);
  const both = advance(
    stateOf([{ id: 1 }, { id: 2, terms: { side: "sell", openClose: "close" } }], held),
    marketOf({ AAPL: quote("99.98", "100.02", "60", "80") }),
    NO_COMMISSION,
    NOW,
  );
  assert.deepEqual(fillsOf(both), ["1:80@100.02", "2:60@99.98"]);
});

test("a closing order larger than the position fills the position, and the rest is canceled", () => {
  const state = stateOf([{ id: 1, terms: { side: "sell", openClose: "close", quantity: d("100") } }], {
    positions: [[AAPL, "50", "5000"]],
  });
  const result = advance(state, marketOf({ AAPL: quote("101", "101.02") }), NO_COMMISSION, NOW);
  assert.deepEqual(fillsOf(result), ["1:50@101"]);
  assert.equal(fmt(result.fills[0]?.realized ?? ZERO), "50");
  assert.equal(fmt(result.fills[0]?.positionAfter ?? d("1")), "0");
  assert.equal(positionOf(result.state, AAPL), "flat");
  assert.equal(status(result.state, 1), "Canceled");
  assert.equal(filled(result.state, 1), "50");
  assert.equal(result.state.notes.get(1), NO_LONGER_OPEN);
  assert.equal(fmt(result.state.cash), "105050");
  assert.deepEqual(eventsOf(result), ["1 fill", "1 canceled"]);
});

test("a closing order with no position to close is canceled with a note, market or not", () => {
  const state = stateOf([{ id: 1, terms: { side: "sell", openClose: "close" } }]);
  const result = advance(state, marketOf({}, { open: false }), NO_COMMISSION, NOW);
  assert.equal(status(result.state, 1), "Canceled");
  assert.equal(result.state.notes.get(1), NO_LONGER_OPEN);
  assert.deepEqual(result.fills, []);
  const wrongSide = advance(
    stateOf([{ id: 1, terms: { side: "buy", openClose: "close" } }], { positions: [[AAPL, "100", "10000"]] }),
    marketOf({ AAPL: quote("99.98", "100.02") }),
    NO_COMMISSION,
    NOW,
  );
  assert.equal(status(wrongSide.state, 1), "Canceled", "a buy does not close a long");
  assert.deepEqual(wrongSide.fills, []);
});

/** An entry (1) with a profit target (2) and a stop loss (3) in OCA group 7. */
const bracket = (target = "110", stopLoss = "100", tif: "day" | "gtc" = "gtc"): OrderSpec[] => [
  { id: 1, terms: { quantity: d("10"), tif } },
  {
    id: 2,
    parentId: 1,
    ocaGroup: 7,
    terms: {
      quantity: d("10"),
      side: "sell",
      openClose: "close",
      type: "limit",
      limit: d(target),
      tif,
      signalType: SIGNAL_TYPES.profitTarget,
    },
  },
  {
    id: 3,
    parentId: 1,
    ocaGroup: 7,
    terms: {
      quantity: d("10"),
      side: "sell",
      openClose: "close",
      type: "stop",
      stop: d(stopLoss),
      tif,
      signalType: SIGNAL_TYPES.stopLoss,
    },
  },
];

test("a bracket: the entry's fill releases its exits, and a marketable one fills in the same step", () => {
  const state = stateOf(bracket("110", "100"));
  assert.deepEqual(statuses(state, 1, 2, 3), ["Working", "PendingNew", "PendingNew"]);
  const result = advance(state, marketOf({ AAPL: quote("99.98", "100.02") }), NO_COMMISSION, NOW);
  assert.deepEqual(fillsOf(result), ["1:10@100.02", "3:10@99.98"], "the stop at 100 is hit by the 99.98 bid");
  assert.deepEqual(statuses(result.state, 1, 2, 3), ["Filled", "Canceled", "Filled"]);
  assert.deepEqual(eventsOf(result), ["1 fill", "2 accepted", "3 accepted", "3 fill", "2 canceled"]);
  assert.equal(positionOf(result.state, AAPL), "flat");
  assert.equal(fmt(result.state.cash), "99999.6");
});

test("a bracket's exits work once the entry fills; the one that fills cancels its OCA sibling", () => {
  const entered = advance(stateOf(bracket()), marketOf({ AAPL: quote("100.5", "100.52") }), NO_COMMISSION, NOW);
  assert.deepEqual(fillsOf(entered), ["1:10@100.52"]);
  assert.deepEqual(statuses(entered.state, 2, 3), ["Working", "Working"]);
  const quiet = advance(entered.state, marketOf({ AAPL: quote("105", "105.02") }), NO_COMMISSION, NOW + 1000);
  assert.deepEqual(quiet.fills, []);
  const target = advance(entered.state, marketOf({ AAPL: quote("110.01", "110.03") }), NO_COMMISSION, NOW + 2000);
  assert.deepEqual(fillsOf(target), ["2:10@110.01"]);
  assert.deepEqual(statuses(target.state, 2, 3), ["Filled", "Canceled"]);
  assert.equal(positionOf(target.state, AAPL), "flat");
});

test("an entry filled in part starts its exits at once; they close what it filled, and more as it fills", () => {
  const partly = advance(
    stateOf(bracket()),
    marketOf({ AAPL: quote("100.5", "100.52", null, "4") }),
    NO_COMMISSION,
    NOW,
  );
  assert.deepEqual(fillsOf(partly), ["1:4@100.52"]);
  assert.deepEqual(statuses(partly.state, 1, 2, 3), ["PartiallyFilled", "Working", "Working"]);
  assert.deepEqual(eventsOf(partly), ["1 fill", "2 accepted", "3 accepted"]);
  // The stop is hit while the entry still works (no size at the ask): it closes the 4 filled, not its 10.
  const stopped = advance(partly.state, marketOf({ AAPL: quote("99.5", "99.52", null, "0") }), NO_COMMISSION, NOW + 1);
  assert.deepEqual(fillsOf(stopped), ["3:4@99.5"]);
  assert.equal(positionOf(stopped.state, AAPL), "flat");
  assert.deepEqual(
    statuses(stopped.state, 1, 2, 3),
    ["PartiallyFilled", "Working", "PartiallyFilled"],
    "a flat position does not strand exits whose entry still works; a partial exit fill leaves its OCA sibling",
  );
  const rest = advance(stopped.state, marketOf({ AAPL: quote("100.5", "100.52") }), NO_COMMISSION, NOW + 2);
  assert.deepEqual(fillsOf(rest), ["1:6@100.52"]);
  assert.equal(positionOf(rest.state, AAPL), "6 cost 603.12");
  const target = advance(rest.state, marketOf({ AAPL: quote("110", "110.02") }), NO_COMMISSION, NOW + 3);
  assert.deepEqual(fillsOf(target), ["2:6@110"], "the target closes the 6 the entry filled since");
  assert.deepEqual(statuses(target.state, 1, 2, 3), ["Filled", "Canceled", "Canceled"]);
  assert.equal(target.state.notes.get(2), NO_LONGER_OPEN);
  assert.equal(positionOf(target.state, AAPL), "flat");
});

test("exits outlive the canceled rest of their entry and close only what it filled, whatever else is held", () => {
  const held = { positions: [[AAPL, "50", "5000"]] as [Instrument, string, string][] };
  const partly = advance(
    stateOf(bracket(), held),
    marketOf({ AAPL: quote("100.5", "100.52", null, "4") }),
    NO_COMMISSION,
    NOW,
  );
  assert.equal(positionOf(partly.state, AAPL), "54 cost 5402.08");
  const events: BookEvent[] = [];
  const rested = withBook(partly.state, cancel(partly.state.book, 1), events);
  assert.deepEqual(statuses(rested, 1, 2, 3), ["Canceled", "Working", "Working"]);
  const quiet = advance(rested, marketOf({ AAPL: quote("105", "105.02") }), NO_COMMISSION, NOW + 1);
  assert.deepEqual(statuses(quiet.state, 2, 3), ["Working", "Working"], "they keep protecting the 4");
  const stopped = advance(quiet.state, marketOf({ AAPL: quote("99.5", "99.52") }), NO_COMMISSION, NOW + 2);
  assert.deepEqual(fillsOf(stopped), ["3:4@99.5"], "4 of the 54 held: only what the entry filled");
  assert.deepEqual(statuses(stopped.state, 2, 3), ["Canceled", "Canceled"], "nothing left to close: both end");
  assert.equal(stopped.state.notes.get(3), NO_LONGER_OPEN);
  assert.equal(fmt(stopped.state.positions.get("AAPL")?.position.quantity ?? ZERO), "50");
});

test("exits without an OCA group share what the entry filled: one never closes what the other closed", () => {
  const loose = bracket().map((order) => (order.id === 1 ? order : { ...order, ocaGroup: undefined }));
  const partly = advance(stateOf(loose), marketOf({ AAPL: quote("100.5", "100.52", null, "4") }), NO_COMMISSION, NOW);
  const target = advance(partly.state, marketOf({ AAPL: quote("110", "110.02", null, "0") }), NO_COMMISSION, NOW + 1);
  assert.deepEqual(fillsOf(target), ["2:4@110"]);
  assert.deepEqual(statuses(target.state, 1, 2, 3), ["PartiallyFilled", "PartiallyFilled", "Working"]);
  const rest = advance(target.state, marketOf({ AAPL: quote("100.5", "100.52") }), NO_COMMISSION, NOW + 2);
  assert.deepEqual(fillsOf(rest), ["1:6@100.52"]);
  const stopped = advance(rest.state, marketOf({ AAPL: quote("99", "99.02") }), NO_COMMISSION, NOW + 3);
  assert.deepEqual(fillsOf(stopped), ["3:6@99"], "the stop closes the 6 the target did not");
  assert.deepEqual(statuses(stopped.state, 2, 3), ["Canceled", "Canceled"]);
  assert.deepEqual([filled(stopped.state, 2), filled(stopped.state, 3)], ["4", "6"]);
  assert.equal(positionOf(stopped.state, AAPL), "flat");
});

test("exits of an entry that ended without a fill never work; those of one that filled in part end when it is all closed", () => {
  const canceled = withBook(stateOf(bracket()), cancel(stateOf(bracket()).book, 1), []);
  assert.deepEqual(statuses(canceled, 1, 2, 3), ["Canceled", "Canceled", "Canceled"]);
  const partly = advance(
    stateOf(bracket()),
    marketOf({ AAPL: quote("100.5", "100.52", null, "4") }),
    NO_COMMISSION,
    NOW,
  );
  const expired = withBook(partly.state, expire(partly.state.book, [1], NOW + 1), []);
  const target = advance(expired, marketOf({ AAPL: quote("110", "110.02") }), NO_COMMISSION, NOW + 2);
  assert.deepEqual(fillsOf(target), ["2:4@110"]);
  assert.deepEqual(statuses(target.state, 1, 2, 3), ["Expired", "Canceled", "Canceled"]);
  assert.equal(filled(target.state, 2), "4");
});

test("an exit filled in part leaves its sibling working, capped at what is still held", () => {
  const entered = advance(stateOf(bracket()), marketOf({ AAPL: quote("100.5", "100.52") }), NO_COMMISSION, NOW).state;
  const stopped = advance(entered, marketOf({ AAPL: quote("99.5", "99.52", "3", null) }), NO_COMMISSION, NOW + 1000);
  assert.deepEqual(fillsOf(stopped), ["3:3@99.5"]);
  assert.deepEqual(statuses(stopped.state, 2, 3), ["Working", "PartiallyFilled"]);
  const target = advance(stopped.state, marketOf({ AAPL: quote("110", "110.02") }), NO_COMMISSION, NOW + 2000);
  assert.deepEqual(fillsOf(target), ["2:7@110"], "the target closes the 7 left, not its 10");
  assert.deepEqual(statuses(target.state, 2, 3), ["Canceled", "Canceled"], "both stranded once flat");
  assert.equal(positionOf(target.state, AAPL), "flat");
});

test("DAY orders expire at their expiry time, before anything fills", () => {
  const expiresAt = Date.parse("2026-03-02T21:00:00Z");
  const state = stateOf([{ id: 1, terms: { type: "limit", limit: d("90"), tif: "day" } }], {
    expiresAtMs: [[1, expiresAt]],
  });
  const before = advance(state, marketOf({ AAPL: quote("99", "99.02") }), NO_COMMISSION, expiresAt - 1);
  assert.equal(status(before.state, 1), "Working");
  const expired = advance(state, marketOf({ AAPL: quote("89", "89.02") }), NO_COMMISSION, expiresAt);
  assert.equal(status(expired.state, 1), "Expired");
  assert.deepEqual(expired.fills, [], "a marketable quote at the expiry is too late");
  assert.deepEqual(eventsOf(expired), ["1 expired"]);
});

test("an expiring entry takes its held exits with it", () => {
  const expiresAt = Date.parse("2026-03-02T21:00:00Z");
  const state = stateOf(bracket("110", "100", "day"), { expiresAtMs: [[1, expiresAt]] });
  const result = advance(state, marketOf({}), NO_COMMISSION, expiresAt);
  assert.deepEqual(statuses(result.state, 1, 2, 3), ["Expired", "Canceled", "Canceled"]);
});

test("a parked order is held until its time and works from then", () => {
  const release = NOW + 60_000;
  const state = stateOf([{ id: 1, parkedUntilMs: release }]);
  assert.equal(status(state, 1), "PendingNew");
  const market = marketOf({ AAPL: quote("99.98", "100.02") });
  const early = advance(state, market, NO_COMMISSION, release - 1);
  assert.equal(status(early.state, 1), "PendingNew");
  assert.deepEqual(early.fills, []);
  const due = advance(state, market, NO_COMMISSION, release);
  assert.deepEqual(eventsOf(due), ["1 accepted", "1 fill"]);
  assert.deepEqual(fillsOf(due), ["1:100@100.02"]);
});

test("advance stamps the expiry of a DAY order it sees first", () => {
  const result = advance(
    stateOf([{ id: 1, terms: { type: "limit", limit: d("90"), tif: "day" } }]),
    marketOf({}),
    NO_COMMISSION,
    NOW,
  );
  assert.equal(iso(result.state.expiresAtMs.get(1)), "2026-03-02T21:00:00.000Z");
});

test("stampExpiries: a working DAY order expires at the close of its session, or the next one", () => {
  const day = { tif: "day" as const, type: "limit" as const, limit: d("90") };
  const stamped = stampExpiries(stateOf([{ id: 1, terms: day }]), NOW);
  assert.equal(iso(stamped.expiresAtMs.get(1)), "2026-03-02T21:00:00.000Z");
  const saturday = Date.parse("2026-03-07T15:00:00Z");
  const weekend = stampExpiries(stateOf([{ id: 1, terms: day }], { placedAtMs: saturday }), saturday);
  assert.equal(iso(weekend.expiresAtMs.get(1)), "2026-03-09T20:00:00.000Z", "Monday's close, EDT");
  const evening = Date.parse("2026-03-02T23:30:00Z");
  const future = stampExpiries(
    stateOf([{ id: 1, terms: { ...day, instrument: ES, limit: d("5000") } }], { placedAtMs: evening }),
    evening,
  );
  assert.equal(iso(future.expiresAtMs.get(1)), "2026-03-03T22:00:00.000Z", "Globex evening: Tuesday 17:00");
});

test("stampExpiries: GTC, already stamped and finished orders are left alone", () => {
  const gtc = stateOf([{ id: 1 }]);
  assert.equal(stampExpiries(gtc, NOW), gtc, "nothing to stamp: the same state");
  const kept = stateOf([{ id: 1, terms: { tif: "day" } }], { expiresAtMs: [[1, 42]] });
  assert.equal(stampExpiries(kept, NOW).expiresAtMs.get(1), 42);
  const filledOrder = advance(
    stateOf([{ id: 1, terms: { tif: "day" } }], { expiresAtMs: [[1, NOW + 1]] }),
    marketOf({ AAPL: quote("99.98", "100.02") }),
    NO_COMMISSION,
    NOW,
  ).state;
  const withoutStamp: TradingState = { ...filledOrder, expiresAtMs: new Map() };
  assert.equal(stampExpiries(withoutStamp, NOW).expiresAtMs.has(1), false, "a filled order gets no expiry");
});

test("stampExpiries: a parked DAY order expires at the close of the session its parking ends in", () => {
  const tuesday = Date.parse("2026-03-03T15:00:00Z");
  const parked = stateOf([{ id: 1, terms: { tif: "day" }, parkedUntilMs: tuesday }]);
  assert.equal(iso(stampExpiries(parked, NOW).expiresAtMs.get(1)), "2026-03-03T21:00:00.000Z");
  const lapsed = stateOf([{ id: 1, terms: { tif: "day" }, parkedUntilMs: NOW + 10 }]);
  assert.equal(
    iso(stampExpiries(lapsed, NOW + 20).expiresAtMs.get(1)),
    "2026-03-02T21:00:00.000Z",
    "parking already over: from now",
  );
});

test("stampExpiries: held exits get no expiry until they work; other held children get it at once", () => {
  const state = stateOf([
    ...bracket("110", "100", "day"),
    {
      id: 4,
      parentId: 1,
      terms: { tif: "day", side: "sell", openClose: "close", type: "limit", limit: d("200"), quantity: d("10") },
    },
  ]);
  const stamped = stampExpiries(state, NOW);
  assert.deepEqual(
    [1, 2, 3, 4].map((id) => iso(stamped.expiresAtMs.get(id))),
    ["2026-03-02T21:00:00.000Z", "none", "none", "2026-03-02T21:00:00.000Z"],
  );
  const tuesday = Date.parse("2026-03-03T15:00:00Z");
  const entered = advance(
    { ...stamped, expiresAtMs: new Map() },
    marketOf({ AAPL: quote("100.5", "100.52") }),
    NO_COMMISSION,
    tuesday,
  );
  assert.deepEqual(statuses(entered.state, 2, 3), ["Working", "Working"]);
  assert.equal(iso(entered.state.expiresAtMs.get(2)), "2026-03-03T21:00:00.000Z", "stamped when it starts working");
  assert.equal(iso(entered.state.expiresAtMs.get(3)), "2026-03-03T21:00:00.000Z");
});

/** AAPL calls and puts expiring Friday 2026-03-20, and the March E-mini, whose month ends Tuesday 2026-03-31. */
const CALL_150 = at("AAPL260320C00150000");
const PUT_150 = at("AAPL260320P00150000");
const ES_MARCH = at("@ESH26");
/** Midnight in New York after the options' expiry date: they can no longer trade. */
const AFTER_EXPIRY = Date.parse("2026-03-21T04:00:00Z");

/** A market whose history answers each symbol's quote at any instant, noting the instants asked. */
function marketWithHistory(history: Readonly<Record<string, Quote>>, asked: string[] = []): MarketView {
  return {
    ...marketOf({}, { open: false }),
    quoteAt: (instrument, atMs) => {
      asked.push(`${instrument.fullSymbol} ${iso(atMs)}`);
      return history[instrument.fullSymbol] ?? null;
    },
  };
}

/** An order maker as the frame gives one: ids from 100 up, with the terms each was made for. */
function orderMaker() {
  const made = new Map<number, OrderTerms>();
  return { made, newOrder: (terms: OrderTerms) => made.set(100 + made.size, terms).size + 99 };
}

test("an expired option in the money settles at its value against the underlying's close, without commission", () => {
  const before = stateOf([], { positions: [[CALL_150, "2", "10"]] });
  const asked: string[] = [];
  const { made, newOrder } = orderMaker();
  const market = marketWithHistory({ AAPL: quote("159.90", "160.10") }, asked);
  const result = advance(before, market, DEFAULT_PLAN, AFTER_EXPIRY, undefined, undefined, "all", newOrder);
  assert.deepEqual(asked, ["AAPL 2026-03-20T19:59:59.999Z"], "the underlying as its expiry day's session closed");
  assert.deepEqual(
    [...made.values()].map((t) => [t.side, fmt(t.quantity), t.openClose, t.signalType]),
    [["sell", "2", "close", SIGNAL_TYPES.settlement]],
  );
  assert.deepEqual(fillsOf(result), ["100:2@10"]);
  const [fill] = result.fills;
  assert.equal(fmt(fill?.commission ?? d("-1")), "0");
  assert.deepEqual(fill?.planCommissions, { Default: ZERO, Institutional: ZERO, None: ZERO });
  // 2 contracts × 100 × (10 − 5) realized; the sale brings 2 × 100 × 10 into cash.
  assert.equal(fmt(fill?.realized ?? ZERO), "1000");
  assert.equal(fmt(result.state.cash), "102000");
  assert.equal(positionOf(result.state, CALL_150), "flat");
  assert.equal(status(result.state, 100), "Filled");
  assert.equal(result.state.notes.get(100), "Settled at expiry: in the money against AAPL at 160");
  const trade = result.state.trades.get(1);
  assert.equal(trade?.closedAtMs, AFTER_EXPIRY, "the trade closes");
  assert.deepEqual(eventsOf(result), ["100 accepted", "100 fill"]);
});

test("an expired option out of the money settles at nothing: a short put keeps its premium", () => {
  const before = stateOf([], { positions: [[PUT_150, "-3", "-12"]] });
  const { newOrder } = orderMaker();
  const market = marketWithHistory({ AAPL: quote("159.90", "160.10") });
  const result = advance(before, market, NO_COMMISSION, AFTER_EXPIRY, undefined, undefined, "all", newOrder);
  assert.deepEqual(fillsOf(result), ["100:3@0"]);
  assert.equal(fmt(result.fills[0]?.realized ?? ZERO), "1200", "3 × 100 × the 4 received");
  assert.equal(fmt(result.state.cash), "100000", "buying back at nothing costs nothing");
  assert.equal(result.state.notes.get(100), "Expired worthless: out of the money against AAPL at 160");
});

test("an expired future settles at its own last price; its working orders expire with a note", () => {
  const before = stateOf(
    [
      { id: 1, terms: { instrument: ES_MARCH, side: "sell", type: "limit", limit: d("5200"), quantity: d("1") } },
      { id: 2, terms: { type: "limit", limit: d("90") } },
    ],
    { positions: [[ES_MARCH, "1", "5000"]] },
  );
  const asked: string[] = [];
  const { newOrder } = orderMaker();
  const market = marketWithHistory({ "@ESH26": quote("5099.75", "5100.25") }, asked);
  const endOfMonth = Date.parse("2026-04-01T04:00:00Z");
  const result = advance(before, market, DEFAULT_PLAN, endOfMonth, undefined, undefined, "all", newOrder);
  assert.deepEqual(asked, ["@ESH26 2026-03-31T20:59:59.999Z"], "the contract as Globex closed on its last day");
  assert.deepEqual(statuses(result.state, 1, 2), ["Expired", "Working"], "the stock order is left alone");
  assert.equal(result.state.notes.get(1), "Expired: its contract expired");
  assert.deepEqual(fillsOf(result), ["100:1@5100"]);
  // Futures are margined: closing realizes (5100 − 5000) × 50 into cash.
  assert.equal(fmt(result.state.cash), "105000");
  assert.equal(result.state.notes.get(100), "Settled at expiry at the contract's last price");
});

test("without any last price an expired contract settles at its average price; no dollar rate, not yet", () => {
  const before = stateOf([], { positions: [[CALL_150, "1", "5"]] });
  const { newOrder } = orderMaker();
  const atCost = advance(before, marketOf({}), DEFAULT_PLAN, AFTER_EXPIRY, undefined, undefined, "all", newOrder);
  assert.deepEqual(fillsOf(atCost), ["100:1@5"]);
  assert.equal(fmt(atCost.fills[0]?.realized ?? d("-1")), "0");
  assert.equal(atCost.state.notes.get(100), "Settled at expiry at the average price: no last price was known");
  const noRate = advance(
    before,
    marketOf({}, { rates: { USD: null } }),
    DEFAULT_PLAN,
    AFTER_EXPIRY,
    undefined,
    undefined,
    "all",
    orderMaker().newOrder,
  );
  assert.deepEqual(fillsOf(noRate), []);
  assert.equal(positionOf(noRate.state, CALL_150), "1 cost 5");
});

test("contracts are settled only once expired, and only when every order is looked at and orders can be made", () => {
  const before = stateOf([{ id: 1, terms: { instrument: CALL_150, type: "limit", limit: d("1") } }], {
    positions: [[CALL_150, "1", "5"]],
  });
  const market = marketOf({}, { open: false });
  const expiryEvening = Date.parse("2026-03-21T03:59:59Z");
  const { made, newOrder } = orderMaker();
  const early = advance(before, market, DEFAULT_PLAN, expiryEvening, undefined, undefined, "all", newOrder);
  assert.deepEqual([statuses(early.state, 1), fillsOf(early), made.size], [["Working"], [], 0]);
  const focused = advance(before, market, DEFAULT_PLAN, AFTER_EXPIRY, undefined, undefined, {
    orders: [1],
    symbols: [],
  });
  assert.deepEqual([statuses(focused.state, 1), fillsOf(focused)], [["Working"], []]);
  const withoutMaker = advance(before, market, DEFAULT_PLAN, AFTER_EXPIRY);
  assert.deepEqual([statuses(withoutMaker.state, 1), fillsOf(withoutMaker)], [["Working"], []]);
  const settled = advance(before, market, DEFAULT_PLAN, AFTER_EXPIRY, undefined, undefined, "all", newOrder);
  assert.deepEqual([statuses(settled.state, 1), fillsOf(settled)], [["Expired"], ["100:1@5"]]);
});

test("random orders against random quotes: fills stay within the orders, position and cash add up", () => {
  const cents = (n: number) => d((n / 100).toFixed(2));
  const orderArb = fc.record({
    type: fc.constantFrom("market" as const, "limit" as const, "stop" as const),
    side: fc.constantFrom("buy" as const, "sell" as const),
    close: fc.boolean(),
    quantity: fc.integer({ min: 1, max: 60 }),
    price: fc.integer({ min: 9_500, max: 10_500 }),
  });
  const quoteArb = fc.record({
    bid: fc.integer({ min: 9_400, max: 10_600 }),
    spread: fc.integer({ min: 1, max: 10 }),
    bidSize: fc.option(fc.integer({ min: 0, max: 50 })),
    askSize: fc.option(fc.integer({ min: 0, max: 50 })),
    open: fc.boolean(),
  });
  fc.assert(
    fc.property(
      fc.array(orderArb, { minLength: 1, maxLength: 8 }),
      fc.array(quoteArb, { minLength: 1, maxLength: 8 }),
      fc.integer({ min: -80, max: 80 }),
      (orders, quotes, startQuantity) => {
        const positions: [Instrument, string, string][] =
          startQuantity === 0 ? [] : [[AAPL, String(startQuantity), String(startQuantity * 100)]];
        let state = stateOf(
          orders.map((o, i) => ({
            id: i + 1,
            terms: {
              type: o.type,
              side: o.side,
              openClose: o.close ? ("close" as const) : ("open" as const),
              quantity: fromInteger(o.quantity),
              limit: o.type === "limit" ? cents(o.price) : null,
              stop: o.type === "stop" ? cents(o.price) : null,
            },
          })),
          { positions },
        );
        const startCash = state.cash;
        let held = fromInteger(startQuantity);
        let cashFlow = ZERO;
        const filledBy = new Map<number, Decimal>();
        for (const [step, q] of quotes.entries()) {
          const current = quote(
            fmt(cents(q.bid)),
            fmt(cents(q.bid + q.spread)),
            q.bidSize === null ? null : String(q.bidSize),
            q.askSize === null ? null : String(q.askSize),
          );
          const result = advance(state, marketOf({ AAPL: current }, { open: q.open }), DEFAULT_PLAN, NOW + step);
          if (!q.open) assert.deepEqual(result.fills, [], "nothing fills while closed");
          const taken = { buy: ZERO, sell: ZERO };
          for (const f of result.fills) {
            const terms = state.terms.get(f.orderId);
            assert.ok(terms);
            taken[f.side] = add(taken[f.side], f.quantity);
            filledBy.set(f.orderId, add(filledBy.get(f.orderId) ?? ZERO, f.quantity));
            const before = held;
            held = add(held, f.side === "buy" ? f.quantity : neg(f.quantity));
            assert.equal(f.positionAfter, held);
            if (terms.openClose === "close") {
              assert.ok(sign(before) !== 0 && sign(held) !== -sign(before), "a close never reverses the position");
            }
            if (terms.type === "limit" && terms.limit !== null) {
              assert.ok(f.side === "buy" ? compare(f.price, terms.limit) <= 0 : compare(f.price, terms.limit) >= 0);
            }
            cashFlow = add(cashFlow, f.cash);
          }
          if (current.askSize !== null) assert.ok(compare(taken.buy, current.askSize) <= 0, "ask size shared");
          if (current.bidSize !== null) assert.ok(compare(taken.sell, current.bidSize) <= 0, "bid size shared");
          state = result.state;
          for (const [id, terms] of state.terms) {
            const order = state.book.get(id);
            assert.ok(order);
            assert.ok(compare(order.state.filledQuantity, terms.quantity) <= 0, "never more than ordered");
            assert.equal(order.state.filledQuantity, filledBy.get(id) ?? ZERO, "the book agrees with the fills");
          }
          assert.equal(state.positions.get("AAPL")?.position.quantity ?? ZERO, held, "position = signed sum of fills");
          assert.equal(state.cash, add(startCash, cashFlow), "cash = start + the fills' cash");
        }
      },
    ),
    { numRuns: 200 },
  );
});

test("random partial fills, cancels and expiries of a bracket: what the entry filled is always protected, never closed twice", () => {
  const operation = fc.oneof(
    fc.record({
      op: fc.constant("quote" as const),
      bid: fc.integer({ min: 8_500, max: 11_500 }),
      bidSize: fc.option(fc.integer({ min: 0, max: 6 })),
      askSize: fc.option(fc.integer({ min: 0, max: 6 })),
    }),
    fc.record({ op: fc.constant("cancelEntry" as const) }),
    fc.record({ op: fc.constant("expireEntry" as const) }),
    fc.record({ op: fc.constant("cancelExit" as const), id: fc.constantFrom(2, 3) }),
  );
  fc.assert(
    fc.property(
      fc.constantFrom("buy" as const, "sell" as const),
      fc.constantFrom("market" as const, "limit" as const),
      fc.boolean(),
      fc.constantFrom(0, 20),
      fc.array(operation, { maxLength: 20 }),
      (side, type, oca, alreadyHeld, ops) => {
        const buying = side === "buy";
        const exitSide = buying ? ("sell" as const) : ("buy" as const);
        const direction = buying ? 1 : -1;
        const exit = { quantity: d("10"), side: exitSide, openClose: "close" as const };
        let state = stateOf(
          [
            { id: 1, terms: { side, type, limit: type === "limit" ? d("100") : null, quantity: d("10") } },
            {
              id: 2,
              parentId: 1,
              ...(oca ? { ocaGroup: 7 } : {}),
              terms: { ...exit, type: "limit", limit: d(buying ? "110" : "90"), signalType: SIGNAL_TYPES.profitTarget },
            },
            {
              id: 3,
              parentId: 1,
              ...(oca ? { ocaGroup: 7 } : {}),
              terms: { ...exit, type: "stop", stop: d(buying ? "95" : "105"), signalType: SIGNAL_TYPES.stopLoss },
            },
          ],
          alreadyHeld === 0
            ? {}
            : { positions: [[AAPL, String(direction * alreadyHeld), String(direction * alreadyHeld * 100)]] },
        );
        // A crash through the stop loss that the entry cannot fill on (no size on its side).
        const crash = buying ? quote("1", "1.02", null, "0") : quote("1000", "1000.02", "0", null);
        let exitCanceledByHand = false;
        for (const [step, o] of ops.entries()) {
          const nowMs = NOW + step;
          let market = marketOf({});
          if (o.op === "quote") {
            const bid = d((o.bid / 100).toFixed(2));
            const size = (n: number | null) => (n === null ? null : String(n));
            market = marketOf({ AAPL: quote(fmt(bid), fmt(add(bid, d("0.02"))), size(o.bidSize), size(o.askSize)) });
          } else if (o.op === "cancelEntry" || o.op === "cancelExit") {
            const canceled = cancel(state.book, o.op === "cancelEntry" ? 1 : o.id);
            if (canceled.ok) state = withBook(state, canceled, []);
            if (canceled.ok && o.op === "cancelExit") exitCanceledByHand = true;
          } else {
            state = withBook(state, expire(state.book, [1], nowMs), []);
          }
          state = advance(state, market, NO_COMMISSION, nowMs).state;

          const quantityOf = (id: number) => state.book.get(id)?.state.filledQuantity ?? ZERO;
          const entered = quantityOf(1);
          const closed = add(quantityOf(2), quantityOf(3));
          const open = sub(entered, closed);
          assert.ok(compare(closed, entered) <= 0, "the exits never close more than the entry filled");
          const held = state.positions.get("AAPL")?.position.quantity ?? ZERO;
          assert.equal(
            held,
            fromInteger(direction * alreadyHeld + direction * Number(fmt(open))),
            "the position is what was held plus what the entry filled less what its exits closed: never reversed",
          );
          if (sign(entered) === 0) {
            for (const id of [2, 3]) {
              assert.ok(
                ["PendingNew", "Canceled"].includes(status(state, id) ?? ""),
                "no exit works before the entry fills",
              );
            }
          }
          if (sign(open) > 0 && !exitCanceledByHand) {
            assert.ok(
              ["Working", "PartiallyFilled"].includes(status(state, 3) ?? ""),
              `the stop loss works while ${fmt(open)} filled is open`,
            );
            const probe = advance(state, marketOf({ AAPL: crash }), NO_COMMISSION, nowMs);
            assert.deepEqual(
              fillsOf(probe).map((f) => f.split("@")[0]),
              [`3:${fmt(open)}`],
              "the stop closes it all",
            );
          }
          const entryEnded = !["Working", "PartiallyFilled"].includes(status(state, 1) ?? "");
          if (entryEnded && sign(open) === 0) {
            for (const id of [2, 3]) {
              assert.ok(
                !["PendingNew", "Working", "PartiallyFilled"].includes(status(state, id) ?? ""),
                "with nothing left to protect, the exits end",
              );
            }
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});
