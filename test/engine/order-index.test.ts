import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { add, compare, type Decimal, decimal } from "../../src/core/decimal.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";
import { type LiveOrder, OrderIndex, type StrategyOrders, type WatchedTrade } from "../../src/engine/order-index.js";

const d = decimal;
const at = (symbol: string): Instrument => {
  const instrument = fromServiceSymbol(symbol);
  assert.ok(instrument, symbol);
  return instrument;
};
const SYMBOLS = ["AAPL", "@ESM26", "EURUSD"] as const;
const INSTRUMENTS = new Map<string, Instrument>(SYMBOLS.map((s) => [s, at(s)]));
const instrumentOf = (symbol: string) => INSTRUMENTS.get(symbol) as Instrument;

const order = (
  id: number,
  strategyId: number,
  type: LiveOrder["type"],
  side: LiveOrder["side"],
  price: string | null,
  symbol = "AAPL",
  working = true,
): LiveOrder => ({
  id,
  strategyId,
  instrument: instrumentOf(symbol),
  side,
  type,
  limit: type === "limit" && price !== null ? d(price) : null,
  stop: type === "stop" && price !== null ? d(price) : null,
  working,
});
const snapshot = (
  strategyId: number,
  version: number,
  live: LiveOrder[],
  nextDueMs: number | null = null,
  openTrades: WatchedTrade[] = [],
): StrategyOrders => ({ strategyId, version, live, nextDueMs, openTrades });
const sorted = (values: Iterable<number>) => [...values].sort((a, b) => a - b);
const crossing = (index: OrderIndex, symbol: string, bid: string, ask: string) =>
  sorted(index.crossing(symbol, d(bid), d(ask)).keys());

/** Whether a quote may fill the order: the fill rules of src/core/fills.ts, by brute force. */
function crosses(o: LiveOrder, bid: Decimal, ask: Decimal): boolean {
  switch (o.type) {
    case "market":
      return true;
    case "limit":
      assert.ok(o.limit !== null);
      return o.side === "buy" ? compare(ask, o.limit) <= 0 : compare(bid, o.limit) >= 0;
    case "stop":
      assert.ok(o.stop !== null);
      return o.side === "buy" ? compare(ask, o.stop) >= 0 : compare(bid, o.stop) <= 0;
  }
}

test("each ladder crosses at and through its price, market orders always", () => {
  const index = new OrderIndex();
  index.update(
    snapshot(1, 1, [order(11, 1, "limit", "buy", "100"), order(12, 1, "limit", "sell", "102", "@ESM26")], 5000),
  );
  index.update(snapshot(2, 1, [order(21, 2, "stop", "buy", "103")]));
  index.update(snapshot(3, 1, [order(31, 3, "stop", "sell", "98")]));
  index.update(snapshot(4, 1, [order(41, 4, "market", "buy", null, "EURUSD")]));
  assert.deepEqual(crossing(index, "AAPL", "100.5", "101"), []);
  assert.deepEqual(crossing(index, "AAPL", "99.98", "100"), [1], "buy limit at the ask");
  assert.deepEqual(crossing(index, "AAPL", "102.99", "103"), [2], "buy stop at the ask");
  assert.deepEqual(crossing(index, "AAPL", "98", "98.01"), [1, 3], "sell stop at the bid, buy limit through");
  assert.deepEqual(crossing(index, "@ESM26", "102", "102.25"), [1]);
  assert.deepEqual(crossing(index, "@ESM26", "101.75", "102"), []);
  assert.deepEqual(crossing(index, "EURUSD", "1.08", "1.08002"), [4]);
  assert.deepEqual(crossing(index, "GBPUSD", "1.3", "1.30002"), []);
  assert.equal(index.workingOrders, 5);
  assert.deepEqual(index.symbols().sort(), ["@ESM26", "AAPL", "EURUSD"]);
  assert.deepEqual(index.due(4999), []);
  assert.deepEqual(index.due(5000), [1]);
});

