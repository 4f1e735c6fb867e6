import { Type } from "@sinclair/typebox";
import { anyCaller, onlyRoles } from "../../../core/access.js";
import { decimal, toNumber } from "../../../core/decimal.js";
import {
  leaderboard,
  type StrategyListing,
  searchStrategies,
  setLeaderboard,
} from "../../../services/strategy-search.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { StrategyBasicDetailsRecord } from "../records.js";
import { DateTime, Id } from "../schemas.js";
import { securityTypesOf } from "./performance.js";

const SecurityType = Type.Union([Type.Literal("CS"), Type.Literal("FUT"), Type.Literal("OPT"), Type.Literal("FOR")], {
  description: "Strategies that trade this kind of instrument",
});

/** A strategy as SearchStrategies and the leaderboard answer it. */
export const basicDetailsOf = (strategy: StrategyListing) => ({
  Id: strategy.id,
  StrategyId: strategy.id,
  IsAlive: strategy.is_alive === 1,
  IsPrivate: strategy.is_private === 1,
  StrategyName: strategy.name,
  StartDate: new Date(strategy.created_at),
  SecurityTypesEnabled: securityTypesOf(strategy),
  MonthlyCost: toNumber(decimal(strategy.monthly_cost)),
  StrategyOwnerId: strategy.owner_person_id,
  WhiteLabelSiteId: strategy.white_label_site_id,
  IsTradeOwnSystem: strategy.tradesOwnSystem,
  IsResellable: strategy.is_private === 0,
});

/** Finding strategies (API.md 4.5): search, the curated leaderboard and its curation. */
export const discoveryOperations = [
  defineOperation({
    id: "SearchStrategies",
    method: "GET",
    path: "/Strategies/SearchStrategies",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Strategies matching every filter given, oldest first. StrategyName matches anywhere, without regard to case; % matches any run of characters and _ any one, and a backslash makes them literal. Private strategies appear only to their owners and administrators.",
    input: Type.Object({
      SecurityType: Type.Optional(SecurityType),
      CreatedBeforeDate: Type.Optional(DateTime({ description: "ISO 8601 date (UTC midnight) or date-time" })),
      StrategyName: Type.Optional(Type.String({ maxLength: 100 })),
      StrategyOwnerPersonId: Type.Optional(Id()),
      WhiteLabelSiteId: Type.Optional(Id()),
      IsTradeOwnSystem: Type.Optional(Type.Boolean()),
    }),
    result: StrategyBasicDetailsRecord,
    permission: anyCaller,
    paginated: true,
    example: { StrategyName: "momentum", SecurityType: "CS" },
    handler: async (ctx, input, page) => {
      const result = await searchStrategies(
        ctx,
        {
          securityType: input.SecurityType,
          createdBeforeMs: input.CreatedBeforeDate === undefined ? undefined : Date.parse(input.CreatedBeforeDate),
          name: input.StrategyName,
          ownerPersonId: input.StrategyOwnerPersonId,
          whiteLabelSiteId: input.WhiteLabelSiteId,
          isTradeOwnSystem: input.IsTradeOwnSystem,
        },
        page,
      );
      return { ...result, items: result.items.map(basicDetailsOf) };
    },
  }),
  defineOperation({
    id: "GetLeaderBoard",
    method: "GET",
    path: "/Strategies/GetLeaderBoard",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "The curated leaderboard in rank order (service admins keep it with POST /Admin/SetLeaderBoard), narrowed to SecurityType.",
    input: Type.Object({ SecurityType: Type.Optional(SecurityType) }),
    result: StrategyBasicDetailsRecord,
    permission: anyCaller,
    paginated: false,
    example: { SecurityType: "CS" },
    handler: async (ctx, input) => (await leaderboard(ctx, input.SecurityType)).map(basicDetailsOf),
  }),
  defineOperation({
    id: "SetLeaderBoard",
    method: "POST",
    path: "/Admin/SetLeaderBoard",
    servers: ["GEN"],
    summary:
      "Replaces the leaderboard with StrategyIds in rank order (public, live strategies only; an empty list clears it). Service admins only.",
    input: Type.Object({ StrategyIds: Type.Array(Id(), { maxItems: 100 }) }),
    result: StrategyBasicDetailsRecord,
    permission: onlyRoles("admin"),
    paginated: false,
    example: { StrategyIds: [EXAMPLE.strategyId] },
    handler: async (ctx, input) => {
      await setLeaderboard(ctx, input.StrategyIds);
      return (await leaderboard(ctx)).map(basicDetailsOf);
    },
  }),
];
