import { type CommissionPlan, commissionPlan } from "../core/commissions.js";
import { type Decimal, sub, ZERO } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { TradeRecord } from "../core/trades.js";
import { keyedReads } from "../store/keyed-reads.js";
import { strategyRowsById } from "../store/strategy-rows.js";
import { tradeOfRow } from "../store/trading-state.js";
import { maySeeStrategy, noStrategy } from "./order-access.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * A strategy's record: who may read it, and its closed trades priced with a
 * commission plan. A public strategy's record is open to every caller; a
 * private one's to those who may read its orders and trades (./order-access.ts):
 * to the others it does not exist (404).
 */
export async function viewableStrategy(ctx: RequestContext, strategyId: number, field = "StrategyId") {
  const strategy = await keyedReads(ctx.storage, strategyRowsById).read(dbOf(ctx), strategyId);
  if (!strategy || !(await maySeeStrategy(ctx, strategy))) throw noStrategy(strategyId, field);
  return strategy;
}

/** A commission plan by name (Default when none is named); an unknown name is refused. */
export function planNamed(name: string | undefined): CommissionPlan {
  const plan = commissionPlan(name ?? "Default");
  if (!plan) {
    throw refuse("InvalidValue", {
      field: "CommissionPlan",
      message: "CommissionPlan must be Default, Institutional or None",
    });
  }
  return plan;
}

export interface ClosedTrade {
  readonly trade: TradeRecord;
  /** Commissions of the trade's fills under the requested plan, in dollars. */
  readonly commission: Decimal;
  /** Realized profit less those commissions. */
  readonly profit: Decimal;
}

/** GetStrategyHistoricalClosedTrades: the strategy's closed trades, oldest first, priced with the plan. */
export async function closedTrades(
  ctx: RequestContext,
  strategyId: number,
  planName: string | undefined,
  window: { startMs?: number | undefined; endMs?: number | undefined } = {},
): Promise<ClosedTrade[]> {
  const plan = planNamed(planName);
  await viewableStrategy(ctx, strategyId);
  let query = dbOf(ctx)
    .selectFrom("trades")
    .selectAll()
    .where("strategy_id", "=", strategyId)
    .where("closed_at", "is not", null);
  if (window.startMs !== undefined) query = query.where("closed_at", ">=", window.startMs);
  if (window.endMs !== undefined) query = query.where("closed_at", "<", window.endMs);
  const rows = await query.orderBy("closed_at").orderBy("id").execute();
  return rows.map((row) => {
    const trade = tradeOfRow(row);
    const fee = trade.planCommissions[plan.name] ?? ZERO;
    return { trade, commission: fee, profit: sub(trade.realized, fee) };
  });
}
