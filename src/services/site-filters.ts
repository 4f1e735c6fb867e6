import { administers, type Caller, membership } from "../core/access.js";
import { refuse } from "../core/errors.js";
import type { Tx } from "../store/transaction.js";
import { findGeoSite, findSite } from "./sites-lookup.js";

/**
 * The site filters of the administrators' reads (SearchAccounts,
 * GetAutotradeStats, GetPendingAccounts): WhiteLabelSiteId and GeoSite
 * narrow what the caller may see anyway. A site that does not exist is 404;
 * an administrator naming a site they do not administer is 403, as wherever
 * a site is named (people's filters only narrow their own rows).
 */
export interface SiteFilters {
  readonly whiteLabelSiteId?: number | undefined;
  readonly geoSiteId?: number | undefined;
}

export async function siteFilters(
  tx: Tx,
  caller: Caller,
  requested: { readonly whiteLabelSiteId?: number | undefined; readonly geoSite?: string | undefined },
): Promise<SiteFilters> {
  const administrator = caller.role !== "person";
  if (requested.whiteLabelSiteId !== undefined) {
    const site = await findSite(tx, requested.whiteLabelSiteId);
    if (site?.kind !== "whitelabel")
      throw refuse("NotFound", {
        field: "WhiteLabelSiteId",
        message: `No white-label site ${requested.whiteLabelSiteId}`,
      });
    if (administrator && !administers(caller, membership(site.id, site.geo_site_id)))
      throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not an administrator of that site" });
  }
  let geoSiteId: number | undefined;
  if (requested.geoSite !== undefined) {
    const geo = await findGeoSite(tx, requested.geoSite);
    if (!geo) throw refuse("NotFound", { field: "GeoSite", message: `No geo-site ${requested.geoSite}` });
    // A white-label administrator administers no geo-site: naming one only narrows to its site's customers there.
    if (caller.role === "geo-admin" && geo.id !== caller.geoSiteId)
      throw refuse("Forbidden", { field: "GeoSite", message: "Not an administrator of that geo-site" });
    geoSiteId = geo.id;
  }
  return { whiteLabelSiteId: requested.whiteLabelSiteId, geoSiteId };
}
