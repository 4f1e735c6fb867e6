/**
 * The performance statistics of a strategy (StrategyDetails), computed from its
 * daily closing marks and its closed trades. Pure: no clock, no I/O. Money stays
 * exact (Decimal); ratios are JS numbers, and returns are fractions (0.1234 is
 * 12.34 %). A statistic that is undefined for the data (no marks, no trades, zero
 * variance...) is null, never NaN or Infinity. Every definition is in
 * docs/statistics.md.
 */
import { localDate } from "./calendar.js";
import { add, type Decimal, div, fromInteger, neg, ZERO } from "./decimal.js";

/** Trading days per year: annualizes daily figures and sets the exponent of annualized returns. */
export const TRADING_DAYS_PER_YEAR = 252;
/** Annual risk-free rate used when the input names none. */
export const DEFAULT_RISK_FREE_RATE = 0;
/** From this many marks (a year of trading days) Return is annualized; below it, cumulative. */
export const ANNUALIZE_FROM_MARKS = TRADING_DAYS_PER_YEAR;

const DAY_MS = 86_400_000;
const NEW_YORK = "America/New_York";

export interface DailyMark {
  /** The trading day (New York date) YYYY-MM-DD; marks are in ascending day order, one per day. */
  readonly day: string;
  /** Model account equity at the day's close, dollars, after the commissions it paid. */
  readonly equity: Decimal;
  /** The S&P 500 proxy's price at the same close. */
  readonly benchmark: Decimal;
  /** Gross market exposure at the close (sum of |position value| in dollars), for leverage = exposure / equity. */
  readonly exposure: Decimal;
}

export interface TradeSummary {
  readonly openedAtMs: number;
  readonly closedAtMs: number;
  /** Profit of the closed trade in dollars, after its commissions. */
  readonly profit: Decimal;
}

export interface StatisticsInput {
  /** Equity at the start (positive): the base of every return and the first drawdown peak. */
  readonly startingCash: Decimal;
  readonly createdAtMs: number;
  readonly nowMs: number;
  readonly marks: readonly DailyMark[];
  /** The closed trades, or their totals. */
  readonly closedTrades: readonly TradeSummary[] | TradeTotals;
  /** Time of the latest fill, or null. */
  readonly latestTradeAtMs: number | null;
  /**
   * The S&P 500 proxy's price when the strategy started, paired with startingCash. Without
   * it the benchmark starts at the first mark: the first day has no benchmark return.
   */
  readonly startingBenchmark?: Decimal | null;
  /** Annual risk-free rate (fraction) for Sharpe, Sortino, alpha and Treynor; default DEFAULT_RISK_FREE_RATE. */
  readonly riskFreeRate?: number;
}

export type ReturnLabel = "Cumulative" | "Annualized";

/** One field per StrategyDetails statistic (camelCase; the HTTP layer maps the names), plus two extras. */
export interface StrategyStatistics {
  /** totalReturn while the record is shorter than a year of marks, else annualizedReturn. */
  readonly return: number | null;
  readonly returnLabel: ReturnLabel | null;
  /** Extra: last equity / startingCash − 1. */
  readonly totalReturn: number | null;
  /** Extra: the total return compounded to a year of 252 trading days. */
  readonly annualizedReturn: number | null;
  readonly profitFactor: number | null;
  readonly numTrades: number;
  readonly numWinners: number;
  readonly numLosers: number;
  readonly percentWinTrades: number | null;
  readonly sumDollarWinners: Decimal;
  /** Sum of the losing trades' profits: zero or negative. */
  readonly sumDollarLosers: Decimal;
  readonly numMonths: number;
  /** "winning/all" months, e.g. "7/12". */
  readonly winMonthsInUI: string | null;
  readonly winMonths: number;
  readonly winMonthsRatio: number | null;
  /** Largest fall from a running peak, as a positive fraction of that peak. */
  readonly maxDrawdown: number | null;
  readonly maxDrawdownDays: number | null;
  readonly maxDrawdownStartDate: string | null;
  readonly maxDrawdownEndDate: string | null;
  readonly avgWinDollars: Decimal | null;
  /** Negative (a mean of losses). */
  readonly avgLossDollars: Decimal | null;
  /** Days, fractional. */
  readonly avgTradeDuration: number | null;
  readonly correlationSP500: number | null;
  readonly sp500Return: number | null;
  readonly returnVsSP500: number | null;
  readonly avgLeverage: number | null;
  readonly maxLeverage: number | null;
  readonly correlationToSP500: number | null;
  readonly alpha: number | null;
  readonly beta: number | null;
  readonly treynor: number | null;
  readonly sortino: number | null;
  readonly sharpe: number | null;
  readonly calmar: number | null;
  readonly ageInDays: number;
  /** ISO 8601 UTC with milliseconds. */
  readonly latestTrade: string | null;
}

