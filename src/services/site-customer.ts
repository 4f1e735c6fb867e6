import { isServiceAdmin, whiteLabelScope } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { asSiteId } from "../core/ids.js";
import type { Tx } from "../store/transaction.js";
import type { RequestContext } from "./runtime.js";

/**
 * The white-label site a commercial operation acts on and the customer it
 * names: the site is the key's own (service admins name one with
 * WhiteLabelSiteId) and the customer must belong to it. A customer of
 * another site is answered as if there were none, so ids reveal nothing.
 */
export async function siteCustomer(
  tx: Tx,
  ctx: RequestContext,
  personId: number,
  requestedSiteId: number | undefined,
): Promise<{ readonly siteId: number; readonly personId: number }> {
  const siteId = await actingSite(tx, ctx, requestedSiteId);
  const person = await tx
    .selectFrom("persons")
    .select("id")
    .where("id", "=", personId)
    .where("white_label_site_id", "=", siteId)
    .executeTakeFirst();
  if (!person) throw refuse("NotFound", { field: "PersonId", message: `No customer ${personId} on site ${siteId}` });
  return { siteId, personId: person.id };
}

/** The white-label site the caller acts on (its own, or the one a service admin names). */
export async function actingSite(tx: Tx, ctx: RequestContext, requestedSiteId: number | undefined): Promise<number> {
  const scope = whiteLabelScope(ctx.caller, requestedSiteId === undefined ? undefined : asSiteId(requestedSiteId));
  if (!scope.ok) {
    if (requestedSiteId === undefined && isServiceAdmin(ctx.caller)) {
      throw refuse("MissingValue", { field: "WhiteLabelSiteId", message: "WhiteLabelSiteId is required" });
    }
    throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not a member of that site" });
  }
  const site = await tx.selectFrom("sites").select("kind").where("id", "=", scope.siteId).executeTakeFirst();
  if (site?.kind !== "whitelabel") {
    throw refuse("NotFound", { field: "WhiteLabelSiteId", message: `No white-label site ${scope.siteId}` });
  }
  return scope.siteId;
}
