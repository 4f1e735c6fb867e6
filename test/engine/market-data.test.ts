import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ControllableClock } from "../../src/core/clock.js";
import { decimal, formatDecimal } from "../../src/core/decimal.js";
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