export interface MonthlyResult {
  /** YYYY-MM. */
  readonly month: string;
  /** Equity at the previous month's last mark (startingCash for the first month). */
  readonly startEquity: Decimal;
  /** Equity at the month's last mark. */
  readonly endEquity: Decimal;
  /** endEquity / startEquity − 1; null when startEquity ≤ 0. */
  readonly return: number | null;
  readonly startBenchmark: Decimal;
  readonly endBenchmark: Decimal;
  /** endBenchmark / startBenchmark − 1; null when startBenchmark ≤ 0. */
  readonly benchmarkReturn: number | null;
}

export interface DailyResult {
  readonly day: string;
  /** This close's equity against the previous close (startingCash for the first); null when that was ≤ 0. */
  readonly return: number | null;
  /** The benchmark's return on the day; null on the first day without a starting benchmark, or when the previous price was ≤ 0. */
  readonly benchmarkReturn: number | null;
}

export interface Drawdown {
  /** Positive fraction of the peak; 0 when equity never fell below a running peak. */
  readonly depth: number;
  /** The peak's day (the strategy's start date when the peak is startingCash); null when depth is 0. */
  readonly startDate: string | null;
  /** The trough's day; null when depth is 0. */
  readonly endDate: string | null;
  /** Calendar days from peak to trough; 0 when depth is 0. */
  readonly days: number;
}

/** (to − from) / from as a number; null when from ≤ 0. The difference is exact, so small moves keep their digits. */
function change(from: Decimal, to: Decimal): number | null {
  if (from <= 0n) return null;
  return finite(Number(to - from) / Number(from));
}

const ratio = (a: Decimal, b: Decimal): number => Number(a) / Number(b);

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** Each day is a real calendar day: marks are checked when written (src/core/marks.ts), not at every reading. */
function checkInput(marks: readonly DailyMark[], startingCash: Decimal): void {
  if (startingCash <= 0n) throw new RangeError("startingCash must be positive");
  let previous = "";
  for (const mark of marks) {
    if (mark.day <= previous) throw new RangeError(`marks out of order at ${mark.day}`);
    previous = mark.day;
  }
}

