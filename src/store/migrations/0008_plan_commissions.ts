import { type Kysely, type Migration, sql } from "kysely";
import {
  addCommissions,
  commissionsByPlan,
  type PlanCommissions,
  planCommissionsText,
} from "../../core/commissions.js";
import { decimal } from "../../core/decimal.js";
import { instrumentOf } from "../trading-state.js";

/**
 * What every fill would cost under each commission plan, kept as running
 * totals on trades, strategies and equity marks, so a record restates under
 * another plan without reading its fills. Existing records are brought up to
 * date from their fills (the model account's own plan counts what it paid).
 */
export function planCommissionsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const table of ["trades", "strategies", "equity_marks"]) {
        await db.schema
          .alterTable(table)
          .addColumn("plan_commissions", "text", (c) => c.notNull().defaultTo("{}"))
          .execute();
      }
      const fills = await sql<{
        strategy_id: number;
        trade_id: number | null;
        symbol: string;
        symbol_type: string;
        quantity: string;
        price: string;
        usd_rate: string;
        commission: string;
        filled_at: number;
      }>`select strategy_id, trade_id, symbol, symbol_type, quantity, price, usd_rate, commission, filled_at
        from fills order by strategy_id, filled_at, id`.execute(db);
      const marks = await sql<{ strategy_id: number; day: string; marked_at: number }>`
        select strategy_id, day, marked_at from equity_marks order by strategy_id, marked_at`.execute(db);
      const byStrategy = new Map<number, PlanCommissions>();
      const byTrade = new Map<number, PlanCommissions>();
      let next = 0;
      const markTotals: { strategyId: number; day: string; totals: PlanCommissions }[] = [];
      const feesOf = (fill: (typeof fills.rows)[number]) => ({
        ...commissionsByPlan(
          instrumentOf(fill.symbol, fill.symbol_type),
          decimal(fill.quantity),
          decimal(fill.price),
          decimal(fill.usd_rate),
        ),
        Default: decimal(fill.commission),
      });
      const take = (fill: (typeof fills.rows)[number]) => {
        const fees = feesOf(fill);
        byStrategy.set(fill.strategy_id, addCommissions(byStrategy.get(fill.strategy_id) ?? {}, fees));
        if (fill.trade_id !== null) byTrade.set(fill.trade_id, addCommissions(byTrade.get(fill.trade_id) ?? {}, fees));
      };
      for (const mark of marks.rows) {
        for (; next < fills.rows.length; next++) {
          const fill = fills.rows[next];
          if (!fill || fill.strategy_id > mark.strategy_id) break;
          if (fill.strategy_id === mark.strategy_id && fill.filled_at > mark.marked_at) break;
          take(fill);
        }
        markTotals.push({
          strategyId: mark.strategy_id,
          day: mark.day,
          totals: byStrategy.get(mark.strategy_id) ?? {},
        });
      }
      for (; next < fills.rows.length; next++) take(fills.rows[next] as (typeof fills.rows)[number]);
      for (const [id, totals] of byStrategy) {
        await sql`update strategies set plan_commissions = ${planCommissionsText(totals)} where id = ${id}`.execute(db);
      }
      for (const [id, totals] of byTrade) {
        await sql`update trades set plan_commissions = ${planCommissionsText(totals)} where id = ${id}`.execute(db);
      }
      for (const mark of markTotals) {
        await sql`update equity_marks set plan_commissions = ${planCommissionsText(mark.totals)}
          where strategy_id = ${mark.strategyId} and day = ${mark.day}`.execute(db);
      }
    },
  };
}
