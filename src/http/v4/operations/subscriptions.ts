import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { dollarsOf } from "../../../core/money.js";
import { monthlyCostCents } from "../../../core/subscription-cost.js";
import {
  isLive,
  type SubscriptionView,
  strategySubscribers,
  subscribedStrategies,
  subscriptionRevenue,
} from "../../../services/subscription-reads.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { StrategySubscriberRecord, SubscribedStrategyRecord } from "../records.js";
import { DateTime, Id } from "../schemas.js";

/** Reads of subscriptions: a person's subscribed strategies, a strategy's subscribers and revenue rows. */
export const subscriptionOperations = [
  defineOperation({
    id: "GetSubscribedStrategies",
    method: "GET",
    path: "/General/GetSubscribedStrategies",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "The person's strategy subscriptions (real, simulated, paper), live ones only unless ActiveOnly is false. The person and their administrators.",
    input: Type.Object({
      PersonId: Id(),
      ActiveOnly: Type.Optional(Type.Boolean({ description: "true (default): live subscriptions only" })),
    }),
    result: SubscribedStrategyRecord,
    permission: anyCaller,
    fieldServers: Object.fromEntries(
      [
        "NextChargeDate",
        "NextBillingPrice",
        "BillingInterval",
        "BillingIntervalCount",
        "IsCancelPending",
        "BillingFailureCount",
        "LastBillingFailureReason",
        "LastBillingFailureAt",
      ].map((field) => [field, ["GEN", "GEO"] as const]),
    ),
    paginated: true,
    example: { PersonId: EXAMPLE.customerId },
    handler: async (ctx, input, page) => {
      const result = await subscribedStrategies(ctx, input.PersonId, input.ActiveOnly ?? true, page);
      const now = ctx.clock.nowMs();
      return { ...result, items: result.items.map((row) => subscribedStrategyOf(row, now)) };
    },
  }),
  defineOperation({
    id: "GetSubscribers",
    method: "GET",
    path: "/Strategies/GetSubscribers",
    servers: ["WL", "GEN"],
    summary:
      "The strategy's subscriptions with their subscribers, every one unless ActiveOnly. Its owner, its administrators and service admins read them all; another white-label administrator its own site's customers only.",
    input: Type.Object({
      StrategyId: Id(),
      ActiveOnly: Type.Optional(Type.Boolean({ description: "false (default): ended subscriptions too" })),
    }),
    result: StrategySubscriberRecord,
    permission: anyCaller,
    paginated: true,
    example: { StrategyId: EXAMPLE.strategyId },
    handler: async (ctx, input, page) => {
      const result = await strategySubscribers(ctx, input.StrategyId, input.ActiveOnly ?? false, page);
      return { ...result, items: result.items.map(strategySubscriberOf) };
    },
  }),
  defineOperation({
    id: "GetSubscriptionRevenue",
    method: "GET",
    path: "/Strategies/GetSubscriptionRevenue",
    servers: ["WL", "GEN"],
    summary:
      "Revenue rows of paid subscriptions (resold and direct) matching every filter, charged in [StartDate, EndDate) when a date is given. At least one filter besides the dates. A person sees the strategies they own, a white-label administrator what its site sold, service admins everything.",
    input: Type.Object({
      StrategyId: Type.Optional(Id()),
      StartDate: Type.Optional(DateTime({ description: "Charged at or after (UTC)" })),
      EndDate: Type.Optional(DateTime({ description: "Charged before (UTC, exclusive)" })),
      StrategyOwnerPersonId: Type.Optional(Id()),
      SubscriberPersonId: Type.Optional(Id()),
      WhiteLabelSiteId: Type.Optional(Id({ description: "The site that sold the subscriptions" })),
    }),
    result: StrategySubscriberRecord,
    permission: anyCaller,
    paginated: true,
    example: { StrategyId: EXAMPLE.strategyId },
    handler: async (ctx, input, page) => {
      const result = await subscriptionRevenue(
        ctx,
        {
          strategyId: input.StrategyId,
          startMs: input.StartDate === undefined ? undefined : Date.parse(input.StartDate),
          endMs: input.EndDate === undefined ? undefined : Date.parse(input.EndDate),
          strategyOwnerPersonId: input.StrategyOwnerPersonId,
          subscriberPersonId: input.SubscriberPersonId,
          whiteLabelSiteId: input.WhiteLabelSiteId,
        },
        page,
      );
      return { ...result, items: result.items.map(strategySubscriberOf) };
    },
  }),
];

const dateOrNull = (ms: number | null) => (ms === null ? null : new Date(ms));

function subscribedStrategyOf(row: SubscriptionView, nowMs: number) {
  return {
    Id: row.id,
    PersonId: row.person_id,
    StrategyId: row.strategy_id,
    StrategyName: row.strategy_name,
    IsSimulation: row.kind === "simulated",
    IsPaperTrade: row.kind === "paper",
    IsAlive: isLive(row, nowMs),
    StartDate: new Date(row.started_at),
    EndDate: dateOrNull(row.ended_at),
    MonthlyCost: dollarsOf(
      monthlyCostCents({
        lane: row.lane,
        priceCents: row.price_cents,
        basePriceCents: row.base_price_cents,
        markupCents: row.markup_cents,
        billingInterval: row.billing_interval,
        billingIntervalCount: row.billing_interval_count,
      }),
    ),
    NextChargeDate: dateOrNull(row.next_charge_at),
    NextBillingPrice: row.next_charge_cents === null ? null : dollarsOf(row.next_charge_cents),
    BillingInterval: row.billing_interval,
    BillingIntervalCount: row.billing_interval_count,
    IsCancelPending: row.cancel_pending === 1,
    BillingFailureCount: row.failure_count,
    LastBillingFailureReason: row.last_failure_reason,
    LastBillingFailureAt: dateOrNull(row.last_failure_at),
  };
}

function strategySubscriberOf(row: SubscriptionView) {
  return {
    Id: row.id,
    StrategyId: row.strategy_id,
    StrategyName: row.strategy_name,
    PersonId: row.person_id,
    SubscriptionId: row.id,
    SubscriberId: row.person_id,
    IsStrategyOwner: row.person_id === row.owner_person_id,
    Alias: row.alias,
    FirstName: row.first_name,
    LastName: row.last_name,
    Email: row.email,
    StartDate: new Date(row.started_at),
    EndDate: dateOrNull(row.ended_at),
    BasePrice: dollarsOf(row.base_price_cents),
    Markup: dollarsOf(row.markup_cents),
    Cost: dollarsOf(row.base_price_cents + row.markup_cents),
    LastTransactionDate: dateOrNull(row.last_charge_at),
    LastTransactionAmount: row.last_charge_cents === null ? null : dollarsOf(row.last_charge_cents),
    IsResale: row.lane === "resale",
    WhiteLabelSiteId: row.subscriber_site_id,
    GeoSiteId: row.subscriber_geo_site_id,
  };
}
