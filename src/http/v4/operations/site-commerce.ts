import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { refuse } from "../../../core/errors.js";
import { dollarsOf } from "../../../core/money.js";
import { readDollars } from "../../../core/prices.js";
import {
  type CatalogEntry,
  priceCatalogStrategy,
  siteCatalog,
  updateSiteCatalog,
} from "../../../services/site-catalog.js";
import type { SubscriptionRow } from "../../../services/subscription-rows.js";
import {
  type Lane,
  startWhiteLabelSubscription,
  stopWhiteLabelSubscription,
} from "../../../services/wl-subscriptions.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { SiteCatalogEntryRecord, SiteCatalogUpdateRecord, WhiteLabelSubscriptionRecord } from "../records.js";
import { Amount, DateTime, Id, MultilineText } from "../schemas.js";

/**
 * White-label commerce under /Strategies (API.md 4.6): the site's resale
 * catalog and its pricing, and the subscriptions a site starts and stops for
 * its customers. White-label admins act on their own site; service admins
 * name one with WhiteLabelSiteId.
 */

const siteAdministrators = onlyRoles("admin", "whitelabel-admin");
const WhiteLabelSiteId = Type.Optional(Id({ description: "Service admin keys only: the site to act on" }));
const dateOf = (ms: number | null) => (ms === null ? null : new Date(ms));

export const siteCommerceOperations = [
  defineOperation({
    id: "GetSiteCatalog",
    method: "GET",
    path: "/Strategies/GetSiteCatalog",
    servers: ["WL"],
    summary:
      "The strategies the site resells: original and display name, base monthly cost, the site's markup and the resulting monthly cost, in dollars.",
    input: Type.Object({ WhiteLabelSiteId }),
    result: SiteCatalogEntryRecord,
    permission: siteAdministrators,
    paginated: true,
    example: { WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input, page) => {
      const result = await siteCatalog(ctx, input.WhiteLabelSiteId, page);
      return { ...result, items: result.items.map(catalogRecord) };
    },
  }),
  defineOperation({
    id: "UpdateSiteCatalog",
    method: "POST",
    path: "/Strategies/UpdateSiteCatalog",
    servers: ["WL"],
    summary:
      "Adds strategies to the site's resale catalog or removes them, each on its own. Idempotent: a strategy already in the asked state succeeds. Removal is refused while customers of the site hold a live resold subscription (the count is given).",
    input: Type.Object({
      StrategyIds: Type.Array(Id(), { minItems: 1, maxItems: 100, uniqueItems: true }),
      Action: Type.Union([Type.Literal("Add"), Type.Literal("Remove")]),
      WhiteLabelSiteId,
    }),
    result: SiteCatalogUpdateRecord,
    permission: siteAdministrators,
    paginated: false,
    example: { StrategyIds: [EXAMPLE.resoldStrategyId], Action: "Add", WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input) =>
      (
        await updateSiteCatalog(ctx, {
          siteId: input.WhiteLabelSiteId,
          strategyIds: input.StrategyIds,
          action: input.Action,
        })
      ).map((r) => ({
        StrategyId: r.strategyId,
        Success: r.outcome !== "refused",
        Result: r.outcome,
        Reason: r.reason,
        ActiveSubscriberCount: r.activeSubscriberCount,
      })),
  }),
  defineOperation({
    id: "WhiteLabelUpdateSiteCatalogPricing",
    method: "POST",
    path: "/Strategies/WhiteLabelUpdateSiteCatalogPricing",
    servers: ["WL"],
    summary:
      "Sets the monthly markup of one catalog strategy and its display name (stated every call: omitted or empty shows the original name) and descriptions (omitted: kept; empty: the strategy's own).",
    input: Type.Object({
      StrategyId: Id(),
      MonthlyMarkup: Amount({ description: "Dollars added to the base monthly price, 0 or more, whole cents" }),
      DisplayName: Type.Optional(Type.String({ maxLength: 40 })),
      ShortDescription: Type.Optional(MultilineText({ maxLength: 300 })),
      LongDescription: Type.Optional(MultilineText({ maxLength: 20_000 })),
      WhiteLabelSiteId,
    }),
    result: SiteCatalogEntryRecord,
    permission: siteAdministrators,
    paginated: false,
    example: {
      StrategyId: EXAMPLE.resoldStrategyId,
      MonthlyMarkup: 15,
      DisplayName: "Alpine Macro",
      ShortDescription: "Global macro, resold by Alpine Trading.",
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
    },
    handler: async (ctx, input) => {
      const markup = readDollars(input.MonthlyMarkup, "MonthlyMarkup", { zeroAllowed: true });
      if (!markup.ok) throw refuse("InvalidValue", { field: "MonthlyMarkup", message: markup.message });
      return [
        catalogRecord(
          await priceCatalogStrategy(ctx, {
            siteId: input.WhiteLabelSiteId,
            strategyId: input.StrategyId,
            markupCents: markup.cents,
            displayName: input.DisplayName ?? null,
            shortDescription: input.ShortDescription,
            longDescription: input.LongDescription,
          }),
        ),
      ];
    },
  }),
  defineOperation({
    id: "WhiteLabelStartSubscription",
    method: "POST",
    path: "/Strategies/WhiteLabelStartSubscription",
    servers: ["WL"],
    summary:
      "Gives a customer of the site a strategy: one the site owns by a finite access grant (Months or AccessUntil; a new IdempotencyKey extends it, the same one replays it), one of its catalog by an open-ended monthly subscription billed to the house account, whose first charge is made in the call.",
    input: Type.Object({
      PersonId: Id(),
      StrategyId: Id(),
      IdempotencyKey: Type.String({ minLength: 1, maxLength: 255, description: "One per business event" }),
      Months: Type.Optional(Type.Integer({ minimum: 1, maximum: 24, description: "Owned strategies: the term" })),
      AccessUntil: Type.Optional(DateTime({ description: "Owned strategies: the term's end, instead of Months" })),
      WhiteLabelSiteId,
    }),
    result: WhiteLabelSubscriptionRecord,
    permission: siteAdministrators,
    paginated: false,
    example: {
      PersonId: EXAMPLE.customerId,
      StrategyId: EXAMPLE.portfolioStrategyId,
      IdempotencyKey: "grant-2026-03-ben-core",
      Months: 3,
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
    },
    successMessage: (results) => {
      const [first] = results as { IsFirstChargeSuccessful: boolean | null; LastBillingFailureReason: string | null }[];
      return first?.IsFirstChargeSuccessful === false
        ? `The first charge did not settle (${first.LastBillingFailureReason ?? "no reason given"}): the recurring biller retries it`
        : undefined;
    },
    handler: async (ctx, input) => {
      const started = await startWhiteLabelSubscription(ctx, {
        siteId: input.WhiteLabelSiteId,
        personId: input.PersonId,
        strategyId: input.StrategyId,
        idempotencyKey: input.IdempotencyKey,
        months: input.Months,
        accessUntilMs: input.AccessUntil === undefined ? undefined : Date.parse(input.AccessUntil),
      });
      return [
        subscriptionRecord(started.row, started.lane, {
          IsIdempotentReplay: started.isIdempotentReplay,
          IsFirstChargeSuccessful: started.isFirstChargeSuccessful,
          AccessUntil: dateOf(started.accessUntilMs),
        }),
      ];
    },
  }),
  defineOperation({
    id: "WhiteLabelStopSubscription",
    method: "DELETE",
    path: "/Strategies/WhiteLabelStopSubscription",
    servers: ["WL"],
    summary:
      "Stops a customer's subscription of the site. EndOfTerm (default): billing stops, access runs to the end of the paid or granted term; repeating changes nothing. Immediate: ends now, the rest of the term forfeited. Simulated subscriptions: use StopSim.",
    input: Type.Object({
      PersonId: Id(),
      StrategyId: Id(),
      Mode: Type.Optional(Type.Union([Type.Literal("EndOfTerm"), Type.Literal("Immediate")])),
      AutotradePositions: Type.Optional(
        Type.Union([Type.Literal("LeaveInPlace"), Type.Literal("AttemptToClose")], {
          description:
            "What happens to the customer's autotraded positions when the stop ends access now: required if the customer autotrades the strategy",
        }),
      ),
      WhiteLabelSiteId,
    }),
    result: WhiteLabelSubscriptionRecord,
    permission: siteAdministrators,
    paginated: false,
    example: {
      PersonId: EXAMPLE.customerId,
      StrategyId: EXAMPLE.resoldStrategyId,
      Mode: "EndOfTerm",
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
    },
    handler: async (ctx, input) => {
      const stopped = await stopWhiteLabelSubscription(ctx, {
        siteId: input.WhiteLabelSiteId,
        personId: input.PersonId,
        strategyId: input.StrategyId,
        mode: input.Mode ?? "EndOfTerm",
        autotradePositions: input.AutotradePositions,
      });
      return [subscriptionRecord(stopped.row, stopped.lane)];
    },
  }),
];

