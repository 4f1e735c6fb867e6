import { Type } from "@sinclair/typebox";
import { anyCaller, onlyRoles } from "../../../core/access.js";
import { STRATEGY_LIMITS } from "../../../core/strategy.js";
import { addStrategy, reviewStrategyDescriptions, updateStrategy } from "../../../services/strategies.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { StrategyIdRecord, StrategyReviewRecord } from "../records.js";
import { Id, MultilineText } from "../schemas.js";

const AddStrategyInput = Type.Object({
  StrategyName: Type.String({ maxLength: 200, description: "3 to 40 letters, digits, spaces, apostrophes, # or /" }),
  StartingCapital: Type.Optional(Type.Number({ description: "1000 to 10000000; required" })),
  StrategyOwnerPersonId: Type.Optional(Id({ description: "WL: the customer to make it for (administrators)" })),
  InitialSiteVisibility: Type.Optional(
    Type.Boolean({ description: "WL: publicly visible from the start (administrators); hidden by default" }),
  ),
});

/** Strategy management under /Strategies (API.md 4.5), and the compliance review of descriptions. */
export const strategyOperations = [
  defineOperation({
    id: "AddStrategy",
    method: "POST",
    path: "/Strategies/AddStrategy",
    servers: ["WL", "GEN"],
    summary:
      "Creates an empty strategy holding StartingCapital in cash. On WL administrators may make it for a customer and set its initial visibility; on GEN the owner is the caller and it starts hidden.",
    input: AddStrategyInput,
    inputOn: {
      GEN: Type.Object({
        StrategyName: AddStrategyInput.properties.StrategyName,
        StartingCapital: AddStrategyInput.properties.StartingCapital,
      }),
    },
    result: StrategyIdRecord,
    permission: anyCaller,
    paginated: false,
    example: { StrategyName: "Blue Chip Swing", StartingCapital: 100000 },
    handler: async (ctx, input) => {
      const { strategyId } = await addStrategy(ctx, {
        name: input.StrategyName,
        startingCapital: input.StartingCapital,
        ownerPersonId: input.StrategyOwnerPersonId,
        initialSiteVisibility: input.InitialSiteVisibility,
      });
      return [{ StrategyId: strategyId }];
    },
  }),
  defineOperation({
    id: "UpdateStrategy",
    method: "PUT",
    path: "/Strategies/UpdateStrategy",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Renames an owned strategy and submits description changes for compliance review (published once approved). Empty clears a description; omitted keeps it. Not available on WL and GEO (501).",
    input: Type.Object({
      StrategyId: Id(),
      Name: Type.Optional(Type.String({ maxLength: 200 })),
      ShortDescription: Type.Optional(MultilineText({ maxLength: STRATEGY_LIMITS.shortDescription })),
      LongDescription: Type.Optional(MultilineText({ maxLength: STRATEGY_LIMITS.longDescription })),
    }),
    inputOn: { GEO: Type.Object({ StrategyId: Id() }) },
    result: StrategyIdRecord,
    permission: anyCaller,
    notAvailableOn: ["WL", "GEO"],
    paginated: false,
    example: {
      StrategyId: EXAMPLE.strategyId,
      ShortDescription: "Large-cap US stocks, held days to weeks",
    },
    handler: async (ctx, input) => {
      const { strategyId } = await updateStrategy(ctx, {
        strategyId: input.StrategyId,
        name: input.Name,
        shortDescription: input.ShortDescription,
        longDescription: input.LongDescription,
      });
      return [{ StrategyId: strategyId }];
    },
  }),
  defineOperation({
    id: "ReviewStrategyDescriptions",
    method: "POST",
    path: "/Admin/ReviewStrategyDescriptions",
    servers: ["GEN"],
    summary:
      "Compliance review: approves (publishes) or rejects the description changes waiting on a strategy. Service admins only.",
    input: Type.Object({
      StrategyId: Id(),
      Approve: Type.Boolean(),
      Note: Type.Optional(MultilineText({ maxLength: 2000, description: "Why, for the owner" })),
    }),
    result: StrategyReviewRecord,
    permission: onlyRoles("admin"),
    paginated: false,
    example: { StrategyId: EXAMPLE.strategyId, Approve: true, Note: "Clear and accurate" },
    handler: async (ctx, input) => {
      const review = await reviewStrategyDescriptions(ctx, input.StrategyId, input.Approve, input.Note);
      return [{ StrategyId: review.strategyId, ReviewStatus: review.status }];
    },
  }),
];
