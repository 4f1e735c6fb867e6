import { commission } from "../core/commissions.js";
import { add, type Decimal, decimal, mul, round, sub, ZERO } from "../core/decimal.js";
import type { DailyMark } from "../core/statistics.js";
import { instrumentOf } from "../store/trading-state.js";
import { planNamed, viewableStrategy } from "./closed-trades.js";
import type { RequestContext } from "./runtime.js";
import { MODEL_ACCOUNT_PLAN } from "./trading.js";

/**
 * A strategy's daily equity series, after the commissions of a plan and
 * without any: the model account pays the Default plan, so its marks plus the
 * commissions paid up to them give the series without commissions, and the
 * series under another plan subtracts that plan's commissions of the fills up
 * to each mark.
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
    .selectAll()
    .where("strategy_id", "=", strategyId)
    .orderBy("day")
    .execute();
  const fills = await ctx.storage.db
    .selectFrom("fills")
    .select(["symbol", "symbol_type", "quantity", "price", "usd_rate", "filled_at"])
    .where("strategy_id", "=", strategyId)
    .orderBy("filled_at")
    .orderBy("id")
    .execute();
  const marks: DailyMark[] = [];
  const raw: DailyMark[] = [];
  let paid = ZERO;
  let next = 0;
  for (const row of rows) {
    for (; next < fills.length && (fills[next]?.filled_at ?? Number.POSITIVE_INFINITY) <= row.marked_at; next++) {
      const fill = fills[next];
      if (!fill) break;
      const instrument = instrumentOf(fill.symbol, fill.symbol_type);
      const fee = commission(plan, instrument, decimal(fill.quantity), decimal(fill.price));
      paid = add(paid, round(mul(fee, decimal(fill.usd_rate)), 2));
    }
    const withoutCommissions: Decimal = add(decimal(row.equity), decimal(row.commissions_paid));
    const base = { day: row.day, benchmark: decimal(row.benchmark), exposure: decimal(row.exposure) };
    raw.push({ ...base, equity: withoutCommissions });
    // The model account's own plan: the marks as they were, commissions as it paid them.
    marks.push({ ...base, equity: plan === MODEL_ACCOUNT_PLAN ? decimal(row.equity) : sub(withoutCommissions, paid) });
  }
  return { strategy, marks, raw };
}
