import { addMonths } from "../core/billing.js";
import { parseDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { centsOf } from "../core/money.js";
import type { AutotradeFeePolicy, PlanKind } from "../store/schema.js";
import { withTransaction } from "../store/transaction.js";
import type { Runtime } from "./runtime.js";

/**
 * Licence plans as operators set them up: a plan is service-wide or one
 * white-label site's; a person subscribes for a term or open-ended (a
 * recurring plan runs until stopped); a site states who pays its customers'
 * AutoTrading licence.
 */

export const PLAN_KINDS: readonly PlanKind[] = ["investor", "manager", "autotrade"];
export const FEE_POLICIES: readonly AutotradeFeePolicy[] = ["CustomerPays", "SitePays"];
/** A monthly plan cost is at most this many dollars. */
const MAX_MONTHLY_DOLLARS = 1_000_000;

export interface NewPlan {
  readonly siteId?: number | undefined;
  readonly licenseType: string;
  readonly licenseTypeId: number;
  readonly kind: string;
  /** Decimal dollars, as an operator types them. */
  readonly monthly: string;
  readonly isRecurring: boolean;
}

export async function createPlan(runtime: Runtime, input: NewPlan): Promise<{ readonly id: number }> {
  const licenseType = input.licenseType.trim();
  if (licenseType.length < 1 || licenseType.length > 100) {
    throw refuse("InvalidValue", { field: "LicenseType", message: "LicenseType must be 1 to 100 characters" });
  }
  // Stored as a 32-bit integer on both backends.
  if (!Number.isInteger(input.licenseTypeId) || input.licenseTypeId < 1 || input.licenseTypeId > 2_147_483_647) {
    throw refuse("InvalidValue", { field: "LicenseTypeId", message: "LicenseTypeId must be 1 to 2147483647" });
  }
  if (!PLAN_KINDS.includes(input.kind as PlanKind)) {
    throw refuse("InvalidValue", { field: "Kind", message: `Kind is one of ${PLAN_KINDS.join(", ")}` });
  }
  const monthly = parseDecimal(input.monthly);
  const cents = monthly === null ? null : centsOf(monthly);
  if (cents === null || cents < 0 || cents > MAX_MONTHLY_DOLLARS * 100) {
    throw refuse("InvalidValue", {
      field: "Monthly",
      message: `Monthly is a price in dollars from 0 to ${MAX_MONTHLY_DOLLARS}`,
    });
  }
  return withTransaction(runtime, async ({ tx }) => {
    if (input.siteId !== undefined) {
      const site = await tx.selectFrom("sites").select("kind").where("id", "=", input.siteId).executeTakeFirst();
      if (site?.kind !== "whitelabel") {
        throw refuse("NotFound", { field: "WhiteLabelSiteId", message: `No white-label site ${input.siteId}` });
      }
    }
    const row = await tx
      .insertInto("license_plans")
      .values({
        site_id: input.siteId ?? null,
        license_type: licenseType,
        license_type_id: input.licenseTypeId,
        kind: input.kind as PlanKind,
        monthly_cost_cents: cents,
        is_recurring: input.isRecurring ? 1 : 0,
        created_at: runtime.clock.nowMs(),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return { id: row.id };
  });
}

export interface NewPlanSubscription {
  readonly personId: number;
  readonly planId: number;
  /** A term of whole months, or an end date; neither: open-ended when recurring, else one month. */
  readonly months?: number | undefined;
  readonly until?: Date | undefined;
  /** The plan's own when not given. */
  readonly isRecurring?: boolean | undefined;
}

export interface PlanSubscriptionStarted {
  readonly id: number;
  readonly startedAt: Date;
  readonly endedAt: Date | null;
  readonly isRecurring: boolean;
  readonly costCents: number;
}

export async function subscribeToPlan(runtime: Runtime, input: NewPlanSubscription): Promise<PlanSubscriptionStarted> {
  if (input.months !== undefined && input.until !== undefined) {
    throw refuse("InvalidValue", { field: "Months", message: "Give a term in Months or an end date, not both" });
  }
  if (input.months !== undefined && (input.months < 1 || input.months > 120)) {
    throw refuse("InvalidValue", { field: "Months", message: "Months must be 1 to 120" });
  }
  return withTransaction(runtime, async ({ tx }) => {
    const now = runtime.clock.nowMs();
    const plan = await tx.selectFrom("license_plans").selectAll().where("id", "=", input.planId).executeTakeFirst();
    if (!plan) throw refuse("NotFound", { field: "PlanId", message: `No plan ${input.planId}` });
    const person = await tx
      .selectFrom("persons")
      .select(["id", "white_label_site_id"])
      .where("id", "=", input.personId)
      .executeTakeFirst();
    if (!person) throw refuse("NotFound", { field: "PersonId", message: `No person ${input.personId}` });
    // A site's plan is sold to the site's own customers only.
    if (plan.site_id !== null && person.white_label_site_id !== plan.site_id) {
      throw refuse("InvalidValue", {
        field: "PersonId",
        message: `Plan ${plan.id} belongs to site ${plan.site_id}; person ${person.id} is not its customer`,
      });
    }
    if (input.until !== undefined && input.until.getTime() <= now) {
      throw refuse("InvalidValue", { field: "Until", message: "The end date must be in the future" });
    }
    const isRecurring = input.isRecurring ?? plan.is_recurring === 1;
    let endedAt: number | null;
    if (input.until !== undefined) endedAt = input.until.getTime();
    else if (input.months !== undefined) endedAt = addMonths(now, input.months);
    else endedAt = isRecurring ? null : addMonths(now, 1);
    const row = await tx
      .insertInto("plan_subscriptions")
      .values({
        person_id: person.id,
        plan_id: plan.id,
        started_at: now,
        ended_at: endedAt,
        is_recurring: isRecurring ? 1 : 0,
        cost_cents: plan.monthly_cost_cents,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return {
      id: row.id,
      startedAt: new Date(now),
      endedAt: endedAt === null ? null : new Date(endedAt),
      isRecurring,
      costCents: plan.monthly_cost_cents,
    };
  });
}

export async function setAutotradeFeePolicy(runtime: Runtime, siteId: number, policy: string): Promise<void> {
  if (!FEE_POLICIES.includes(policy as AutotradeFeePolicy)) {
    throw refuse("InvalidValue", { field: "Policy", message: `Policy is one of ${FEE_POLICIES.join(", ")}` });
  }
  await withTransaction(runtime, async ({ tx }) => {
    const updated = await tx
      .updateTable("sites")
      .set({ autotrade_fee_policy: policy as AutotradeFeePolicy })
      .where("id", "=", siteId)
      .where("kind", "=", "whitelabel")
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      throw refuse("NotFound", { field: "WhiteLabelSiteId", message: `No white-label site ${siteId}` });
    }
  });
}
