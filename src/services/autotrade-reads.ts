import { sql } from "kysely";
import { administers, type Caller } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import type { Tx } from "../store/transaction.js";
import { memberOf, personsWithSites } from "./person-view.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * The v4 reads of autotrade setups: the brokers, a person's setups with
 * their settings, and the autotraders of strategies. Only live setups (not
 * stopped; a stop requested but not yet applied is still live) are read
 * (docs/decisions.md, "Autotrade setups over the API (issue 13)").
 */

export const LIVE_SETUP_STATUSES = ["active", "stop_requested"] as const;

/** GetBrokers: the brokers, enabled ones only unless asked for every one. */
export async function brokers(ctx: RequestContext, includeDisabled: boolean) {
  let query = dbOf(ctx).selectFrom("brokers").selectAll().orderBy("id");
  if (!includeDisabled) query = query.where("is_enabled", "=", 1);
  return query.execute();
}

/** Live setups with their account, broker, strategy and person (and the person's sites). */
export function setupRows(db: Tx) {
  return db
    .selectFrom("autotrade_setups as s")
    .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
    .innerJoin("brokers as br", "br.id", "s.broker_id")
    .innerJoin("strategies as st", "st.id", "s.strategy_id")
    .innerJoin("persons as p", "p.id", "s.person_id")
    .leftJoin("sites as ws", "ws.id", "p.white_label_site_id")
    .leftJoin("sites as gs", (join) => join.on(sql`gs.id`, "=", sql`coalesce(p.geo_site_id, ws.geo_site_id)`))
    .selectAll("s")
    .select([
      "b.account_number",
      "b.account_type",
      "b.currency",
      "b.broker_username",
      "b.is_linked",
      "b.net_liquidation",
      "b.net_liquidation_at",
      "b.first_activation_at",
      "br.name as broker_name",
      "br.connection_name",
      "br.is_enabled as broker_is_enabled",
      "st.name as strategy_name",
      "st.owner_person_id",
      "p.first_name",
      "p.last_name",
      "p.email",
      "p.country_code",
      "p.division_code",
      "p.language",
      sql<string | null>`coalesce(ws.domain, gs.domain)`.as("site_domain"),
    ])
    .where("s.status", "in", LIVE_SETUP_STATUSES);
}

export type SetupView = Awaited<ReturnType<ReturnType<typeof setupRows>["executeTakeFirstOrThrow"]>>;

/** The person, when the caller is the person or one of their administrators; 404 or 403 otherwise. */
export async function personActedOn(db: Tx, caller: Caller, personId: number): Promise<void> {
  const person = await personsWithSites(db).where("p.id", "=", personId).executeTakeFirst();
  if (!person) throw refuse("NotFound", { field: "PersonId", message: `No person ${personId}` });
  const member = memberOf(person);
  if (caller.personId !== member.personId && !administers(caller, member)) {
    throw refuse("Forbidden", { field: "PersonId", message: "Only the person and their administrators" });
  }
}

/** GetAutotradeSettings: the person's live setups (of one account if named), oldest first. */
export async function autotradeSettings(ctx: RequestContext, personId: number, account: string | undefined) {
  const db = dbOf(ctx);
  await personActedOn(db, ctx.caller, personId);
  let query = setupRows(db).where("s.person_id", "=", personId);
  if (account !== undefined) query = query.where("b.account_number", "=", account);
  return query.orderBy("s.id").execute();
}

/** GetAutotradedStrategies: the person's live setups (of one account if named), a page of them. */
export async function autotradedStrategies(
  ctx: RequestContext,
  personId: number,
  account: string | undefined,
  page: PageRequest,
): Promise<Page<SetupView>> {
  const db = dbOf(ctx);
  await personActedOn(db, ctx.caller, personId);
  let query = setupRows(db).where("s.person_id", "=", personId);
  if (account !== undefined) query = query.where("b.account_number", "=", account);
  return fetchPage(query, ["s.id"], (row) => [row.id], page);
}

export interface AutotraderFilters {
  readonly strategyId?: number | undefined;
  readonly brokerId?: number | undefined;
  readonly whiteLabelSiteId?: number | undefined;
}

/**
 * GetAutotraders: the live setups matching every filter, within what the
 * caller may see: service admins every one; a strategy's owner those on
 * their own strategies; a white-label administrator also those of its
 * site's customers, a geo-site administrator those of its geo-site's members
 * (docs/decisions.md). A white-label administrator naming another site is
 * refused, as everywhere a site is named.
 */
export async function autotraders(
  ctx: RequestContext,
  filters: AutotraderFilters,
  page: PageRequest,
): Promise<Page<SetupView>> {
  const caller = ctx.caller;
  if (
    filters.whiteLabelSiteId !== undefined &&
    caller.role === "whitelabel-admin" &&
    filters.whiteLabelSiteId !== caller.whiteLabelSiteId
  ) {
    throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not an administrator of that site" });
  }
  let query = setupRows(dbOf(ctx));
  const ownStrategies = sql<boolean>`st.owner_person_id = ${Number(caller.personId)}`;
  switch (caller.role) {
    case "admin":
      break;
    case "whitelabel-admin":
      query = query.where(sql<boolean>`(${ownStrategies} or p.white_label_site_id = ${caller.whiteLabelSiteId ?? -1})`);
      break;
    case "geo-admin":
      query = query.where(
        sql<boolean>`(${ownStrategies} or coalesce(p.geo_site_id, ws.geo_site_id) = ${caller.geoSiteId ?? -1})`,
      );
      break;
    case "person":
      query = query.where(ownStrategies);
      break;
  }
  if (filters.strategyId !== undefined) query = query.where("s.strategy_id", "=", filters.strategyId);
  if (filters.brokerId !== undefined) query = query.where("s.broker_id", "=", filters.brokerId);
  if (filters.whiteLabelSiteId !== undefined)
    query = query.where("p.white_label_site_id", "=", filters.whiteLabelSiteId);
  return fetchPage(query, ["s.id"], (row) => [row.id], page);
}
