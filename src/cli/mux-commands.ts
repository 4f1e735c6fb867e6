import { formatDecimal, toNumber } from "../core/decimal.js";
import { readScaling } from "../core/mux.js";
import { linkVariant, unlinkVariant } from "../services/strategy-mux.js";
import type { CliCommand } from "./commands.js";
import { requiredId } from "./options.js";
import { UsageError } from "./usage-error.js";

/** StrategyMux families from the command line (docs/decisions.md "StrategyMux (issue 14)"). */
export const MUX_COMMANDS: readonly CliCommand[] = [
  {
    noun: "strategy",
    verb: "mux",
    synopsis:
      "strategy mux --parent STRATEGY_ID --child STRATEGY_ID [--scaling PERCENT, default 100]   (the child mirrors the parent's orders)",
    options: { parent: { type: "string" }, child: { type: "string" }, scaling: { type: "string" } },
    async run(runtime, o) {
      const parentId = requiredId(o, "parent");
      const childId = requiredId(o, "child");
      const scaling = o.scaling === undefined ? undefined : readScaling(o.scaling);
      if (scaling === null) throw new UsageError("--scaling is a percentage above 0 and at most 1000");
      const link = await linkVariant(runtime, { parentId, childId, scaling });
      return {
        json: {
          ParentStrategyId: link.parentStrategyId,
          ChildStrategyId: link.childStrategyId,
          ScalingPercentage: toNumber(link.scalingPercentage),
          LinkedDate: new Date(link.linkedAt).toISOString(),
          Created: link.created,
        },
        text: `Strategy ${childId} ${link.created ? "now mirrors" : "mirrors"} strategy ${parentId} at ${formatDecimal(link.scalingPercentage)}%`,
      };
    },
  },
  {
    noun: "strategy",
    verb: "unmux",
    synopsis: "strategy unmux --child STRATEGY_ID   (the child stops mirroring its parent)",
    options: { child: { type: "string" } },
    async run(runtime, o) {
      const childId = requiredId(o, "child");
      const unlinked = await unlinkVariant(runtime, childId);
      return {
        json: { ParentStrategyId: unlinked.parentStrategyId, ChildStrategyId: unlinked.childStrategyId },
        text: `Strategy ${childId} no longer mirrors strategy ${unlinked.parentStrategyId}`,
      };
    },
  },
];
