import { Type } from "@sinclair/typebox";
import { anyCaller, onlyRoles } from "../../../core/access.js";
import { MAX_ACCOUNT_DAYS, MAX_SIMS_PER_CALL, simResults, startSims, stopSim } from "../../../services/sims.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { SimResultRecord, StartSimResultRecord, StopSimResultRecord } from "../records.js";
import { Id } from "../schemas.js";

/** Simulated subscriptions under /Autotrade (API.md 4.6): start, stop and their results. */

const siteAdministrators = onlyRoles("admin", "whitelabel-admin");
const WhiteLabelSiteId = Type.Optional(Id({ description: "Service admin keys only: the site acted on" }));

export const simOperations = [
  defineOperation({
    id: "StartSim",
    method: "POST",
    path: "/Autotrade/StartSim",
    servers: ["WL"],
    summary: `Starts simulated subscriptions of the site's customer to 1 to ${MAX_SIMS_PER_CALL} strategies. Strategies that cannot start are listed in Skipped with a reason; the call does not fail for them. White-label admins (service admins name the site).`,
    input: Type.Object({
      PersonId: Id({ description: "The customer" }),
      StrategyIds: Type.Array(Id(), { minItems: 1, maxItems: MAX_SIMS_PER_CALL }),
      WhiteLabelSiteId,
    }),
    result: StartSimResultRecord,
    permission: siteAdministrators,
    paginated: false,
    example: {
      PersonId: EXAMPLE.customerId,
      StrategyIds: [EXAMPLE.strategyId],
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
    },
    handler: async (ctx, input) => {
      const outcome = await startSims(ctx, {
        personId: input.PersonId,
        strategyIds: input.StrategyIds,
        siteId: input.WhiteLabelSiteId,
      });
      return [
        {
          PersonId: input.PersonId,
          Started: outcome.started.map((s) => ({
            StrategyId: s.strategyId,
            SubscriptionId: s.subscriptionId,
            StartDate: s.startDate,
            StartEquity: s.startEquity,
          })),
          Skipped: outcome.skipped.map((s) => ({
            StrategyId: s.strategyId,
            Reason: s.reason,
            Message: s.message,
            SubscriptionId: s.subscriptionId,
          })),
        },
      ];
    },
  }),
  defineOperation({
    id: "StopSim",
    method: "DELETE",
    path: "/Autotrade/StopSim",
    servers: ["WL"],
    summary:
      "Ends the customer's live simulated subscription to the strategy now. Real subscriptions are refused (use WhiteLabelStopSubscription); with none live it is a no-op (SubscriptionId null). White-label admins (service admins name the site).",
    input: Type.Object({ PersonId: Id({ description: "The customer" }), StrategyId: Id(), WhiteLabelSiteId }),
    result: StopSimResultRecord,
    permission: siteAdministrators,
    paginated: false,
    example: {
      PersonId: EXAMPLE.customerId,
      StrategyId: EXAMPLE.strategyId,
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
    },
    handler: async (ctx, input) => {
      const stopped = await stopSim(ctx, {
        personId: input.PersonId,
        strategyId: input.StrategyId,
        siteId: input.WhiteLabelSiteId,
      });
      return [
        {
          PersonId: stopped.personId,
          StrategyId: stopped.strategyId,
          SubscriptionId: stopped.subscriptionId,
          EndDate: stopped.endDate,
        },
      ];
    },
  }),
  defineOperation({
    id: "GetSimResults",
    method: "GET",
    path: "/Autotrade/GetSimResults",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Simulated subscriptions measured since each started, oldest first. A person sees their own, site administrators their members', service admins everyone's. Check IsResultReady before showing performance.",
    input: Type.Object({
      PersonId: Type.Optional(Id()),
      WhiteLabelSiteId: Type.Optional(Id({ description: "Only the site's customers" })),
      ActiveOnly: Type.Optional(Type.Boolean({ description: "true (default): live simulations; false: full history" })),
      MaxAccountDays: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: MAX_ACCOUNT_DAYS,
          description: `Only simulations started within this many days (default and maximum ${MAX_ACCOUNT_DAYS})`,
        }),
      ),
      MinLoginDays: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 2_147_483_647,
          description: "Only customers who signed in within this many days",
        }),
      ),
    }),
    result: SimResultRecord,
    permission: anyCaller,
    paginated: false,
    fieldServers: { SubscriptionId: ["GEN", "WL"], IsResultReady: ["GEN", "WL"] },
    example: { PersonId: EXAMPLE.customerId, ActiveOnly: false },
    handler: async (ctx, input) =>
      (
        await simResults(ctx, {
          personId: input.PersonId,
          siteId: input.WhiteLabelSiteId,
          activeOnly: input.ActiveOnly ?? true,
          maxAccountDays: input.MaxAccountDays ?? MAX_ACCOUNT_DAYS,
          minLoginDays: input.MinLoginDays,
        })
      ).map((r) => ({
        PersonId: r.personId,
        FirstName: r.firstName,
        LastName: r.lastName,
        Email: r.email,
        Account: null,
        StrategyId: r.strategyId,
        StrategyName: r.strategyName,
        StartDate: r.startDate,
        EndDate: r.endDate,
        StartEquity: r.startEquity,
        EndEquity: r.endEquity,
        TotalReturn: r.totalReturn,
        TotalDelta: r.totalDelta,
        ScalingFactor: r.scalingFactor,
        SubscriptionId: r.subscriptionId,
        IsResultReady: r.isResultReady,
      })),
  }),
];
