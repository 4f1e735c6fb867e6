import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { addDays } from "../../src/core/calendar.js";
import { add, type Decimal, decimal, formatDecimal, mulInteger, ZERO } from "../../src/core/decimal.js";
import {
  type DailyMark,
  dailyResults,
  monthlyResults,
  type StatisticsInput,
  strategyStatistics,
  type TradeSummary,
} from "../../src/core/statistics.js";

const d = decimal;
const fmt = (x: Decimal | null) => (x === null ? "null" : formatDecimal(x));
const at = Date.parse;
const ROOT252 = Math.sqrt(252);

function close(actual: number | null | undefined, expected: number, message = "", tolerance = 1e-12): void {
  assert.ok(typeof actual === "number", `${message}: expected ${expected}, got ${actual}`);
  assert.ok(
    Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected)),
    `${message}: expected ${expected}, got ${actual}`,
  );
}

const mark = (day: string, equity: string, benchmark = "100", exposure = "0"): DailyMark => ({
  day,
  equity: d(equity),
  benchmark: d(benchmark),
  exposure: d(exposure),
});

const trade = (opened: string, closed: string, profit: string): TradeSummary => ({
  openedAtMs: at(opened),
  closedAtMs: at(closed),
  profit: d(profit),
});

const base = (over: Partial<StatisticsInput>): StatisticsInput => ({
  startingCash: d("1000"),
  createdAtMs: at("2026-01-29T14:00:00Z"),
  nowMs: at("2026-02-03T21:00:00Z"),
  marks: [],
  closedTrades: [],
  latestTradeAtMs: null,
  ...over,
});

// ---------------------------------------------------------------------------
// The hand-worked example. Starting cash 1000, benchmark 100 at the start.
//   day          equity   r      benchmark  b      exposure  leverage
//   2026-01-29   1100     +0.1   102        +0.02  2200      2
//   2026-01-30    990     −0.1    99.96     −0.02   495      0.5
//   2026-02-02   1089     +0.1   101.9592   +0.02     0      0
//   2026-02-03   1197.9   +0.1   101.9592    0     1197.9    1
// Strategy: mean 0.05; deviations .05 −.15 .05 .05; Σdev² 0.03; sample var 0.01; sd 0.1.
// Benchmark: mean 0.005; deviations .015 −.025 .015 −.005; Σdev² 0.0011.
// Σ(ds·db) = .00075 + .00375 + .00075 − .00025 = 0.005.
// ---------------------------------------------------------------------------
const MARKS: DailyMark[] = [
  mark("2026-01-29", "1100", "102", "2200"),
  mark("2026-01-30", "990", "99.96", "495"),
  mark("2026-02-02", "1089", "101.9592", "0"),
  mark("2026-02-03", "1197.9", "101.9592", "1197.9"),
];
const TRADES: TradeSummary[] = [
  trade("2026-01-29T14:30:00Z", "2026-01-31T14:30:00Z", "300"), // 2 days
  trade("2026-01-30T15:00:00Z", "2026-01-31T03:00:00Z", "-100"), // 0.5 day
  trade("2026-02-02T14:30:00Z", "2026-02-03T14:30:00Z", "50"), // 1 day
  trade("2026-02-02T15:00:00Z", "2026-02-03T03:00:00Z", "-150"), // 0.5 day
];
const EXAMPLE = base({
  marks: MARKS,
  closedTrades: TRADES,
  startingBenchmark: d("100"),
  latestTradeAtMs: at("2026-02-03T14:30:00Z"),
});
// 1.1979 ^ (252 / 4) − 1
const EXAMPLE_ANNUALIZED = 1.1979 ** 63 - 1;

test("daily returns: the first against startingCash and the starting benchmark", () => {
  const daily = dailyResults(MARKS, d("1000"), d("100"));
  assert.deepEqual(
    daily.map((r) => r.day),
    MARKS.map((m) => m.day),
  );
  const expected = [
    [0.1, 0.02],
    [-0.1, -0.02],
    [0.1, 0.02],
    [0.1, 0],
  ] as const;
  for (const [i, [r, b]] of expected.entries()) {
    close(daily[i]?.return, r, `r${i + 1}`);
    close(daily[i]?.benchmarkReturn, b, `b${i + 1}`);
  }
  assert.equal(dailyResults(MARKS, d("1000"))[0]?.benchmarkReturn, null, "no starting benchmark: no first-day return");
});

