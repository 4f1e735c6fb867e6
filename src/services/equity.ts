import type { CommissionPlan } from "../core/commissions.js";
import { add, type Decimal, decimal, storedDecimal, sub, ZERO } from "../core/decimal.js";
import { type DailyMark, dailyResults, type MonthlyResult, monthlyResults } from "../core/statistics.js";
import { planNamed, viewableStrategy } from "./closed-trades.js";
import { cachedRecord } from "./record-cache.js";
import { recordVersion } from "./record-version.js";
import { dbOf, type RequestContext, type Runtime } from "./runtime.js";
import { MODEL_ACCOUNT_PLAN } from "./trading.js";

/**
 * A strategy's daily equity series, after the commissions of a plan and
 * without any: the model account pays the Default plan, so its marks plus the
 * commissions paid up to them give the series without commissions, and the
 * series under another plan subtracts what the fills up to each mark would
 * have cost under it (kept as running totals, so no fill is read).
 *
 * The series, and the daily and monthly results made from it, are kept per
 * strategy and plan until a mark is written (record-cache.ts); the access
 * rules are checked at every request first.
 */
export interface EquitySeries {
  readonly strategy: Awaited<ReturnType<typeof viewableStrategy>>;
  /** Marks after the plan's commissions. */
  readonly marks: readonly DailyMark[];
  /** The same marks without commissions. */
  readonly raw: readonly DailyMark[];
  /** When each mark was made (the close it marks), epoch ms. */
  readonly markedAtMs: readonly number[];
}

type Strategy = EquitySeries["strategy"];
type Series = Pick<EquitySeries, "marks" | "raw" | "markedAtMs">;

/** One NYSE close of GetStrategyHistoricalDailyEquity. */
export interface DailyEquity {
  readonly day: string;
  readonly equity: Decimal;
  readonly equityWithoutCommissions: Decimal;
  readonly return: number | null;
  readonly returnWithoutCommissions: number | null;
  readonly benchmark: Decimal;
  readonly benchmarkReturn: number | null;
}

/** One month of GetStrategyHistoricalEquity. */
export interface MonthlyEquity extends MonthlyResult {
  readonly returnWithoutCommissions: number | null;
}

/** The series under a plan at a marks version (the caller has checked access and read the version). */
export function planSeries(runtime: Runtime, strategyId: number, plan: CommissionPlan, marks: number): Promise<Series> {
  return cachedRecord(
    runtime,
    `series:${strategyId}:${plan.name}`,
    String(marks),
    () => readSeries(runtime, strategyId, plan),
    (series) => series.marks.length,
  );
}

async function readSeries(runtime: Runtime, strategyId: number, plan: CommissionPlan): Promise<Series> {
  const rows = await dbOf(runtime)
    .selectFrom("equity_marks")
    .select(["day", "marked_at", "equity", "commissions_paid", "plan_commissions", "benchmark", "exposure"])
    .where("strategy_id", "=", strategyId)
    .orderBy("day")
    .execute();
  const marks: DailyMark[] = [];
  const raw: DailyMark[] = [];
  const markedAtMs: number[] = [];
  for (const row of rows) {
    markedAtMs.push(row.marked_at);
    const marked = storedDecimal(row.equity);
    const withoutCommissions = add(marked, storedDecimal(row.commissions_paid));
    const base = { day: row.day, benchmark: storedDecimal(row.benchmark), exposure: storedDecimal(row.exposure) };
    raw.push({ ...base, equity: withoutCommissions });
    // The model account's own plan: the marks as they were, commissions as it paid them.
    if (plan === MODEL_ACCOUNT_PLAN) {
      marks.push({ ...base, equity: marked });
      continue;
    }
    const fee = (JSON.parse(row.plan_commissions) as Record<string, string>)[plan.name];
    marks.push({ ...base, equity: sub(withoutCommissions, fee === undefined ? ZERO : storedDecimal(fee)) });
  }
  return { marks, raw, markedAtMs };
}

/** The strategy (its record readable by the caller), the plan and its series now. */
async function seriesNow(ctx: RequestContext, strategyId: number, planName: string | undefined) {
  const plan = planNamed(planName);
  // Read side by side (one round trip less on PostgreSQL); nothing kept is read before access is granted.
  const [strategy, version] = await Promise.all([viewableStrategy(ctx, strategyId), recordVersion(ctx, strategyId)]);
  return { strategy, plan, version, series: await planSeries(ctx, strategyId, plan, version.marks) };
}

export async function equitySeries(
  ctx: RequestContext,
  strategyId: number,
  planName: string | undefined,
): Promise<EquitySeries> {
  const { strategy, series } = await seriesNow(ctx, strategyId, planName);
  return { strategy, ...series };
}

/**
 * Results are kept with the starting capital they were computed from: it is
 * the first return's base, and may change until the strategy trades.
 */
const resultsTag = (marks: number, strategy: Strategy) => `${marks}:${strategy.starting_capital}`;

/** GetStrategyHistoricalDailyEquity: every close, after the plan's commissions and without any. */
export async function dailyEquity(
  ctx: RequestContext,
  strategyId: number,
  planName: string | undefined,
): Promise<{ readonly strategy: Strategy; readonly days: readonly DailyEquity[] }> {
  const { strategy, plan, version, series } = await seriesNow(ctx, strategyId, planName);
  const days = await cachedRecord(
    ctx,
    `daily:${strategyId}:${plan.name}`,
    resultsTag(version.marks, strategy),
    async () => {
      const start = decimal(strategy.starting_capital);
      const raw = dailyResults(series.raw, start);
      return dailyResults(series.marks, start).map((day, i) => ({
        day: day.day,
        equity: series.marks[i]?.equity ?? ZERO,
        equityWithoutCommissions: series.raw[i]?.equity ?? ZERO,
        return: day.return,
        returnWithoutCommissions: raw[i]?.return ?? null,
        benchmark: series.marks[i]?.benchmark ?? ZERO,
        benchmarkReturn: day.benchmarkReturn,
      }));
    },
    (computed) => computed.length,
  );
  return { strategy, days };
}

/** GetStrategyHistoricalEquity: each month's result, after the plan's commissions and without any. */
export async function monthlyEquity(
  ctx: RequestContext,
  strategyId: number,
  planName: string | undefined,
): Promise<{ readonly strategy: Strategy; readonly months: readonly MonthlyEquity[] }> {
  const { strategy, plan, version, series } = await seriesNow(ctx, strategyId, planName);
  const months = await cachedRecord(
    ctx,
    `monthly:${strategyId}:${plan.name}`,
    resultsTag(version.marks, strategy),
    async () => {
      const start = decimal(strategy.starting_capital);
      const raw = monthlyResults(series.raw, start);
      return monthlyResults(series.marks, start).map((month, i) => ({
        ...month,
        returnWithoutCommissions: raw[i]?.return ?? null,
      }));
    },
    (computed) => computed.length,
  );
  return { strategy, months };
}
