import { type Caller, isServiceAdmin } from "../core/access.js";
import type { PlatformId } from "../core/ids.js";
import { memberOf, personsWithSites } from "./person-view.js";
import { actingFor, dbOf, type RequestContext } from "./runtime.js";

/**
 * Whom and what a legacy key reaches, and acting for a strategy's owner. A key
 * reaches its own person (a service admin's, everyone); acting through a
 * platform (Private Platform context), also the people of the platform's
 * white-label site. A key reaches the strategies (systems) of the people it
 * reaches, and acts on them as their owner would.
 */

/** Whom a key reaches: everyone (a service admin's key), or its own person and the people of a white-label site. */
export type Reach =
  | { readonly everyone: true }
  | {
      readonly everyone: false;
      readonly personId: number;
      /** The white-label site of the platform the key acts through, or null. */
      readonly siteId: number | null;
    };

export async function reachOf(ctx: RequestContext, platformId: PlatformId | null): Promise<Reach> {
  if (isServiceAdmin(ctx.caller)) return { everyone: true };
  const platform =
    platformId === null
      ? undefined
      : await dbOf(ctx)
          .selectFrom("platforms")
          .select("white_label_site_id")
          .where("id", "=", platformId)
          .executeTakeFirst();
  return { everyone: false, personId: Number(ctx.caller.personId), siteId: platform?.white_label_site_id ?? null };
}

/** Whether the key reaches the person (acting through the platform, when one is given). */
export async function reachesPerson(
  ctx: RequestContext,
  platformId: PlatformId | null,
  personId: number,
): Promise<boolean> {
  const reach = await reachOf(ctx, platformId);
  if (reach.everyone || reach.personId === personId) return true;
  if (reach.siteId === null) return false;
  const person = await dbOf(ctx)
    .selectFrom("persons")
    .select("white_label_site_id")
    .where("id", "=", personId)
    .executeTakeFirst();
  return person?.white_label_site_id === reach.siteId;
}

/** The strategy's owner as a caller acting for themselves, or null when there is no such strategy. */
async function ownerOf(ctx: Pick<RequestContext, "storage" | "tx">, strategyId: number): Promise<Caller | null> {
  const owner = await personsWithSites(dbOf(ctx))
    .innerJoin("strategies as st", "st.owner_person_id", "p.id")
    .where("st.id", "=", strategyId)
    .executeTakeFirst();
  // The keys a member lacks before it (docs/decisions.md, "Objects keep their hidden classes").
  return owner ? { role: "person", platformId: null, ...memberOf(owner) } : null;
}

/** The owner of the strategy when the key reaches it, or null (no such strategy, or out of reach). */
export async function systemOwner(
  ctx: RequestContext,
  platformId: PlatformId | null,
  strategyId: number,
): Promise<Caller | null> {
  const owner = await ownerOf(ctx, strategyId);
  return owner && (await reachesPerson(ctx, platformId, Number(owner.personId))) ? owner : null;
}

/** The context to act for the strategy's owner in, when the key reaches the strategy; otherwise null. */
export async function actingForSystem<C extends RequestContext>(
  ctx: C,
  platformId: PlatformId | null,
  strategyId: number,
): Promise<C | null> {
  const owner = await systemOwner(ctx, platformId, strategyId);
  return owner && actingFor(ctx, owner);
}

/** Whether the key may have a person follow the strategy: a public one, or one it reaches. */
export async function mayFollow(ctx: RequestContext, platformId: PlatformId | null, strategyId: number) {
  const strategy = await dbOf(ctx)
    .selectFrom("strategies")
    .select("is_private")
    .where("id", "=", strategyId)
    .executeTakeFirst();
  return strategy?.is_private === 0 || (await systemOwner(ctx, platformId, strategyId)) !== null;
}
