import { type Expression, type SqlBool, sql } from "kysely";
import type { Caller } from "../core/access.js";
import { contains, containsIgnoringCase } from "../store/match.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import type { Tx } from "../store/transaction.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { siteFilters } from "./site-filters.js";

/**
 * SearchAccounts: brokerage accounts matching every given filter, within
 * what the caller may see: their own accounts; a white-label site's
 * administrators also its customers'; a geo-site's administrators its
 * members' (white-label members inside it included), whose accounts they
 * approve; service admins every one. Text filters match any part without
 * regard to case; ids match exactly.
 */
export interface AccountFilters {
  readonly account?: string | undefined;
  readonly personId?: number | undefined;
  readonly brokerId?: number | undefined;
  readonly firstName?: string | undefined;
  readonly lastName?: string | undefined;
  readonly email?: string | undefined;
  readonly whiteLabelSiteId?: number | undefined;
  readonly countryCode?: string | undefined;
  readonly ipAddress?: string | undefined;
  /** Matches verified numbers only, as SearchProfiles does. */
  readonly phone?: string | undefined;
}

/** Brokerage accounts with their broker, holder and the holder's sites (`ws` white-label, `g` geo-site). */
export function accountRows(db: Tx) {
  return db
    .selectFrom("broker_accounts as b")
    .innerJoin("brokers as br", "br.id", "b.broker_id")
    .innerJoin("persons as p", "p.id", "b.person_id")
    .leftJoin("sites as ws", "ws.id", "p.white_label_site_id")
    .leftJoin("sites as g", (join) => join.on(sql`g.id`, "=", sql`coalesce(p.geo_site_id, ws.geo_site_id)`));
}

/** The rows the caller may see: whose person is the caller, or one they administer. */
export function personVisibleTo(caller: Caller): Expression<SqlBool> {
  const me = Number(caller.personId);
  switch (caller.role) {
    case "admin":
      return sql<SqlBool>`1 = 1`;
    case "whitelabel-admin":
      return sql<SqlBool>`(p.id = ${me} or p.white_label_site_id = ${caller.whiteLabelSiteId ?? -1})`;
    case "geo-admin":
      return sql<SqlBool>`(p.id = ${me} or coalesce(p.geo_site_id, ws.geo_site_id) = ${caller.geoSiteId ?? -1})`;
    case "person":
      return sql<SqlBool>`p.id = ${me}`;
  }
}

export async function searchAccounts(ctx: RequestContext, filters: AccountFilters, page: PageRequest) {
  const db = dbOf(ctx);
  await siteFilters(db, ctx.caller, { whiteLabelSiteId: filters.whiteLabelSiteId });
  let query = accountRows(db)
    .select([
      "b.account_id",
      "b.person_id",
      "b.account_number",
      "b.broker_id",
      "b.created_at",
      "br.name as broker_name",
      "p.first_name",
      "p.last_name",
      "p.email",
      "p.language",
      "p.white_label_site_id",
      "p.country_code",
      "p.division_code",
      "g.name as geo_name",
    ])
    .where(personVisibleTo(ctx.caller));
  if (filters.account) query = query.where(containsIgnoringCase("b.account_number", filters.account));
  if (filters.personId !== undefined) query = query.where("b.person_id", "=", filters.personId);
  if (filters.brokerId !== undefined) query = query.where("b.broker_id", "=", filters.brokerId);
  if (filters.firstName) query = query.where(contains("p.first_name_folded", filters.firstName));
  if (filters.lastName) query = query.where(contains("p.last_name_folded", filters.lastName));
  if (filters.email) query = query.where(contains("p.email", filters.email));
  if (filters.whiteLabelSiteId !== undefined)
    query = query.where("p.white_label_site_id", "=", filters.whiteLabelSiteId);
  if (filters.countryCode) query = query.where(containsIgnoringCase("p.country_code", filters.countryCode));
  if (filters.ipAddress) query = query.where(containsIgnoringCase("p.last_ip", filters.ipAddress));
  if (filters.phone) query = query.where("p.is_phone_verified", "=", 1).where(contains("p.phone", filters.phone));
  return fetchPage(query, ["b.account_id"], (row) => [row.account_id], page);
}

export type AccountSearchRow = Awaited<ReturnType<typeof searchAccounts>> extends Page<infer R> ? R : never;
