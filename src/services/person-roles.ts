import { sql } from "kysely";
import type { personsWithSites } from "./person-view.js";

/**
 * Whether people manage and invest, read with them in the same statement (a
 * page of people is one query). A manager owns a strategy that is alive or
 * holds a live manager plan; an investor holds a live real subscription that
 * gives access now (any lane: free, granted, resold or paid directly;
 * simulated and paper ones do not count) or a live investor plan.
 */
export interface PersonRoles {
  readonly is_manager: number;
  readonly is_investor: number;
}

const livePlan = (kind: "manager" | "investor", nowMs: number) =>
  sql`exists (select 1 from plan_subscriptions rp join license_plans rl on rl.id = rp.plan_id
    where rp.person_id = p.id and rl.kind = ${kind} and rp.started_at <= ${nowMs}
    and (rp.ended_at is null or rp.ended_at > ${nowMs}))`;

export function withPersonRoles(query: ReturnType<typeof personsWithSites>, nowMs: number) {
  return query.select([
    sql<number>`case when exists (select 1 from strategies rs where rs.owner_person_id = p.id and rs.is_alive = 1)
      or ${livePlan("manager", nowMs)} then 1 else 0 end`.as("is_manager"),
    sql<number>`case when exists (select 1 from subscriptions rsub where rsub.person_id = p.id and rsub.kind = 'real'
      and (rsub.ended_at is null or rsub.ended_at > ${nowMs}) and (rsub.paid_until is null or rsub.paid_until > ${nowMs}))
      or ${livePlan("investor", nowMs)} then 1 else 0 end`.as("is_investor"),
  ]);
}
