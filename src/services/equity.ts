import { planCommissionsOf } from "../core/commissions.js";
import { add, storedDecimal, sub, ZERO } from "../core/decimal.js";
import type { DailyMark } from "../core/statistics.js";
import { planNamed, viewableStrategy } from "./closed-trades.js";
import type { RequestContext } from "./runtime.js";
import { MODEL_ACCOUNT_PLAN } from "./trading.js";

/**
 * A strategy's daily equity series, after the commissions of a plan and
 * without any: the model account pays the Default plan, so its marks plus the
 * commissions paid up to them give the series without commissions, and the
 * series under another plan subtracts what the fills up to each mark would
 * have cost under it (kept as running totals, so no fill is read).
 */
export interface EquitySeries {
  readonly strategy: Awaited<ReturnType<typeof viewableStrategy>>;
  /** Marks after the plan's commissions. */
  readonly marks: readonly DailyMark[];
  /** The same marks without commissions. */
  readonly raw: readonly DailyMark[];
}

export async function equitySeries(
  ctx: RequestContext,
  strategyId: number,
  planName: string | undefined,
): Promise<EquitySeries> {
  const plan = planNamed(planName);
  const strategy = await viewableStrategy(ctx, strategyId);
  const rows = await ctx.storage.db
    .selectFrom("equity_marks")
    .select(["day", "equity", "commissions_paid", "plan_commissions", "benchmark", "exposure"])
    .where("strategy_id", "=", strategyId)
    .orderBy("day")
    .execute();
  const marks: DailyMark[] = [];
  const raw: DailyMark[] = [];
  // Marks are checked when written (src/core/marks.ts): their text is read as it is.
  for (const row of rows) {
    const withoutCommissions = add(storedDecimal(row.equity), storedDecimal(row.commissions_paid));
    const base = { day: row.day, benchmark: storedDecimal(row.benchmark), exposure: storedDecimal(row.exposure) };
    raw.push({ ...base, equity: withoutCommissions });
    // The model account's own plan: the marks as they were, commissions as it paid them.
    const equity =
      plan === MODEL_ACCOUNT_PLAN
        ? storedDecimal(row.equity)
        : sub(withoutCommissions, planCommissionsOf(row.plan_commissions)[plan.name] ?? ZERO);
    marks.push({ ...base, equity });
  }
  return { strategy, marks, raw };
}
