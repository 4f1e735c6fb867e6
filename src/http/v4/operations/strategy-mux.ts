import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { sub, toNumber } from "../../../core/decimal.js";
import { serviceSymbolOf } from "../../../core/symbols/instrument.js";
import { type FamilyStatus, muxStatus, type VariantStatus } from "../../../services/mux-status.js";
import { instrumentOf } from "../../../store/trading-state.js";
import { EXAMPLE } from "../examples.js";
import { StrategyMuxStatusRecord } from "../mux-records.js";
import { defineOperation } from "../operation.js";
import { Id } from "../schemas.js";

/**
 * GetStrategyMuxStatus (API.md 4.5; docs/decisions.md "StrategyMux (issue
 * 14)"): white-label admins read their site's families, service admins name
 * the site.
 */

const capitalized = (word: string) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;

const variantRecord = (variant: VariantStatus) => ({
  ChildStrategyId: variant.childStrategyId,
  ChildStrategyName: variant.childStrategyName,
  ScalingPercentage: toNumber(variant.scalingPercentage),
  LinkedDate: new Date(variant.linkedAt),
  InSync: variant.inSync,
  Positions: variant.positions.map((p) => ({
    ServiceSymbol: serviceSymbolOf(instrumentOf(p.symbol, p.symbolType)),
    ParentQuantity: toNumber(p.parentQuantity),
    ExpectedQuantity: toNumber(p.expectedQuantity),
    ChildQuantity: toNumber(p.childQuantity),
    Difference: toNumber(sub(p.childQuantity, p.expectedQuantity)),
    InSync: p.inSync,
  })),
  OrdersMirrored: variant.ordersMirrored,
  ExceptionCount: variant.exceptionCount,
  ExceptionsByReason: variant.exceptionsByReason.map((e) => ({ Reason: e.reason, Count: e.count })),
  LastMirroredDate: variant.lastMirroredAt === null ? null : new Date(variant.lastMirroredAt),
  RecentExceptions: variant.recentExceptions.map((e) => ({
    SignalId: e.parentOrderId,
    ChildSignalId: e.childOrderId,
    Action: capitalized(e.action),
    Status: capitalized(e.status),
    Reason: e.reason ?? "unknown",
    Message: e.message,
    Date: new Date(e.at),
  })),
});

const familyRecord = (family: FamilyStatus) => ({
  ParentStrategyId: family.parentStrategyId,
  ParentStrategyName: family.parentStrategyName,
  WhiteLabelSiteId: family.siteId,
  PendingEvents: family.pendingEvents,
  VariantCount: family.variants.length,
  VariantsInSync: family.variants.filter((v) => v.inSync).length,
  ExceptionCount: family.variants.reduce((n, v) => n + v.exceptionCount, 0),
  Variants: family.variants.map(variantRecord),
});

export const strategyMuxOperations = [
  defineOperation({
    id: "GetStrategyMuxStatus",
    method: "GET",
    path: "/Strategies/GetStrategyMuxStatus",
    servers: ["WL"],
    summary:
      "The site's strategy families (a parent and the variants mirroring its orders, made by operators with `strategy mux`), or the family of the parent StrategyId: how far the mirror has read the parent's orders, each variant's positions beside the parent's scaled, the orders mirrored and the exceptions with their reasons. White-label admins (service admins name the site).",
    input: Type.Object({
      StrategyId: Type.Optional(Id({ description: "The parent: only its family" })),
      WhiteLabelSiteId: Type.Optional(Id({ description: "Service admin keys only: the site" })),
    }),
    result: StrategyMuxStatusRecord,
    permission: onlyRoles("admin", "whitelabel-admin"),
    paginated: false,
    example: { WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input) =>
      (await muxStatus(ctx, { siteId: input.WhiteLabelSiteId, strategyId: input.StrategyId })).map(familyRecord),
  }),
];
