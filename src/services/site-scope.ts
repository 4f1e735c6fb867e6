import { isServiceAdmin, whiteLabelScope } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { asSiteId } from "../core/ids.js";
import type { Tx } from "../store/transaction.js";
import type { RequestContext } from "./runtime.js";

/**
 * The white-label site a commercial operation acts on: the caller's own;
 * service admins name one with WhiteLabelSiteId (and must). Refused when the
 * caller may not act on it, or it is no white-label site.
 */
export async function commerceSite(
  ctx: RequestContext,
  tx: Tx,
  requestedSiteId: number | undefined,
): Promise<{ readonly id: number; readonly allowNegativeBilling: boolean }> {
  const scope = whiteLabelScope(ctx.caller, requestedSiteId === undefined ? undefined : asSiteId(requestedSiteId));
  if (!scope.ok) {
    if (requestedSiteId === undefined && isServiceAdmin(ctx.caller)) {
      throw refuse("MissingValue", { field: "WhiteLabelSiteId", message: "WhiteLabelSiteId is required" });
    }
    throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not an administrator of that site" });
  }
  const site = await tx
    .selectFrom("sites")
    .select(["kind", "allow_negative_billing"])
    .where("id", "=", scope.siteId)
    .executeTakeFirst();
  if (site?.kind !== "whitelabel") {
    throw refuse("NotFound", { field: "WhiteLabelSiteId", message: `No white-label site ${scope.siteId}` });
  }
  return { id: scope.siteId, allowNegativeBilling: site.allow_negative_billing === 1 };
}

/** The site's customer, or 404: a person of another site is, to this site, no one. */
export async function customerOf(tx: Tx, siteId: number, personId: number): Promise<void> {
  const person = await tx
    .selectFrom("persons")
    .select("white_label_site_id")
    .where("id", "=", personId)
    .executeTakeFirst();
  if (person?.white_label_site_id !== siteId) {
    throw refuse("NotFound", { field: "PersonId", message: `No customer ${personId} on site ${siteId}` });
  }
}
