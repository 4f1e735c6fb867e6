import { sql } from "kysely";
import { administers, isServiceAdmin, membership, whiteLabelScope } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { asSiteId } from "../core/ids.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import { type PersonRoles, withPersonRoles } from "./person-roles.js";
import { type PersonRow, personsWithSites } from "./person-view.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { findGeoSite } from "./sites-lookup.js";

/** A member as its site's administrators see it (WhiteLabelSiteMember / GeoSiteMember). */
export interface SiteMember {
  readonly id: number;
  readonly alias: string | null;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: string | null;
  readonly language: string | null;
  readonly isWhiteLabelSiteAdmin: boolean;
  readonly whiteLabelSiteId: number | null;
  readonly countryCode: string | null;
  readonly divisionCode: string | null;
  readonly created: Date;
  readonly lastLoggedIn: Date | null;
  readonly lastIp: string | null;
  readonly isEmailValidated: boolean;
  readonly isAlive: boolean;
  readonly geoSiteName: string | null;
  readonly isGeoSiteAdmin: boolean;
  readonly isManager: boolean;
  readonly isInvestor: boolean;
}

/**
 * The members of a white-label site, oldest first by default. The site is the
 * caller's own; service admins may name any site.
 */
export async function listWhiteLabelSiteMembers(
  ctx: RequestContext,
  requestedSiteId: number | undefined,
  page: PageRequest,
): Promise<Page<SiteMember>> {
  const scope = whiteLabelScope(ctx.caller, requestedSiteId === undefined ? undefined : asSiteId(requestedSiteId));
  if (!scope.ok) {
    if (requestedSiteId === undefined && isServiceAdmin(ctx.caller)) {
      throw refuse("MissingValue", { field: "WhiteLabelSiteId", message: "WhiteLabelSiteId is required" });
    }
    throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not an administrator of that site" });
  }
  const db = dbOf(ctx);
  const site = await db.selectFrom("sites").select("kind").where("id", "=", scope.siteId).executeTakeFirst();
  if (site?.kind !== "whitelabel") {
    throw refuse("NotFound", { field: "WhiteLabelSiteId", message: `No white-label site ${scope.siteId}` });
  }
  const query = personsWithSites(db).where("p.white_label_site_id", "=", scope.siteId);
  return memberPage(ctx, query, page);
}

/**
 * The members of a geo-site, including the members of the white-label sites
 * inside it. Service admins and the geo-site's own admins only.
 */
export async function listGeoSiteMembers(
  ctx: RequestContext,
  geoSite: string,
  page: PageRequest,
): Promise<Page<SiteMember>> {
  const db = dbOf(ctx);
  const geo = await findGeoSite(db, geoSite);
  if (!geo) throw refuse("NotFound", { field: "GeoSite", message: `No geo-site ${geoSite}` });
  if (!administers(ctx.caller, membership(null, geo.id))) {
    throw refuse("Forbidden", { field: "GeoSite", message: "Not an administrator of that geo-site" });
  }
  return memberPage(ctx, personsWithSites(db).where(sql.ref("g.id"), "=", geo.id), page);
}

async function memberPage(
  ctx: RequestContext,
  query: ReturnType<typeof personsWithSites>,
  page: PageRequest,
): Promise<Page<SiteMember>> {
  const result = await fetchPage(withPersonRoles(query, ctx.clock.nowMs()), ["p.id"], (row) => [row.id], page);
  return { ...result, items: result.items.map(toMember) };
}

function toMember(row: PersonRow & PersonRoles): SiteMember {
  return {
    id: row.id,
    alias: row.alias,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phone: row.phone,
    language: row.language,
    isWhiteLabelSiteAdmin: row.role === "whitelabel-admin",
    whiteLabelSiteId: row.white_label_site_id,
    countryCode: row.country_code,
    divisionCode: row.division_code,
    created: new Date(row.created_at),
    lastLoggedIn: row.last_logged_in === null ? null : new Date(row.last_logged_in),
    lastIp: row.last_ip,
    isEmailValidated: row.is_email_validated === 1,
    isAlive: row.is_alive === 1,
    geoSiteName: row.geo_name,
    isGeoSiteAdmin: row.role === "geo-admin",
    isManager: row.is_manager === 1,
    isInvestor: row.is_investor === 1,
  };
}
