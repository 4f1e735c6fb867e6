import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ControllableClock } from "../../src/core/clock.js";
import { type Decimal, decimal, formatDecimal } from "../../src/core/decimal.js";
import type { MarketQuote } from "../../src/core/market/quote.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";
import { MarketData, parseMarketFeed } from "../../src/engine/market-data.js";

const aapl = fromServiceSymbol("AAPL") as Instrument;
const T0 = Date.parse("2026-03-02T15:00:00Z");
const clockAt = (ms: number) => new ControllableClock(() => 0, { kind: "fixed", atMs: ms });

test("MARKET_FEED picks the source", () => {
  assert.deepEqual(parseMarketFeed(undefined), { kind: "simulated", seed: "strategy-hub" });
  assert.deepEqual(parseMarketFeed("manual"), { kind: "manual" });
  assert.deepEqual(parseMarketFeed("replay:/data/q.csv"), { kind: "replay", file: "/data/q.csv" });
  assert.throws(() => parseMarketFeed("random"), /MARKET_FEED/);
});

test("a hand quote takes a symbol over from the simulated feed for good", () => {
  const clock = clockAt(T0);
  const market = new MarketData({ kind: "simulated", seed: "s" }, clock);
  const simulated = market.quote(aapl);
  assert.ok(simulated);
  const hand = {
    symbol: "AAPL",
    bid: decimal("10"),
    ask: decimal("10.02"),
    last: decimal("10.01"),
    bidSize: null,
    askSize: null,
    atMs: T0,
  };
  market.setQuote(hand);
  clock.apply(clock.advancedBy(3600));
  assert.deepEqual(market.quote(aapl), hand, "the clock moves, the hand quote stays");
  assert.notEqual(market.quote(fromServiceSymbol("MSFT") as Instrument), null, "other symbols keep simulating");
});

test("fills take a quote's sizes once: the same quote made anew still lacks them, a new one offers its own", () => {
  const market = new MarketData({ kind: "manual" }, clockAt(T0));
  const quote: MarketQuote = {
    symbol: "AAPL",
    bid: decimal("10"),
    ask: decimal("10.02"),
    last: decimal("10.01"),
    bidSize: decimal("300"),
    askSize: decimal("500"),
    atMs: T0,
  };
  market.take(quote, "buy", decimal("200"));
  market.take(quote, "sell", decimal("300"));
  const text = (size: Decimal | null) => (size === null ? null : formatDecimal(size));
  const sizes = (seen: MarketQuote) => {
    const left = market.available(seen);
    return [text(left.bidSize), text(left.askSize)];
  };
  assert.deepEqual(sizes(quote), ["0", "300"]);
  assert.deepEqual(sizes({ ...quote }), ["0", "300"], "the same prices, sizes and time are the same quote");
  for (const [field, value] of [
    ["bid", decimal("10.01")],
    ["ask", decimal("10.01")],
    ["bidSize", decimal("301")],
    ["askSize", decimal("501")],
  ] as const) {
    const other = { ...quote, [field]: value };
    assert.deepEqual(sizes(other), [text(other.bidSize), text(other.askSize)], `another ${field}`);
  }
  assert.deepEqual(sizes({ ...quote, atMs: T0 + 1 }), ["300", "500"], "a later quote offers its sizes afresh");
  assert.deepEqual(sizes({ ...quote, askSize: null }), ["300", null], "so does one without a size");
});

test("the manual feed knows only hand quotes", () => {
  const market = new MarketData({ kind: "manual" }, clockAt(T0));
  assert.equal(market.quote(aapl), null);
});

test("a replay shows the latest quote at or before the clock", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "replay-")), "quotes.csv");
  writeFileSync(
    file,
    "time,symbol,bid,ask,last\n2026-03-02T15:00:00Z,AAPL,100,100.02,100.01\n2026-03-02T15:01:00Z,AAPL,101,101.02,101.01\n",
  );
  const clock = clockAt(T0 - 1);
  const market = await MarketData.open({ kind: "replay", file }, clock);
  assert.equal(market.quote(aapl), null, "before the first row");
  clock.apply({ kind: "fixed", atMs: T0 + 59_999 });
  assert.equal(formatDecimal(market.quote(aapl)?.bid as never), "100");
  clock.apply({ kind: "fixed", atMs: T0 + 3_600_000 });
  assert.equal(formatDecimal(market.quote(aapl)?.bid as never), "101");
  writeFileSync(file, "time,symbol,bid,ask,last\nnonsense\n");
  await assert.rejects(MarketData.open({ kind: "replay", file }, clock), /MARKET_FEED replay file .*: line 2/);
});