function catalogRecord(entry: CatalogEntry) {
  return {
    WhiteLabelSiteId: entry.siteId,
    StrategyId: entry.strategyId,
    StrategyName: entry.strategyName,
    DisplayName: entry.displayName,
    ShortDescription: entry.shortDescription,
    LongDescription: entry.longDescription,
    BaseMonthlyCost: dollarsOf(entry.baseMonthlyCents),
    MonthlyMarkup: dollarsOf(entry.markupCents),
    MonthlyCost: dollarsOf(entry.baseMonthlyCents + entry.markupCents),
    AddedDate: new Date(entry.addedAt),
    LastModified: new Date(entry.updatedAt),
  };
}

function subscriptionRecord(
  row: SubscriptionRow,
  lane: Lane,
  overrides: { IsIdempotentReplay?: boolean; IsFirstChargeSuccessful?: boolean | null; AccessUntil?: Date | null } = {},
) {
  const accessUntil = row.lane === "grant" ? row.ended_at : row.paid_until;
  return {
    SubscriptionId: row.id,
    PersonId: row.person_id,
    StrategyId: row.strategy_id,
    Lane: lane,
    IsIdempotentReplay: false,
    IsFirstChargeSuccessful: null,
    StartDate: new Date(row.started_at),
    AccessUntil: dateOf(
      row.ended_at !== null && accessUntil !== null ? Math.min(accessUntil, row.ended_at) : accessUntil,
    ),
    EndDate: dateOf(row.ended_at),
    IsCancelPending: row.cancel_pending === 1,
    NextChargeDate: dateOf(row.next_charge_at),
    NextBillingPrice: row.next_charge_cents === null ? null : dollarsOf(row.next_charge_cents),
    WholesaleMonthly: row.lane === "resale" ? dollarsOf(row.price_cents) : null,
    LastBillingFailureReason: row.last_failure_reason,
    ...overrides,
  };
}