test("held orders are not on the ladders; a stale or repeated version is ignored", () => {
  const index = new OrderIndex();
  assert.equal(index.version(1), -1);
  assert.equal(index.update(snapshot(1, 3, [order(11, 1, "market", "buy", null, "AAPL", false)], 700)), true);
  assert.equal(index.workingOrders, 0);
  assert.deepEqual(index.symbols(), []);
  assert.deepEqual(crossing(index, "AAPL", "1", "2"), []);
  assert.deepEqual(index.due(700), [1]);
  assert.equal(index.update(snapshot(1, 3, [order(11, 1, "market", "buy", null)])), false, "same version");
  assert.equal(index.update(snapshot(1, 2, [order(11, 1, "market", "buy", null)])), false, "older version");
  assert.equal(index.workingOrders, 0);
  assert.equal(index.version(1), 3);
  assert.equal(index.update(snapshot(1, 4, [order(11, 1, "market", "buy", null)])), true);
  assert.deepEqual(crossing(index, "AAPL", "1", "2"), [1]);
  assert.deepEqual(index.due(700), [], "the newer snapshot has nothing due");
  assert.equal(index.update(snapshot(1, 5, [])), true);
  assert.equal(index.workingOrders, 0);
  assert.deepEqual(index.symbols(), []);
});

test("an open trade under water is visited again only when the market goes beyond the price it was last visited at", () => {
  const index = new OrderIndex();
  const long = (strategyId: number, threshold: string): WatchedTrade => ({
    strategyId,
    fullSymbol: "AAPL",
    side: "buy",
    threshold: d(threshold),
  });
  index.update(snapshot(1, 1, [], null, [long(1, "100")]));
  index.update(snapshot(2, 1, [], null, [long(2, "98")]));
  const visits = (bid: string) => {
    const visited: number[] = [];
    index.adverse("AAPL", d(bid), add(d(bid), d("0.01")), (strategyId) => visited.push(strategyId));
    return sorted(visited);
  };
  assert.deepEqual(visits("99"), [1]);
  assert.deepEqual(visits("99"), [], "the same price again is no news");
  assert.deepEqual(visits("99.5"), [], "nor a better one");
  assert.deepEqual(visits("97"), [1, 2]);
  assert.deepEqual(visits("98"), []);
  // A trade whose worst price moved is still taken off with its strategy's next snapshot.
  index.update(snapshot(1, 2, []));
  assert.deepEqual(visits("96"), [2]);
  index.update(snapshot(2, 2, []));
  assert.deepEqual(index.symbols(), []);
});

interface ModelEntry {
  readonly version: number;
  readonly live: readonly LiveOrder[];
  readonly nextDueMs: number | null;
  readonly openTrades: readonly WatchedTrade[];
}

/** Whether a quote is a new worst price for the open trade: strictly beyond its threshold on its adverse side. */
const beyondWorst = (t: WatchedTrade, bid: Decimal, ask: Decimal): boolean =>
  t.side === "buy" ? compare(bid, t.threshold) < 0 : compare(ask, t.threshold) > 0;

