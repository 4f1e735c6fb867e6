import { type Caller, isServiceAdmin } from "../core/access.js";
import type { PlatformId } from "../core/ids.js";
import { memberOf, personsWithSites } from "./person-view.js";
import type { RequestContext } from "./runtime.js";

/**
 * Which strategies (systems) a legacy key reaches. In World context a key
 * reaches its own person's strategies (a service admin's, every strategy); in
 * Private Platform context also those of the people of the platform's
 * white-label site. A reached strategy is acted on as its owner would act.
 */
export async function systemOwner(
  ctx: RequestContext,
  context: "world" | "platform",
  platformId: PlatformId | null,
  strategyId: number,
): Promise<Caller | null> {
  const owner = await ownerOf(ctx, strategyId);
  if (!owner) return null;
  if (owner.caller.personId === ctx.caller.personId || isServiceAdmin(ctx.caller)) return owner.caller;
  if (context !== "platform" || platformId === null) return null;
  const platform = await ctx.storage.db
    .selectFrom("platforms")
    .select("white_label_site_id")
    .where("id", "=", platformId)
    .executeTakeFirst();
  return platform?.white_label_site_id != null && platform.white_label_site_id === owner.whiteLabelSiteId
    ? owner.caller
    : null;
}

/** The strategy's owner as a caller acting for themselves, or null when there is no such strategy. */
export async function ownerOf(
  ctx: Pick<RequestContext, "storage">,
  strategyId: number,
): Promise<{ readonly caller: Caller; readonly whiteLabelSiteId: number | null } | null> {
  const db = ctx.storage.db;
  const strategy = await db
    .selectFrom("strategies")
    .select(["owner_person_id"])
    .where("id", "=", strategyId)
    .executeTakeFirst();
  if (!strategy) return null;
  const owner = await personsWithSites(db).where("p.id", "=", strategy.owner_person_id).executeTakeFirst();
  if (!owner) return null;
  return {
    caller: { ...memberOf(owner), role: "person", platformId: null },
    whiteLabelSiteId: owner.white_label_site_id,
  };
}