test("returns: cumulative under a year, S&P 500 return over the same span, the difference", () => {
  const s = strategyStatistics(EXAMPLE);
  close(s.totalReturn, 0.1979, "1197.9 / 1000 − 1");
  assert.equal(s.returnLabel, "Cumulative");
  close(s.return, 0.1979, "4 marks < 252: the cumulative return is shown");
  close(s.annualizedReturn, EXAMPLE_ANNUALIZED, "1.1979^63 − 1");
  close(s.sp500Return, 0.019592, "101.9592 / 100 − 1");
  close(s.returnVsSP500, 0.178308, "0.1979 − 0.019592");
});

test("returns: annualized from 252 marks, the benchmark too", () => {
  // 504 marks ending at 1210 from 1000: (1.21)^(252/504) − 1 = 0.1; benchmark 100 → 144: 1.44^0.5 − 1 = 0.2.
  const marks = Array.from({ length: 504 }, (_, i) => {
    const { year, month, day } = addDays({ year: 2024, month: 1, day: 1 }, i);
    const text = `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
    return i === 503 ? mark(text, "1210", "144") : mark(text, String(1000 + (i % 7)), String(100 + (i % 5)));
  });
  const s = strategyStatistics(base({ marks, startingBenchmark: d("100") }));
  assert.equal(s.returnLabel, "Annualized");
  close(s.return, 0.1, "1.21^0.5 − 1");
  close(s.totalReturn, 0.21);
  close(s.sp500Return, 0.2, "1.44^0.5 − 1");
  close(s.returnVsSP500, -0.1, "0.1 − 0.2");
  // 251 marks: still cumulative; 252: annualized with exponent 1 (the same number).
  assert.equal(strategyStatistics(base({ marks: marks.slice(0, 251) })).returnLabel, "Cumulative");
  const year = strategyStatistics(base({ marks: [...marks.slice(0, 251), mark("2024-12-31", "1100")] }));
  assert.equal(year.returnLabel, "Annualized");
  close(year.return, 0.1, "1.1^(252/252) − 1");
});

test("Sharpe and Sortino, risk-free rate 0", () => {
  const s = strategyStatistics(EXAMPLE);
  close(s.sharpe, 0.5 * ROOT252, "mean 0.05 / sd 0.1 × √252");
  // Downside: only −0.1 is below 0: √(0.01 / 4) = 0.05; 0.05 / 0.05 × √252.
  close(s.sortino, ROOT252, "mean 0.05 / downside 0.05 × √252");
});

test("beta, alpha, correlation, Treynor against the S&P 500", () => {
  const s = strategyStatistics(EXAMPLE);
  close(s.beta, 50 / 11, "Σ(ds·db) / Σdb² = 0.005 / 0.0011");
  // 252 × (0.05 − 50/11 × 0.005) = 252 × 0.3/11
  close(s.alpha, 75.6 / 11, "alpha");
  close(s.correlationSP500, 0.005 / Math.sqrt(0.03 * 0.0011), "0.005 / √(0.03 × 0.0011)");
  assert.equal(s.correlationToSP500, s.correlationSP500);
  close(s.treynor, EXAMPLE_ANNUALIZED / (50 / 11), "annualized return / beta");
});

test("without a starting benchmark the first day is not paired", () => {
  // Pairs of days 2-4: s = −.1 .1 .1 (mean 1/30), b = −.02 .02 0 (mean 0).
  // Σ(ds·db) = (−.1333)(−.02) + (.0667)(.02) = 0.004; Σdb² = 0.0008; Σds² = 0.08/3.
  const s = strategyStatistics({ ...EXAMPLE, startingBenchmark: null });
  close(s.beta, 5, "0.004 / 0.0008");
  close(s.alpha, 8.4, "252 × (1/30 − 5 × 0)");
  close(s.correlationSP500, Math.sqrt(3) / 2, "0.004 / √(0.08/3 × 0.0008)");
  close(s.sharpe, 0.5 * ROOT252, "Sharpe does not depend on the benchmark");
  close(s.sp500Return, -0.0004, "101.9592 / 102 − 1: from the first mark");
  close(monthlyResults(MARKS, d("1000"))[0]?.benchmarkReturn, -0.02, "January 102 → 99.96");
});

test("a risk-free rate is taken off daily (rate / 252) and annually", () => {
  // rf 0.0252: 0.0001 a day. Excess: .0999 −.1001 .0999 .0999, mean 0.0499.
  const s = strategyStatistics({ ...EXAMPLE, riskFreeRate: 0.0252 });
  close(s.sharpe, (0.0499 / 0.1) * ROOT252, "sd unchanged by a constant");
  close(s.sortino, (0.0499 / (0.1001 / 2)) * ROOT252, "downside √(0.1001² / 4)");
  close(s.beta, 50 / 11, "beta unchanged");
  close(s.alpha, 252 * (0.0499 - (50 / 11) * (0.005 - 0.0001)), "Jensen's alpha");
  close(s.treynor, (EXAMPLE_ANNUALIZED - 0.0252) / (50 / 11), "(annualized − rf) / beta");
});

test("max drawdown: depth, peak and trough days, calendar days between; Calmar", () => {
  // Peak 1100 on 01-29, trough 990 on 01-30: 110 / 1100 = 0.1. 1089 is only 0.01 down.
  const s = strategyStatistics(EXAMPLE);
  close(s.maxDrawdown, 0.1);
  assert.equal(s.maxDrawdownStartDate, "2026-01-29");
  assert.equal(s.maxDrawdownEndDate, "2026-01-30");
  assert.equal(s.maxDrawdownDays, 1);
  close(s.calmar, EXAMPLE_ANNUALIZED / 0.1, "annualized return / 0.1");
});

test("max drawdown from startingCash starts on the New York creation date; ties keep the first", () => {
  // Created 2026-03-02 03:00 UTC = March 1, 22:00 in New York. 1000 → 950 (0.05) → 1000 (new peak) → 800 (0.2).
  const s = strategyStatistics(
    base({
      createdAtMs: at("2026-03-02T03:00:00Z"),
      nowMs: at("2026-03-10T03:00:00Z"),
      marks: [mark("2026-03-02", "950"), mark("2026-03-03", "800"), mark("2026-03-06", "1000")],
    }),
  );
  close(s.maxDrawdown, 0.2, "200 / 1000");
  assert.equal(s.maxDrawdownStartDate, "2026-03-01", "the peak is the starting cash");
  assert.equal(s.maxDrawdownEndDate, "2026-03-03");
  assert.equal(s.maxDrawdownDays, 2, "peak to trough, not to the recovery on 03-06");
  // 1000 on 04-01 equals the peak (the peak day moves), 900; 1000 again, 900 again: the first 0.1 is kept.
  const tie = strategyStatistics(
    base({
      marks: [
        mark("2026-04-01", "1000"),
        mark("2026-04-02", "900"),
        mark("2026-04-06", "1000"),
        mark("2026-04-07", "900"),
      ],
    }),
  );
  close(tie.maxDrawdown, 0.1);
  assert.deepEqual(
    [tie.maxDrawdownStartDate, tie.maxDrawdownEndDate, tie.maxDrawdownDays],
    ["2026-04-01", "2026-04-02", 1],
  );
});

test("months: returns from the previous month's last mark; winning months", () => {
  // January 1000 → 990: −0.01 (benchmark 100 → 99.96: −0.0004); February 990 → 1197.9: +0.21 (99.96 → 101.9592: +0.02).
  const months = monthlyResults(MARKS, d("1000"), d("100"));
  assert.deepEqual(
    months.map((m) => [m.month, fmt(m.startEquity), fmt(m.endEquity), fmt(m.startBenchmark), fmt(m.endBenchmark)]),
    [
      ["2026-01", "1000", "990", "100", "99.96"],
      ["2026-02", "990", "1197.9", "99.96", "101.9592"],
    ],
  );
  close(months[0]?.return, -0.01);
  close(months[0]?.benchmarkReturn, -0.0004);
  close(months[1]?.return, 0.21);
  close(months[1]?.benchmarkReturn, 0.02);
  const s = strategyStatistics(EXAMPLE);
  assert.equal(s.numMonths, 2);
  assert.equal(s.winMonths, 1);
  assert.equal(s.winMonthsInUI, "1/2");
  close(s.winMonthsRatio, 0.5);
});

test("leverage: exposure / equity per mark, average and maximum", () => {
  // 2200/1100 = 2, 495/990 = 0.5, 0/1089 = 0, 1197.9/1197.9 = 1: mean 3.5 / 4.
  const s = strategyStatistics(EXAMPLE);
  close(s.avgLeverage, 0.875);
  close(s.maxLeverage, 2);
});

test("trades: counts, win rate, sums and averages, profit factor, duration", () => {
  const s = strategyStatistics(EXAMPLE);
  assert.deepEqual([s.numTrades, s.numWinners, s.numLosers], [4, 2, 2]);
  close(s.percentWinTrades, 0.5);
  assert.equal(fmt(s.sumDollarWinners), "350", "300 + 50");
  assert.equal(fmt(s.sumDollarLosers), "-250", "−100 − 150");
  assert.equal(fmt(s.avgWinDollars), "175");
  assert.equal(fmt(s.avgLossDollars), "-125");
  close(s.profitFactor, 1.4, "350 / 250");
  close(s.avgTradeDuration, 1, "(2 + 0.5 + 1 + 0.5) / 4 days");
});

test("age, latest trade", () => {
  const s = strategyStatistics(EXAMPLE);
  assert.equal(s.ageInDays, 5, "5 days 7 hours");
  assert.equal(s.latestTrade, "2026-02-03T14:30:00.000Z");
  const later = strategyStatistics({ ...EXAMPLE, latestTradeAtMs: null });
  assert.equal(later.latestTrade, null);
  assert.equal(strategyStatistics(base({ nowMs: at("2026-01-28T00:00:00Z") })).ageInDays, 0, "never negative");
});

test("no marks: every statistic of the equity is null, trade statistics still count", () => {
  const s = strategyStatistics(base({ closedTrades: TRADES }));
  for (const key of [
    "return",
    "returnLabel",
    "totalReturn",
    "annualizedReturn",
    "winMonthsInUI",
    "winMonthsRatio",
    "maxDrawdown",
    "maxDrawdownDays",
    "maxDrawdownStartDate",
    "maxDrawdownEndDate",
    "correlationSP500",
    "correlationToSP500",
    "sp500Return",
    "returnVsSP500",
    "avgLeverage",
    "maxLeverage",
    "alpha",
    "beta",
    "treynor",
    "sortino",
    "sharpe",
    "calmar",
  ] as const) {
    assert.equal(s[key], null, key);
  }
  assert.deepEqual([s.numMonths, s.winMonths, s.numTrades], [0, 0, 4]);
  assert.deepEqual(monthlyResults([], d("1000")), []);
});

test("one mark: returns and drawdown, but no ratio of daily returns", () => {
  const s = strategyStatistics(base({ marks: [mark("2026-01-29", "950", "101")], startingBenchmark: d("100") }));
  close(s.return, -0.05);
  close(s.sp500Return, 0.01);
  close(s.returnVsSP500, -0.06);
  close(s.maxDrawdown, 0.05);
  assert.deepEqual([s.maxDrawdownStartDate, s.maxDrawdownEndDate, s.maxDrawdownDays], ["2026-01-29", "2026-01-29", 0]);
  assert.deepEqual(
    [s.sharpe, s.sortino, s.beta, s.alpha, s.correlationSP500, s.treynor],
    [null, null, null, null, null, null],
  );
  assert.equal(s.winMonthsInUI, "0/1");
  // Without a starting benchmark the benchmark has no span yet: its return is 0.
  close(strategyStatistics(base({ marks: [mark("2026-01-29", "950", "101")] })).sp500Return, 0);
});

test("no trades, all winners, all losers, a scratch trade", () => {
  const none = strategyStatistics(base({ marks: MARKS }));
  assert.deepEqual(
    [
      none.numTrades,
      none.percentWinTrades,
      none.profitFactor,
      none.avgWinDollars,
      none.avgLossDollars,
      none.avgTradeDuration,
    ],
    [0, null, null, null, null, null],
  );
  assert.deepEqual([fmt(none.sumDollarWinners), fmt(none.sumDollarLosers)], ["0", "0"]);

  // 100 + 100 + 100.01 = 300.01; / 3 = 100.0033333… rounded to 8 places.
  const winners = strategyStatistics(
    base({
      closedTrades: [
        trade("2026-01-29T14:30:00Z", "2026-01-29T15:30:00Z", "100"),
        trade("2026-01-29T14:30:00Z", "2026-01-29T15:30:00Z", "100"),
        trade("2026-01-29T14:30:00Z", "2026-01-29T15:30:00Z", "100.01"),
      ],
    }),
  );
  assert.equal(winners.profitFactor, null, "no losers: undefined, not infinite");
  assert.equal(winners.avgLossDollars, null);
  assert.equal(fmt(winners.avgWinDollars), "100.00333333");
  close(winners.percentWinTrades, 1);
  close(winners.avgTradeDuration, 1 / 24, "one hour");

  const losers = strategyStatistics(
    base({ closedTrades: [trade("2026-01-29T14:30:00Z", "2026-01-30T14:30:00Z", "-5")] }),
  );
  close(losers.profitFactor, 0);
  assert.equal(losers.avgWinDollars, null);

  // A trade at exactly 0 is neither a winner nor a loser but is a trade.
  const scratch = strategyStatistics(
    base({ closedTrades: [...TRADES, trade("2026-02-03T14:30:00Z", "2026-02-03T14:30:00Z", "0")] }),
  );
  assert.deepEqual([scratch.numTrades, scratch.numWinners, scratch.numLosers], [5, 2, 2]);
  close(scratch.percentWinTrades, 0.4, "2 / 5");
});

test("flat equity: zero return and drawdown, no Sharpe, Sortino, correlation, Treynor, Calmar", () => {
  const marks = [
    mark("2026-01-29", "1000", "101"),
    mark("2026-01-30", "1000", "99"),
    mark("2026-02-02", "1000", "103"),
  ];
  const s = strategyStatistics(base({ marks, startingBenchmark: d("100") }));
  close(s.return, 0);
  assert.deepEqual(
    [s.maxDrawdown, s.maxDrawdownDays, s.maxDrawdownStartDate, s.maxDrawdownEndDate],
    [0, 0, null, null],
  );
  assert.deepEqual([s.sharpe, s.sortino, s.correlationSP500, s.treynor, s.calmar], [null, null, null, null, null]);
  assert.equal(s.beta, 0, "no co-movement");
  assert.equal(s.alpha, 0);
  assert.deepEqual([s.winMonths, s.winMonthsInUI], [0, "0/2"]);
  // A flat benchmark: no beta, alpha or correlation.
  const flatBenchmark = strategyStatistics({ ...EXAMPLE, marks: MARKS.map((m) => ({ ...m, benchmark: d("100") })) });
  assert.deepEqual([flatBenchmark.beta, flatBenchmark.alpha, flatBenchmark.correlationSP500], [null, null, null]);
  close(flatBenchmark.sp500Return, 0);
  // Constant positive returns: no deviation, so no Sharpe (and no downside: no Sortino).
  const steady = strategyStatistics(base({ marks: [mark("2026-01-29", "1100"), mark("2026-01-30", "1210")] }));
  assert.deepEqual([steady.sharpe, steady.sortino], [null, null]);
});

test("equity at or below zero: total loss, no ratios of daily returns, leverage of positive marks only", () => {
  const marks = [
    mark("2026-01-29", "500", "101", "1000"),
    mark("2026-01-30", "-100", "102", "300"),
    mark("2026-02-02", "0", "103"),
  ];
  const s = strategyStatistics(base({ marks, startingBenchmark: d("100") }));
  close(s.totalReturn, -1);
  assert.equal(s.annualizedReturn, -1, "everything lost");
  close(s.maxDrawdown, 1.1, "1100 / 1000: deeper than the account");
  assert.deepEqual([s.sharpe, s.sortino, s.beta, s.alpha, s.correlationSP500], [null, null, null, null, null]);
  close(s.avgLeverage, 2, "only the mark with positive equity: 1000 / 500");
  close(s.maxLeverage, 2);
  const months = monthlyResults([mark("2026-01-29", "0"), mark("2026-02-02", "10")], d("1000"));
  assert.equal(months[1]?.return, null, "from zero equity");
});

test("bad input is refused", () => {
  assert.throws(() => strategyStatistics(base({ startingCash: ZERO })), RangeError);
  assert.throws(
    () => strategyStatistics(base({ marks: [mark("2026-01-30", "1"), mark("2026-01-29", "1")] })),
    RangeError,
  );
  assert.throws(
    () => strategyStatistics(base({ marks: [mark("2026-01-30", "1"), mark("2026-01-30", "1")] })),
    RangeError,
  );
  assert.throws(() => monthlyResults([mark("2026-01-30", "1"), mark("2026-01-29", "1")], d("1000")), RangeError);
});

// ---------------------------------------------------------------------------
// Reference: an independent, naive float computation of every formula on a fixed
// pseudo-random series, compared with a relative tolerance of 1e-9.
// ---------------------------------------------------------------------------

/** Weekdays from 2026-03-02, equity, benchmark and exposure from a fixed linear congruential sequence. */
function fixedSeries(length: number): DailyMark[] {
  let seed = 20260302;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const marks: DailyMark[] = [];
  let date = { year: 2026, month: 3, day: 2 };
  let equity = 100_000;
  let benchmark = 500;
  while (marks.length < length) {
    const weekday = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
    if (weekday !== 0 && weekday !== 6) {
      const market = (next() - 0.48) * 0.03;
      benchmark = Math.round(benchmark * (1 + market) * 100) / 100;
      equity = Math.round(equity * (1 + 1.3 * market + (next() - 0.5) * 0.02) * 100) / 100;
      const exposure = Math.round(equity * 3 * next() * 100) / 100;
      const day = `${date.year}-${String(date.month).padStart(2, "0")}-${String(date.day).padStart(2, "0")}`;
      marks.push(mark(day, equity.toFixed(2), benchmark.toFixed(2), exposure.toFixed(2)));
    }
    date = addDays(date, 1);
  }
  return marks;
}

function naive(marks: DailyMark[], startingCash: number, startingBenchmark: number | null, rf: number) {
  const num = (x: Decimal) => Number.parseFloat(formatDecimal(x));
  const n = marks.length;
  const e = [startingCash, ...marks.map((m) => num(m.equity))];
  const bRaw = marks.map((m) => num(m.benchmark));
  const b = [startingBenchmark ?? (bRaw[0] as number), ...bRaw];
  const get = (xs: number[], i: number) => xs[i] as number;
  const r: number[] = [];
  for (let i = 1; i <= n; i++) r.push(get(e, i) / get(e, i - 1) - 1);
  const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
  const avg = (xs: number[]) => sum(xs) / xs.length;
  const rfd = rf / 252;
  const m = avg(r);
  const sd = Math.sqrt(sum(r.map((x) => (x - m) ** 2)) / (n - 1));
  const sharpe = ((m - rfd) / sd) * Math.sqrt(252);
  const downside = Math.sqrt(sum(r.map((x) => Math.min(x - rfd, 0) ** 2)) / n);
  const sortino = ((m - rfd) / downside) * Math.sqrt(252);
  // Pairs: day 1 only with a starting benchmark.
  const s: number[] = [];
  const bm: number[] = [];
  for (let i = startingBenchmark === null ? 2 : 1; i <= n; i++) {
    s.push(get(r, i - 1));
    bm.push(get(b, i) / get(b, i - 1) - 1);
  }
  const ms = avg(s);
  const mb = avg(bm);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  s.forEach((x, i) => {
    sxy += (x - ms) * (get(bm, i) - mb);
    sxx += (x - ms) ** 2;
    syy += (get(bm, i) - mb) ** 2;
  });
  const beta = sxy / syy;
  const correlation = sxy / Math.sqrt(sxx * syy);
  const alpha = 252 * (ms - rfd - beta * (mb - rfd));
  const total = get(e, n) / startingCash - 1;
  const annualized = (get(e, n) / startingCash) ** (252 / n) - 1;
  const sp500 = get(b, n) / get(b, 0) - 1;
  // Drawdown by brute force: every pair (peak i ≤ trough j).
  let mdd = 0;
  let trough = -1;
  for (let j = 0; j <= n; j++) {
    for (let i = 0; i <= j; i++) {
      const depth = (get(e, i) - get(e, j)) / get(e, i);
      if (depth > mdd) {
        mdd = depth;
        trough = j;
      }
    }
  }
  let peak = 0;
  for (let i = 0; i <= trough; i++) if (get(e, i) >= get(e, peak)) peak = i;
  const dayOf = (i: number) => (i === 0 ? null : (marks[i - 1] as DailyMark).day);
  const months = new Map<string, number>();
  for (const mk of marks) months.set(mk.day.slice(0, 7), num(mk.equity));
  let previous = startingCash;
  let wins = 0;
  for (const end of months.values()) {
    if (end / previous - 1 > 0) wins++;
    previous = end;
  }
  const leverage = marks.map((mk) => num(mk.exposure) / num(mk.equity));
  return {
    sharpe,
    sortino,
    beta,
    alpha,
    correlation,
    total,
    annualized,
    sp500,
    mdd,
    peakDay: dayOf(peak),
    troughDay: dayOf(trough),
    calmar: annualized / mdd,
    treynor: (annualized - rf) / beta,
    months: months.size,
    wins,
    avgLeverage: avg(leverage),
    maxLeverage: Math.max(...leverage),
  };
}

for (const [length, startingBenchmark, rf] of [
  [60, 498, 0.03],
  [60, null, 0],
  [300, 495.5, 0.045],
] as const) {
  test(`reference computation: ${length} marks, starting benchmark ${startingBenchmark}, risk-free ${rf}`, () => {
    const marks = fixedSeries(length);
    const input = base({
      startingCash: d("100000"),
      createdAtMs: at("2026-03-02T13:00:00Z"),
      marks,
      startingBenchmark: startingBenchmark === null ? null : d(startingBenchmark),
      riskFreeRate: rf,
    });
    const s = strategyStatistics(input);
    const ref = naive(marks, 100_000, startingBenchmark, rf);
    const tol = 1e-9;
    close(s.sharpe, ref.sharpe, "sharpe", tol);
    close(s.sortino, ref.sortino, "sortino", tol);
    close(s.beta, ref.beta, "beta", tol);
    close(s.alpha, ref.alpha, "alpha", tol);
    close(s.correlationSP500, ref.correlation, "correlation", tol);
    close(s.totalReturn, ref.total, "total return", tol);
    close(s.annualizedReturn, ref.annualized, "annualized return", tol);
    close(s.return, length >= 252 ? ref.annualized : ref.total, "return", tol);
    assert.equal(s.returnLabel, length >= 252 ? "Annualized" : "Cumulative");
    const sp500 = length >= 252 ? (1 + ref.sp500) ** (252 / length) - 1 : ref.sp500;
    close(s.sp500Return, sp500, "S&P 500 return", tol);
    close(s.returnVsSP500, (length >= 252 ? ref.annualized : ref.total) - sp500, "return vs S&P 500", tol);
    close(s.maxDrawdown, ref.mdd, "max drawdown", tol);
    assert.equal(s.maxDrawdownStartDate, ref.peakDay ?? "2026-03-02");
    assert.equal(s.maxDrawdownEndDate, ref.troughDay);
    close(s.calmar, ref.calmar, "calmar", tol);
    close(s.treynor, ref.treynor, "treynor", tol);
    assert.equal(s.numMonths, ref.months);
    assert.equal(s.winMonths, ref.wins);
    close(s.avgLeverage, ref.avgLeverage, "average leverage", tol);
    close(s.maxLeverage, ref.maxLeverage, "max leverage", tol);
    assert.ok(ref.mdd > 0 && ref.months >= 3, "the series has a drawdown and spans months");
  });
}

// ---------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------

const cents = (n: number) => mulInteger(d("0.01"), n);

/** Marks on increasing days (gaps of 1-40 days, so months are crossed and skipped) with the given equities. */
const marksArbitrary = (minEquityCents: number) =>
  fc
    .array(
      fc.record({
        gap: fc.integer({ min: 1, max: 40 }),
        equity: fc.integer({ min: minEquityCents, max: 1_000_000_000 }),
        benchmark: fc.integer({ min: 100_000, max: 10_000_000 }),
      }),
      { maxLength: 80 },
    )
    .map((rows) => {
      let date = { year: 2025, month: 12, day: 20 };
      return rows.map((row): DailyMark => {
        date = addDays(date, row.gap);
        const day = `${date.year}-${String(date.month).padStart(2, "0")}-${String(date.day).padStart(2, "0")}`;
        return { day, equity: cents(row.equity), benchmark: cents(row.benchmark), exposure: ZERO };
      });
    });

test("property: max drawdown lies in [0, 1] for equity that stays at or above zero, peak before trough", () => {
  fc.assert(
    fc.property(marksArbitrary(0), fc.integer({ min: 1, max: 1_000_000_000 }), (marks, cash) => {
      const s = strategyStatistics(base({ startingCash: cents(cash), createdAtMs: at("2025-12-20T15:00:00Z"), marks }));
      if (marks.length === 0) return s.maxDrawdown === null;
      const depth = s.maxDrawdown as number;
      assert.ok(depth >= 0 && depth <= 1, `depth ${depth}`);
      if (depth === 0) return s.maxDrawdownStartDate === null && s.maxDrawdownDays === 0;
      assert.ok((s.maxDrawdownStartDate as string) <= (s.maxDrawdownEndDate as string));
      return (s.maxDrawdownDays as number) >= 0;
    }),
  );
});

test("property: win counts and sums add up", () => {
  const tradeArbitrary = fc.record({
    profit: fc.integer({ min: -1_000_000, max: 1_000_000 }),
    hours: fc.integer({ min: 0, max: 1000 }),
  });
  fc.assert(
    fc.property(fc.array(tradeArbitrary, { maxLength: 50 }), (rows) => {
      const trades = rows.map((t) => ({ openedAtMs: 0, closedAtMs: t.hours * 3_600_000, profit: cents(t.profit) }));
      const s = strategyStatistics(base({ closedTrades: trades }));
      const scratches = rows.filter((t) => t.profit === 0).length;
      assert.equal(s.numWinners + s.numLosers + scratches, s.numTrades);
      assert.equal(s.numTrades, rows.length);
      const total = rows.reduce((a, t) => a + t.profit, 0);
      assert.equal(fmt(add(s.sumDollarWinners, s.sumDollarLosers)), fmt(cents(total)));
      assert.ok(s.sumDollarWinners >= 0n && s.sumDollarLosers <= 0n);
      if (rows.length > 0) assert.ok((s.percentWinTrades as number) >= 0 && (s.percentWinTrades as number) <= 1);
      assert.ok(s.winMonths <= s.numMonths);
    }),
  );
});

test("property: compounding the monthly returns reproduces the total return (strategy and benchmark)", () => {
  // Equity from $1,000 to $10M: a product of month ratios up to 10^4 keeps float error far below 1e-9.
  fc.assert(
    fc.property(marksArbitrary(100_000), fc.integer({ min: 100_000, max: 1_000_000_000 }), (marks, cash) => {
      const startingCash = cents(cash);
      const s = strategyStatistics(base({ startingCash, marks }));
      const months = monthlyResults(marks, startingCash);
      assert.equal(months.length, s.numMonths);
      if (marks.length === 0) return s.totalReturn === null;
      let growth = 1;
      let benchmarkGrowth = 1;
      months.forEach((m, i) => {
        growth *= 1 + (m.return as number);
        benchmarkGrowth *= 1 + (m.benchmarkReturn as number);
        if (i > 0) assert.equal(m.startEquity, months[i - 1]?.endEquity);
      });
      close(growth - 1, s.totalReturn as number, "strategy", 1e-9);
      close(benchmarkGrowth - 1, s.sp500Return as number, "benchmark", 1e-9);
      assert.equal(s.winMonths, months.filter((m) => m.endEquity > m.startEquity).length);
      return true;
    }),
  );
});