test("against a brute-force model: random snapshots, stale versions and quotes (the crossing orders, and the open trades under water of each strategy, whose worst price the quote then is)", () => {
  // Prices on a quarter grid over a narrow range, so orders share prices and quotes land on them.
  const price = fc.integer({ min: 396, max: 404 }).map((k) => (k / 4).toFixed(2));
  const orderSpec = fc.record({
    n: fc.integer({ min: 0, max: 7 }),
    symbol: fc.constantFrom(...SYMBOLS),
    type: fc.constantFrom("market" as const, "limit" as const, "stop" as const),
    side: fc.constantFrom("buy" as const, "sell" as const),
    price,
    working: fc.boolean(),
  });
  const update = fc.record({
    kind: fc.constant("update" as const),
    strategyId: fc.integer({ min: 1, max: 4 }),
    version: fc.integer({ min: 0, max: 12 }),
    orders: fc.uniqueArray(orderSpec, { selector: (o) => o.n, maxLength: 6 }),
    nextDueMs: fc.option(fc.integer({ min: 0, max: 100 })),
    // A strategy holds one trade per symbol.
    trades: fc.uniqueArray(
      fc.record({ symbol: fc.constantFrom(...SYMBOLS), side: fc.constantFrom("buy" as const, "sell" as const), price }),
      { selector: (t) => t.symbol, maxLength: 3 },
    ),
  });
  const quoteCheck = fc.record({
    kind: fc.constant("quote" as const),
    symbol: fc.constantFrom(...SYMBOLS),
    bid: fc.integer({ min: 394, max: 406 }),
    spread: fc.integer({ min: 0, max: 3 }),
  });
  const dueCheck = fc.record({ kind: fc.constant("due" as const), atMs: fc.integer({ min: 0, max: 100 }) });
  fc.assert(
    fc.property(fc.array(fc.oneof(update, update, quoteCheck, dueCheck), { maxLength: 40 }), (steps) => {
      const index = new OrderIndex();
      const model = new Map<number, ModelEntry>();
      const working = () => [...model.values()].flatMap((entry) => entry.live.filter((o) => o.working));
      for (const step of steps) {
        if (step.kind === "update") {
          const live = step.orders.map((o) =>
            order(step.strategyId * 100 + o.n, step.strategyId, o.type, o.side, o.price, o.symbol, o.working),
          );
          const openTrades = step.trades.map((t) => ({
            strategyId: step.strategyId,
            fullSymbol: t.symbol,
            side: t.side,
            threshold: d(t.price),
          }));
          const held = model.get(step.strategyId);
          const fresh = held === undefined || step.version > held.version;
          assert.equal(index.update(snapshot(step.strategyId, step.version, live, step.nextDueMs, openTrades)), fresh);
          if (fresh) model.set(step.strategyId, { version: step.version, live, nextDueMs: step.nextDueMs, openTrades });
        } else if (step.kind === "quote") {
          const bid = d((step.bid / 4).toFixed(2));
          const ask = d(((step.bid + step.spread) / 4).toFixed(2));
          const expected = new Map<number, number[]>();
          for (const o of working()) {
            if (o.instrument.fullSymbol !== step.symbol || !crosses(o, bid, ask)) continue;
            expected.set(o.strategyId, [...(expected.get(o.strategyId) ?? []), o.id]);
          }
          const found = index.crossing(step.symbol, bid, ask);
          assert.deepEqual(sorted(found.keys()), sorted(expected.keys()));
          for (const [strategyId, ids] of expected) assert.deepEqual(sorted(found.get(strategyId) ?? []), sorted(ids));
          const underWater = [...model.values()]
            .flatMap((e) => e.openTrades)
            .filter((t) => t.fullSymbol === step.symbol && beyondWorst(t, bid, ask))
            .map((t) => t.strategyId);
          const visited: number[] = [];
          index.adverse(step.symbol, bid, ask, (strategyId) => visited.push(strategyId));
          assert.deepEqual(sorted(visited), sorted(underWater));
          // The price is each visited trade's worst now: the same quote again visits no one.
          for (const [strategyId, entry] of model) {
            const openTrades = entry.openTrades.map((t) =>
              t.fullSymbol === step.symbol && beyondWorst(t, bid, ask)
                ? { ...t, threshold: t.side === "buy" ? bid : ask }
                : t,
            );
            model.set(strategyId, { ...entry, openTrades });
          }
        } else {
          const expected = [...model].filter(([, e]) => e.nextDueMs !== null && e.nextDueMs <= step.atMs);
          assert.deepEqual(sorted(index.due(step.atMs)), sorted(expected.map(([id]) => id)));
        }
        assert.equal(index.workingOrders, working().length);
        const watchedSymbols = [...model.values()].flatMap((e) => e.openTrades.map((t) => t.fullSymbol));
        assert.deepEqual(
          index.symbols().sort(),
          [...new Set([...working().map((o) => o.instrument.fullSymbol), ...watchedSymbols])].sort(),
        );
        for (const [strategyId, entry] of model) assert.equal(index.version(strategyId), entry.version);
      }
    }),
    { numRuns: 300 },
  );
});
