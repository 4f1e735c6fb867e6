import assert from "node:assert/strict";
import { test } from "node:test";
import { compare, isMultipleOf, toNumber } from "../../src/core/decimal.js";
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
