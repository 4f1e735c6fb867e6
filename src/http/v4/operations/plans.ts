import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { dollarsOf } from "../../../core/money.js";
import { autotradePlans, type PlanSubscription, planSubscriptionsOf } from "../../../services/plan-reads.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { AutotradePlansRecord, PlanSubscriptionRecord } from "../records.js";
import { Id } from "../schemas.js";

/** Licence plans: a person's investor and manager plan subscriptions, a site's AutoTrading plans. */

const planSubscriptionsInput = Type.Object({
  PersonId: Id(),
  ActiveOnly: Type.Optional(Type.Boolean({ description: "true (default): live plans only; false: full history" })),
});

const planSubscriptionRecord = (s: PlanSubscription) => ({
  Id: s.id,
  PersonId: s.personId,
  LicenseType: s.licenseType,
  LicenseTypeId: s.licenseTypeId,
  StartDate: s.startDate,
  EndDate: s.endDate,
  IsRecurring: s.isRecurring,
  Cost: dollarsOf(s.costCents),
});

const planSubscriptions = (id: string, kind: "investor" | "manager") =>
  defineOperation({
    id,
    method: "GET",
    path: `/General/${id}`,
    servers: ["WL", "GEN", "GEO"],
    summary: `The person's ${kind} plan subscriptions, oldest first by default. The person and their administrators only.`,
    input: planSubscriptionsInput,
    result: PlanSubscriptionRecord,
    permission: anyCaller,
    paginated: true,
    example: { PersonId: EXAMPLE.customerId, ActiveOnly: false },
    handler: async (ctx, input, page) => {
      const result = await planSubscriptionsOf(ctx, input.PersonId, kind, input.ActiveOnly ?? true, page);
      return { ...result, items: result.items.map(planSubscriptionRecord) };
    },
  });

export const planOperations = [
  planSubscriptions("GetInvestorPlanSubscriptions", "investor"),
  planSubscriptions("GetManagerPlanSubscriptions", "manager"),
  defineOperation({
    id: "GetAutotradePlans",
    method: "GET",
    path: "/Autotrade/GetAutotradePlans",
    servers: ["WL"],
    summary:
      "The AutoTrading licence plans open to the site's customers (the site's own and the service-wide ones) and the site's fee policy: who pays the licence. Members of the site (service admins name it).",
    input: Type.Object({ WhiteLabelSiteId: Type.Optional(Id({ description: "Service admin keys only" })) }),
    result: AutotradePlansRecord,
    permission: anyCaller,
    paginated: false,
    example: { WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input) => {
      const plans = await autotradePlans(ctx, input.WhiteLabelSiteId);
      return [
        {
          WhiteLabelSiteId: plans.whiteLabelSiteId,
          AutotradeFeePolicy: plans.feePolicy,
          Plans: plans.plans.map((plan) => ({
            Id: plan.id,
            WhiteLabelSiteId: plan.whiteLabelSiteId,
            LicenseType: plan.licenseType,
            LicenseTypeId: plan.licenseTypeId,
            MonthlyCost: dollarsOf(plan.monthlyCostCents),
            IsRecurring: plan.isRecurring,
          })),
        },
      ];
    },
  }),
];
