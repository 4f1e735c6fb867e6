import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { test } from "node:test";
import { formatDecimal } from "../../src/core/decimal.js";
import type { ReplayRead } from "../../src/core/market/replay.js";
import { readReplayFile, readReplayStream } from "../../src/engine/replay-file.js";

/** A replay file (MARKET_FEED=replay:<file>) read through the CSV parser. */

const read = (text: string) => readReplayStream(Readable.from([text]));

function quotesOf(result: ReplayRead) {
  assert.ok(result.ok, result.ok ? "" : result.error);
  return result.quotes;
}

test("a replay file of quotes", async () => {
  const quotes = quotesOf(
    await read(
      "time,symbol,bid,ask,last,bidsize,asksize\n" +
        "2026-03-02T14:31:00Z,AAPL,150.10,150.12,150.11,300,200\n" +
        "# comments and blank lines are skipped\n\n" +
        "2026-03-02T14:30:00,@esm26,4500.25,4500.50,4500.25\n" +
        "1772461860000,EUR/USD,1.08001,1.08003,1.08002\n",
    ),
  );
  assert.deepEqual(
    quotes.map((q) => [
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

test("quoted fields are read as CSV says: commas, doubled quotes and CRLF line ends", async () => {
  const quotes = quotesOf(
    await read(
      '"time","symbol","bid","ask","last"\r\n' +
        '"2026-03-02T14:30:00Z","AAPL","150.10","150.12","150.11"\r\n' +
        '"2026-03-02T14:31:00+01:00", "MSFT" ,"400","400.5","400.25"\r\n',
    ),
  );
  assert.deepEqual(
    quotes.map((q) => [new Date(q.atMs).toISOString(), q.symbol, formatDecimal(q.last)]),
    [
      ["2026-03-02T13:31:00.000Z", "MSFT", "400.25"],
      ["2026-03-02T14:30:00.000Z", "AAPL", "150.11"],
    ],
  );
  const comma = await read('time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,"AA,PL",1,2,1\n');
  assert.deepEqual(comma, { ok: false, error: "line 2: unknown symbol AA,PL" });
  const quote = await read('time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,"AAPL""",1,2,1\n');
  assert.deepEqual(quote, { ok: false, error: 'line 2: unknown symbol AAPL"' });
});

test("a replay file of bars walks each bar open, extremes, close", async () => {
  const quotes = quotesOf(
    await read(
      "time,symbol,open,high,low,close\n2026-03-02T14:30:00Z,AAPL,100,103,99,102\n2026-03-02T14:31:00Z,AAPL,102,102.5,98,98.5\n",
    ),
  );
  assert.deepEqual(
    quotes.map((q) => formatDecimal(q.last)),
    ["100", "99", "103", "102", "102", "102.5", "98", "98.5"],
  );
});

test("a bad replay file names the line at fault", async () => {
  const cases: [string, RegExp][] = [
    ["price,symbol\n", /line 1: expected a header/],
    ["", /line 1: expected a header/],
    ["time,symbol,bid,ask,last\nyesterday,AAPL,1,2,1\n", /line 2: not a time/],
    ["time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,NOPE1,1,2,1\n", /line 2: unknown symbol/],
    ["time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,AAPL,2,1,1\n", /line 2: a quote needs bid <= ask/],
    ["time,symbol,open,high,low,close\n2026-03-02T14:30:00Z,AAPL,1,1,x,1\n", /line 2: not a price/],
    ['time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,"AAPL,1,2,1\n', /Quote Not Closed/i],
  ];
  for (const [text, message] of cases) {
    const result = await read(text);
    assert.equal(result.ok, false, text);
    assert.match(result.ok ? "" : result.error, message);
  }
});

test("the file is streamed: a bad record stops the reading of an endless input", async () => {
  let produced = 0;
  function* endless() {
    yield "time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,AAPL,1,2,1\nnonsense,AAPL,1,2,1\n";
    for (;;) {
      produced += 1;
      yield "2026-03-02T14:30:00Z,AAPL,1,2,1\n".repeat(100);
    }
  }
  const result = await readReplayStream(Readable.from(endless()));
  assert.deepEqual(result, { ok: false, error: "line 3: not a time: nonsense" });
  assert.ok(produced < 1000, `read ${produced} chunks past the bad record`);
});

test("a large file is read in full, and a missing one is named", async () => {
  const dir = mkdtempSync(join(tmpdir(), "replay-"));
  const file = join(dir, "large.csv");
  const start = Date.parse("2026-03-02T14:30:00Z");
  const rows = Array.from({ length: 100_000 }, (_, i) => `${start + i},AAPL,100,100.01,100`);
  writeFileSync(file, `time,symbol,bid,ask,last\n${rows.join("\n")}\n`);
  const quotes = quotesOf(await readReplayFile(file));
  assert.equal(quotes.length, 100_000);
  assert.equal(quotes.at(-1)?.atMs, start + 99_999);
  const missing = await readReplayFile(join(dir, "missing.csv"));
  assert.equal(missing.ok, false);
  assert.match(missing.ok ? "" : missing.error, /ENOENT/);
});
