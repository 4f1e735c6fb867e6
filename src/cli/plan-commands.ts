import { parseDateTime } from "../core/datetime.js";
import { dollarsOf } from "../core/money.js";
import { createPlan, FEE_POLICIES, PLAN_KINDS, setAutotradeFeePolicy, subscribeToPlan } from "../services/plans.js";
import type { CliCommand } from "./commands.js";
import { optionalId, required } from "./options.js";
import { UsageError } from "./usage-error.js";

/** Licence plans: creating them, subscribing people, and a site's AutoTrading fee policy. */

const str = { type: "string" } as const;

function flag(options: Readonly<Record<string, string | undefined>>, name: string): boolean | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false") throw new UsageError(`--${name} is true or false`);
  return value === "true";
}

export const PLAN_COMMANDS: readonly CliCommand[] = [
  {
    noun: "plan",
    verb: "create",
    synopsis: `plan create --license-type NAME --license-type-id N --kind ${PLAN_KINDS.join("|")} --monthly DOLLARS [--site WHITE_LABEL_SITE_ID] [--recurring true|false]`,
    options: { "license-type": str, "license-type-id": str, kind: str, monthly: str, site: str, recurring: str },
    async run(runtime, o) {
      const licenseTypeId = optionalId(o, "license-type-id");
      if (licenseTypeId === undefined) throw new UsageError("--license-type-id is required");
      const plan = await createPlan(runtime, {
        licenseType: required(o, "license-type"),
        licenseTypeId,
        kind: required(o, "kind"),
        monthly: required(o, "monthly"),
        siteId: optionalId(o, "site"),
        isRecurring: flag(o, "recurring") ?? true,
      });
      return { json: { Id: plan.id }, text: `Created plan ${plan.id}` };
    },
  },
  {
    noun: "plan",
    verb: "subscribe",
    synopsis:
      "plan subscribe --person PERSON_ID --plan PLAN_ID [--months N | --until ISO8601] [--recurring true|false]   (neither term: open-ended when recurring, else one month)",
    options: { person: str, plan: str, months: str, until: str, recurring: str },
    async run(runtime, o) {
      const personId = optionalId(o, "person");
      const planId = optionalId(o, "plan");
      if (personId === undefined) throw new UsageError("--person is required");
      if (planId === undefined) throw new UsageError("--plan is required");
      let until: Date | undefined;
      if (o.until !== undefined) {
        const parsed = parseDateTime(o.until);
        if (!parsed) throw new UsageError(`--until is not an ISO 8601 time such as 2027-12-31T00:00:00Z: ${o.until}`);
        until = parsed;
      }
      const started = await subscribeToPlan(runtime, {
        personId,
        planId,
        months: optionalId(o, "months"),
        until,
        isRecurring: flag(o, "recurring"),
      });
      const endDate = started.endedAt?.toISOString() ?? null;
      return {
        json: {
          Id: started.id,
          PersonId: personId,
          PlanId: planId,
          StartDate: started.startedAt.toISOString(),
          EndDate: endDate,
          IsRecurring: started.isRecurring,
          Cost: dollarsOf(started.costCents),
        },
        text: `Person ${personId} subscribed to plan ${planId} (subscription ${started.id}) until ${endDate ?? "stopped"}`,
      };
    },
  },
  {
    noun: "plan",
    verb: "fee-policy",
    synopsis: `plan fee-policy --site WHITE_LABEL_SITE_ID --policy ${FEE_POLICIES.join("|")}   (who pays the site's customers' AutoTrading licence)`,
    options: { site: str, policy: str },
    async run(runtime, o) {
      const siteId = optionalId(o, "site");
      if (siteId === undefined) throw new UsageError("--site is required");
      const policy = required(o, "policy");
      await setAutotradeFeePolicy(runtime, siteId, policy);
      return {
        json: { WhiteLabelSiteId: siteId, AutotradeFeePolicy: policy },
        text: `Site ${siteId}: ${policy}`,
      };
    },
  },
];