const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00Z`) / DAY_MS;

function formatDay(ms: number): string {
  const { year, month, day } = localDate(NEW_YORK, ms);
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** Daily returns of the strategy and the benchmark, one per mark. */
export function dailyResults(
  marks: readonly DailyMark[],
  startingCash: Decimal,
  startingBenchmark?: Decimal | null,
): DailyResult[] {
  checkInput(marks, startingCash);
  let equity = startingCash;
  let benchmark = startingBenchmark ?? null;
  return marks.map((mark) => {
    const result = {
      day: mark.day,
      return: change(equity, mark.equity),
      benchmarkReturn: benchmark === null ? null : change(benchmark, mark.benchmark),
    };
    equity = mark.equity;
    benchmark = mark.benchmark;
    return result;
  });
}

/**
 * Calendar months holding at least one mark, each from the previous month's last
 * mark (startingCash, and startingBenchmark or else the first mark's benchmark, for
 * the first month) to its own last mark.
 */
export function monthlyResults(
  marks: readonly DailyMark[],
  startingCash: Decimal,
  startingBenchmark?: Decimal | null,
): MonthlyResult[] {
  checkInput(marks, startingCash);
  const first = marks[0];
  if (!first) return [];
  const results: MonthlyResult[] = [];
  let startEquity = startingCash;
  let startBenchmark = startingBenchmark ?? first.benchmark;
  marks.forEach((mark, i) => {
    const month = mark.day.slice(0, 7);
    const next = marks[i + 1];
    if (next && next.day.slice(0, 7) === month) return;
    results.push({
      month,
      startEquity,
      endEquity: mark.equity,
      return: change(startEquity, mark.equity),
      startBenchmark,
      endBenchmark: mark.benchmark,
      benchmarkReturn: change(startBenchmark, mark.benchmark),
    });
    startEquity = mark.equity;
    startBenchmark = mark.benchmark;
  });
  return results;
}

/**
 * The deepest fall of equity below its running peak (the peak starts at
 * startingCash on the start date). Ties keep the first; the peak's day is the last
 * day equity stood at that peak before the trough.
 */
export function maxDrawdown(marks: readonly DailyMark[], startingCash: Decimal, startDate: string): Drawdown {
  checkInput(marks, startingCash);
  let peak = startingCash;
  let peakDay = startDate;
  // The worst fall as an exact fraction fall / top (top > 0), compared by cross-multiplying.
  let worst = { fall: 0n, top: 1n, start: "", end: "" };
  for (const mark of marks) {
    if (mark.equity >= peak) {
      peak = mark.equity;
      peakDay = mark.day;
      continue;
    }
    const fall = peak - mark.equity;
    if (fall * worst.top > worst.fall * peak) worst = { fall, top: peak, start: peakDay, end: mark.day };
  }
  if (worst.fall === 0n) return { depth: 0, startDate: null, endDate: null, days: 0 };
  return {
    depth: Number(worst.fall) / Number(worst.top),
    startDate: worst.start,
    endDate: worst.end,
    days: dayNumber(worst.end) - dayNumber(worst.start),
  };
}

function mean(xs: readonly number[]): number {
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Sample covariance (n − 1); exactly 0 when either series is constant, so a flat series has no rounding noise. */
function covariance(xs: readonly number[], ys: readonly number[]): number {
  const constant = (zs: readonly number[]) => zs.every((z) => z === zs[0]);
  if (constant(xs) || constant(ys)) return 0;
  const mx = mean(xs);
  const my = mean(ys);
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
  return sum / (xs.length - 1);
}

/** A total return compounded to a year of TRADING_DAYS_PER_YEAR over `days` daily returns; −1 once everything is lost. */
function annualize(total: number, days: number): number | null {
  if (total <= -1) return -1;
  return finite(Math.expm1((TRADING_DAYS_PER_YEAR / days) * Math.log1p(total)));
}

interface RatioStatistics {
  sharpe: number | null;
  sortino: number | null;
  beta: number | null;
  alpha: number | null;
  correlation: number | null;
}

const NO_RATIOS: RatioStatistics = { sharpe: null, sortino: null, beta: null, alpha: null, correlation: null };

function ratioStatistics(daily: readonly DailyResult[], hasStartingBenchmark: boolean, rf: number): RatioStatistics {
  const returns = daily.map((d) => d.return);
  if (!returns.every((r): r is number => r !== null)) return NO_RATIOS;
  const rfDaily = rf / TRADING_DAYS_PER_YEAR;
  const root = Math.sqrt(TRADING_DAYS_PER_YEAR);
  let sharpe: number | null = null;
  let sortino: number | null = null;
  if (returns.length >= 2) {
    const excess = returns.map((r) => r - rfDaily);
    const excessMean = mean(excess);
    const sd = Math.sqrt(covariance(returns, returns));
    if (sd > 0) sharpe = finite((excessMean / sd) * root);
    let downside = 0;
    for (const e of excess) if (e < 0) downside += e * e;
    const dd = Math.sqrt(downside / excess.length);
    if (dd > 0) sortino = finite((excessMean / dd) * root);
  }
  const paired = hasStartingBenchmark ? daily : daily.slice(1);
  const benchmark = paired.map((d) => d.benchmarkReturn);
  if (!benchmark.every((b): b is number => b !== null) || paired.length < 2) {
    return { ...NO_RATIOS, sharpe, sortino };
  }
  const strategy = paired.map((d) => d.return as number);
  const varB = covariance(benchmark, benchmark);
  const varS = covariance(strategy, strategy);
  const cov = covariance(strategy, benchmark);
  const beta = varB > 0 ? finite(cov / varB) : null;
  const alpha =
    beta === null
      ? null
      : finite(TRADING_DAYS_PER_YEAR * (mean(strategy) - rfDaily - beta * (mean(benchmark) - rfDaily)));
  const correlation = varB > 0 && varS > 0 ? finite(Math.max(-1, Math.min(1, cov / Math.sqrt(varS * varB)))) : null;
  return { sharpe, sortino, beta, alpha, correlation };
}

interface TradeStatistics {
  numTrades: number;
  numWinners: number;
  numLosers: number;
  percentWinTrades: number | null;
  sumDollarWinners: Decimal;
  sumDollarLosers: Decimal;
  avgWinDollars: Decimal | null;
  avgLossDollars: Decimal | null;
  profitFactor: number | null;
  avgTradeDuration: number | null;
}

/** What the trade statistics are made of: counts and sums over the closed trades. */
export interface TradeTotals {
  readonly numTrades: number;
  readonly numWinners: number;
  readonly numLosers: number;
  readonly sumDollarWinners: Decimal;
  /** Zero or negative. */
  readonly sumDollarLosers: Decimal;
  /** The trades' durations added up. */
  readonly durationMs: number;
}

/** Winners have profit > 0, losers < 0; a trade at exactly 0 is neither but counts in numTrades. */
export function tradeTotals(trades: readonly TradeSummary[]): TradeTotals {
  let numWinners = 0;
  let numLosers = 0;
  let sumDollarWinners = ZERO;
  let sumDollarLosers = ZERO;
  let durationMs = 0;
  for (const t of trades) {
    if (t.profit > 0n) {
      numWinners++;
      sumDollarWinners = add(sumDollarWinners, t.profit);
    } else if (t.profit < 0n) {
      numLosers++;
      sumDollarLosers = add(sumDollarLosers, t.profit);
    }
    durationMs += t.closedAtMs - t.openedAtMs;
  }
  return { numTrades: trades.length, numWinners, numLosers, sumDollarWinners, sumDollarLosers, durationMs };
}

export function tradeStatistics(trades: readonly TradeSummary[] | TradeTotals): TradeStatistics {
  const { numTrades, numWinners, numLosers, sumDollarWinners, sumDollarLosers, durationMs } = Array.isArray(trades)
    ? tradeTotals(trades)
    : (trades as TradeTotals);
  return {
    numTrades,
    numWinners,
    numLosers,
    percentWinTrades: numTrades > 0 ? numWinners / numTrades : null,
    sumDollarWinners,
    sumDollarLosers,
    avgWinDollars: numWinners > 0 ? div(sumDollarWinners, fromInteger(numWinners)) : null,
    avgLossDollars: numLosers > 0 ? div(sumDollarLosers, fromInteger(numLosers)) : null,
    profitFactor: numLosers > 0 ? ratio(sumDollarWinners, neg(sumDollarLosers)) : null,
    avgTradeDuration: numTrades > 0 ? durationMs / numTrades / DAY_MS : null,
  };
}

/** Whole days from the start to now; never negative. */
export const ageInDays = (createdAtMs: number, nowMs: number): number =>
  Math.max(0, Math.floor((nowMs - createdAtMs) / DAY_MS));

export function strategyStatistics(input: StatisticsInput): StrategyStatistics {
  const { startingCash, marks } = input;
  const startingBenchmark = input.startingBenchmark ?? null;
  const rf = input.riskFreeRate ?? DEFAULT_RISK_FREE_RATE;
  const n = marks.length;
  const last = marks[n - 1];
  const first = marks[0];

  const daily = dailyResults(marks, startingCash, startingBenchmark);
  const months = monthlyResults(marks, startingCash, startingBenchmark);

  const totalReturn = last ? change(startingCash, last.equity) : null;
  const annualizedReturn = totalReturn === null ? null : annualize(totalReturn, n);
  const returnLabel: ReturnLabel | null = n === 0 ? null : n >= ANNUALIZE_FROM_MARKS ? "Annualized" : "Cumulative";
  const shown = returnLabel === "Annualized" ? annualizedReturn : totalReturn;

  const benchmarkTotal = first && last ? change(startingBenchmark ?? first.benchmark, last.benchmark) : null;
  const sp500Return =
    benchmarkTotal === null ? null : returnLabel === "Annualized" ? annualize(benchmarkTotal, n) : benchmarkTotal;
  const returnVsSP500 = shown === null || sp500Return === null ? null : shown - sp500Return;

  const drawdown = n > 0 ? maxDrawdown(marks, startingCash, formatDay(input.createdAtMs)) : null;
  const calmar =
    drawdown && drawdown.depth > 0 && annualizedReturn !== null ? finite(annualizedReturn / drawdown.depth) : null;

  const ratios = ratioStatistics(daily, startingBenchmark !== null, rf);
  const treynor =
    ratios.beta !== null && ratios.beta !== 0 && annualizedReturn !== null
      ? finite((annualizedReturn - rf) / ratios.beta)
      : null;

  const leverages = marks.filter((m) => m.equity > 0n).map((m) => ratio(m.exposure, m.equity));
  const winMonths = months.filter((m) => m.return !== null && m.return > 0).length;

  return {
    return: shown,
    returnLabel,
    totalReturn,
    annualizedReturn,
    ...tradeStatistics(input.closedTrades),
    numMonths: months.length,
    winMonthsInUI: months.length > 0 ? `${winMonths}/${months.length}` : null,
    winMonths,
    winMonthsRatio: months.length > 0 ? winMonths / months.length : null,
    maxDrawdown: drawdown ? drawdown.depth : null,
    maxDrawdownDays: drawdown ? drawdown.days : null,
    maxDrawdownStartDate: drawdown ? drawdown.startDate : null,
    maxDrawdownEndDate: drawdown ? drawdown.endDate : null,
    correlationSP500: ratios.correlation,
    sp500Return,
    returnVsSP500,
    avgLeverage: leverages.length > 0 ? mean(leverages) : null,
    maxLeverage: leverages.length > 0 ? leverages.reduce((a, b) => Math.max(a, b)) : null,
    correlationToSP500: ratios.correlation,
    alpha: ratios.alpha,
    beta: ratios.beta,
    treynor,
    sortino: ratios.sortino,
    sharpe: ratios.sharpe,
    calmar,
    ageInDays: ageInDays(input.createdAtMs, input.nowMs),
    latestTrade: input.latestTradeAtMs === null ? null : new Date(input.latestTradeAtMs).toISOString(),
  };
}
