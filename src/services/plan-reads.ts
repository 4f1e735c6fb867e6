import { mayReadPrivate } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import type { AutotradeFeePolicy, PlanKind } from "../store/schema.js";
import { memberOf, personsWithSites } from "./person-view.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { actingSite } from "./site-customer.js";

/** Reading licence plans: a person's plan subscriptions, and a site's AutoTrading plans and fee policy. */

export interface PlanSubscription {
  readonly id: number;
  readonly personId: number;
  readonly licenseType: string;
  readonly licenseTypeId: number;
  readonly startDate: Date;
  readonly endDate: Date | null;
  readonly isRecurring: boolean;
  readonly costCents: number;
}

/**
 * The person's subscriptions to plans of one kind, oldest first by default;
 * live ones only unless `activeOnly` is false. Private: the person and their
 * administrators only.
 */
export async function planSubscriptionsOf(
  ctx: RequestContext,
  personId: number,
  kind: PlanKind,
  activeOnly: boolean,
  page: PageRequest,
): Promise<Page<PlanSubscription>> {
  const db = dbOf(ctx);
  const person = await personsWithSites(db).where("p.id", "=", personId).executeTakeFirst();
  if (!person) throw refuse("NotFound", { field: "PersonId", message: `No person ${personId}` });
  if (!mayReadPrivate(ctx.caller, memberOf(person))) {
    throw refuse("Forbidden", { field: "PersonId", message: "Only the person and their administrators" });
  }
  const now = ctx.clock.nowMs();
  let query = db
    .selectFrom("plan_subscriptions as ps")
    .innerJoin("license_plans as lp", "lp.id", "ps.plan_id")
    .select([
      "ps.id",
      "ps.person_id",
      "ps.started_at",
      "ps.ended_at",
      "ps.is_recurring",
      "ps.cost_cents",
      "lp.license_type",
      "lp.license_type_id",
    ])
    .where("ps.person_id", "=", personId)
    .where("lp.kind", "=", kind);
  if (activeOnly) {
    query = query
      .where("ps.started_at", "<=", now)
      .where((eb) => eb.or([eb("ps.ended_at", "is", null), eb("ps.ended_at", ">", now)]));
  }
  const result = await fetchPage(query, ["ps.id"], (row) => [row.id], page);
  return {
    ...result,
    items: result.items.map((row) => ({
      id: row.id,
      personId: row.person_id,
      licenseType: row.license_type,
      licenseTypeId: row.license_type_id,
      startDate: new Date(row.started_at),
      endDate: row.ended_at === null ? null : new Date(row.ended_at),
      isRecurring: row.is_recurring === 1,
      costCents: row.cost_cents,
    })),
  };
}

export interface AutotradePlans {
  readonly whiteLabelSiteId: number;
  readonly feePolicy: AutotradeFeePolicy;
  readonly plans: readonly {
    readonly id: number;
    /** Null for a service-wide plan. */
    readonly whiteLabelSiteId: number | null;
    readonly licenseType: string;
    readonly licenseTypeId: number;
    readonly monthlyCostCents: number;
    readonly isRecurring: boolean;
  }[];
}

/** The AutoTrading licence plans open to the site's customers (the site's and the service-wide ones) and who pays. */
export async function autotradePlans(
  ctx: RequestContext,
  requestedSiteId: number | undefined,
): Promise<AutotradePlans> {
  const db = dbOf(ctx);
  const siteId = await actingSite(db, ctx, requestedSiteId);
  const [site, plans] = await Promise.all([
    db.selectFrom("sites").select("autotrade_fee_policy").where("id", "=", siteId).executeTakeFirstOrThrow(),
    db
      .selectFrom("license_plans")
      .selectAll()
      .where("kind", "=", "autotrade")
      .where((eb) => eb.or([eb("site_id", "=", siteId), eb("site_id", "is", null)]))
      .orderBy("id")
      .execute(),
  ]);
  return {
    whiteLabelSiteId: siteId,
    feePolicy: site.autotrade_fee_policy,
    plans: plans.map((plan) => ({
      id: plan.id,
      whiteLabelSiteId: plan.site_id,
      licenseType: plan.license_type,
      licenseTypeId: plan.license_type_id,
      monthlyCostCents: plan.monthly_cost_cents,
      isRecurring: plan.is_recurring === 1,
    })),
  };
}
