import { sql } from "kysely";
import { administers, membership } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { contains, containsIgnoringCase } from "../store/match.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import { approvedAccountsOf } from "./geo-approvals.js";
import { withPersonRoles } from "./person-roles.js";
import type { PersonView } from "./person-view.js";
import { personsWithSites, viewPerson } from "./person-view.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { findSite } from "./sites-lookup.js";

export interface ProfileFilters {
  readonly personId?: number | undefined;
  readonly firstName?: string | undefined;
  readonly lastName?: string | undefined;
  readonly email?: string | undefined;
  readonly whiteLabelSiteId?: number | undefined;
  readonly countryCode?: string | undefined;
  readonly divisionCode?: string | undefined;
  readonly ipAddress?: string | undefined;
  /** Matches verified numbers only. */
  readonly phone?: string | undefined;
  readonly isAlive?: boolean | undefined;
  readonly isEmailValidated?: boolean | undefined;
}

/**
 * People matching every given filter (text filters match any part, without
 * regard to case), within what the caller administers: service admins
 * everyone, geo-site admins their geo-site with its white-label sites,
 * white-label admins their own site.
 */
export async function searchProfiles(
  ctx: RequestContext,
  filters: ProfileFilters,
  includeIcon: boolean,
  page: PageRequest,
): Promise<Page<PersonView>> {
  const { caller } = ctx;
  const db = dbOf(ctx);
  if (filters.whiteLabelSiteId !== undefined) {
    const site = await findSite(db, filters.whiteLabelSiteId);
    if (site?.kind !== "whitelabel" || !administers(caller, membership(site.id, site.geo_site_id))) {
      throw refuse("Forbidden", {
        field: "WhiteLabelSiteId",
        message: "Not an administrator of that white-label site",
      });
    }
  }
  let query = withPersonRoles(personsWithSites(db), ctx.clock.nowMs());
  switch (caller.role) {
    case "admin":
      break;
    case "whitelabel-admin":
      query = query.where("p.white_label_site_id", "=", caller.whiteLabelSiteId);
      break;
    case "geo-admin":
      query = query.where(sql.ref("g.id"), "=", caller.geoSiteId);
      break;
    case "person":
      throw refuse("Forbidden", { message: "SearchProfiles is for administrators" });
  }
  if (filters.personId !== undefined) query = query.where("p.id", "=", filters.personId);
  if (filters.whiteLabelSiteId !== undefined)
    query = query.where("p.white_label_site_id", "=", filters.whiteLabelSiteId);
  if (filters.firstName) query = query.where(contains("p.first_name_folded", filters.firstName));
  if (filters.lastName) query = query.where(contains("p.last_name_folded", filters.lastName));
  if (filters.email) query = query.where(contains("p.email", filters.email));
  if (filters.countryCode) query = query.where(containsIgnoringCase("p.country_code", filters.countryCode));
  if (filters.divisionCode) query = query.where(containsIgnoringCase("p.division_code", filters.divisionCode));
  if (filters.ipAddress) query = query.where(containsIgnoringCase("p.last_ip", filters.ipAddress));
  if (filters.phone) query = query.where("p.is_phone_verified", "=", 1).where(contains("p.phone", filters.phone));
  if (filters.isAlive !== undefined) query = query.where("p.is_alive", "=", filters.isAlive ? 1 : 0);
  if (filters.isEmailValidated !== undefined) {
    query = query.where("p.is_email_validated", "=", filters.isEmailValidated ? 1 : 0);
  }
  const result = await fetchPage(query, ["p.id"], (row) => [row.id], page);
  const approvals = await approvedAccountsOf(
    db,
    result.items.map((row) => row.id),
  );
  return { ...result, items: result.items.map((row) => viewPerson(caller, row, includeIcon, approvals)) };
}
