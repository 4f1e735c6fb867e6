import assert from "node:assert/strict";
import { test } from "node:test";
import { compare, formatDecimal, isMultipleOf, toNumber } from "../../src/core/decimal.js";
import { readReplay } from "../../src/core/market/replay.js";
import { simulatedQuote } from "../../src/core/market/simulated.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const instrument = (symbol: string) => fromServiceSymbol(symbol) as Instrument;
const T0 = Date.parse("2026-03-02T15:00:00Z");

test("the simulated market is a function of seed, symbol and clock time", () => {
  for (const symbol of ["AAPL", "@ESM26", "EURUSD", "USDJPY", "@6JM26", "SPY270115P00412500"]) {
    const a = simulatedQuote("seed", instrument(symbol), T0);
    const b = simulatedQuote("seed", instrument(symbol), T0);
    assert.deepEqual(a, b, symbol);
    const i = instrument(symbol);
    assert.ok(compare(a.bid, a.ask) < 0, `${symbol}: bid below ask`);
    assert.ok(a.bid > 0n, `${symbol}: positive`);
    assert.ok(isMultipleOf(a.bid, i.tickSize) && isMultipleOf(a.ask, i.tickSize), `${symbol}: on the tick grid`);
  }
  assert.notDeepEqual(simulatedQuote("seed", instrument("AAPL"), T0), simulatedQuote("other", instrument("AAPL"), T0));
});

test("simulated prices wander like a market: they move, but not absurdly, and trade near real levels", () => {
  const es = instrument("@ESM26");
  const start = toNumber(simulatedQuote("seed", es, T0).bid);
  assert.ok(start > 3500 && start < 6500, `E-mini near 5000, got ${start}`);
  const prices = Array.from({ length: 200 }, (_, i) => toNumber(simulatedQuote("seed", es, T0 + i * 60_000).bid));
  assert.ok(new Set(prices).size > 20, "prices move minute to minute");
  const day = toNumber(simulatedQuote("seed", es, T0 + 86_400_000).bid);
  assert.ok(Math.abs(day / start - 1) < 0.2, `one day moves less than 20%: ${start} -> ${day}`);
  const eur = toNumber(simulatedQuote("seed", instrument("EURUSD"), T0).bid);
  assert.ok(eur > 0.8 && eur < 1.4, `EUR/USD near 1.08, got ${eur}`);
});

test("a replay file of quotes", () => {
  const read = readReplay(
    "time,symbol,bid,ask,last,bidsize,asksize\n" +
      "2026-03-02T14:31:00Z,AAPL,150.10,150.12,150.11,300,200\n" +
      "# comments and blank lines are skipped\n\n" +
      "2026-03-02T14:30:00,@esm26,4500.25,4500.50,4500.25\n" +
      "1772461860000,EUR/USD,1.08001,1.08003,1.08002\n",
  );
  assert.ok(read.ok, read.ok ? "" : read.error);
  assert.deepEqual(
    read.quotes.map((q) => [
      new Date(q.atMs).toISOString(),
      q.symbol,
      formatDecimal(q.bid),
      q.bidSize && formatDecimal(q.bidSize),
    ]),
    [
      ["2026-03-02T14:30:00.000Z", "@ESM26", "4500.25", null],
      ["2026-03-02T14:31:00.000Z", "AAPL", "150.1", "300"],
      ["2026-03-02T14:31:00.000Z", "EURUSD", "1.08001", null],
    ],
  );
});

test("a replay file of bars walks each bar open, extremes, close", () => {
  const read = readReplay(
    "time,symbol,open,high,low,close\n2026-03-02T14:30:00Z,AAPL,100,103,99,102\n2026-03-02T14:31:00Z,AAPL,102,102.5,98,98.5\n",
  );
  assert.ok(read.ok);
  assert.deepEqual(
    read.quotes.map((q) => formatDecimal(q.last)),
    ["100", "99", "103", "102", "102", "102.5", "98", "98.5"],
  );
});

test("a bad replay file names the line at fault", () => {
  const cases: [string, RegExp][] = [
    ["price,symbol\n", /line 1: expected a header/],
    ["time,symbol,bid,ask,last\nyesterday,AAPL,1,2,1\n", /line 2: not a time/],
    ["time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,NOPE1,1,2,1\n", /line 2: unknown symbol/],
    ["time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,AAPL,2,1,1\n", /line 2: a quote needs bid <= ask/],
    ["time,symbol,open,high,low,close\n2026-03-02T14:30:00Z,AAPL,1,1,x,1\n", /line 2: not a price/],
  ];
  for (const [text, message] of cases) {
    const read = readReplay(text);
    assert.equal(read.ok, false);
    assert.match(read.ok ? "" : read.error, message);
  }
});
