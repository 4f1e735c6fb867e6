import { type Expression, type SqlBool, sql } from "kysely";
import type { Caller } from "../core/access.js";
import { CONNECTION_TYPES } from "../core/autotrade/account-approval.js";
import { PENDING_APPROVAL_STATUSES } from "../core/autotrade/approvals.js";
import { type SetupSettings, settingsOfStart, settingsOfText } from "../core/autotrade/settings.js";
import { SECURITY_TYPE_CLASSES, type SecurityTypeCode } from "../core/autotrade/stats.js";
import type { Tx } from "../store/transaction.js";
import { approvalRequiredSql, approvedSql } from "./account-approval.js";
import { requestBodyOf } from "./autotrade-approvals.js";
import { setupRows } from "./autotrade-reads.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { siteFilters } from "./site-filters.js";

/**
 * GetPendingAccounts: live (not paper) accounts waiting for an autotrade
 * approval. On WL the white-label approval requests not yet final (waiting
 * for the customer, being switched on, or for the account to reach the
 * service); on GEO the live setups of accounts whose geo-site requires
 * approval and has not given it (never, or it was deleted: Declined). Each
 * is shown to the administrators of its person, filters narrow.
 */
export interface PendingFilters {
  readonly whiteLabelSiteId?: number | undefined;
  readonly geoSite?: string | undefined;
  readonly brokerId?: number | undefined;
  readonly securityType?: SecurityTypeCode | undefined;
}

/** GEO statuses: never approved, or the approval was deleted (DeclinedUTC says when). */
export const GEO_PENDING_STATUSES = { pending: "PendingApproval", declined: "Declined" } as const;

export interface PendingView {
  /** The approval request (WL) or the setup (GEO). */
  readonly id: number;
  readonly status: string;
  readonly declinedAt: number | null;
  /** Since when it waits. */
  readonly since: number;
  readonly account: string;
  readonly personId: number;
  readonly brokerId: number;
  readonly brokerName: string;
  readonly connection: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly country: string | null;
  readonly state: string | null;
  readonly language: string | null;
  readonly whiteLabelSiteId: number | null;
  readonly geoSiteId: number | null;
  readonly siteDomain: string | null;
  readonly strategyId: number;
  readonly strategyName: string;
  readonly firstActivationAt: number | null;
  readonly netLiquidation: string | null;
  readonly netLiquidationAt: number | null;
  readonly settings: SetupSettings;
}

/** Whose pending accounts the caller sees: those of the people they administer (`geo` the people's geo-site). */
function administeredBy(caller: Caller, geo: string): Expression<SqlBool> {
  switch (caller.role) {
    case "admin":
      return sql<SqlBool>`1 = 1`;
    case "whitelabel-admin":
      return sql<SqlBool>`p.white_label_site_id = ${caller.whiteLabelSiteId ?? -1}`;
    case "geo-admin":
      return sql<SqlBool>`${sql.ref(`${geo}.id`)} = ${caller.geoSiteId ?? -1}`;
    case "person":
      return sql<SqlBool>`1 = 0`;
  }
}

export async function pendingAccounts(
  ctx: RequestContext,
  server: "WL" | "GEO",
  filters: PendingFilters,
): Promise<PendingView[]> {
  const db = dbOf(ctx);
  const sites = await siteFilters(db, ctx.caller, filters);
  const views =
    server === "WL"
      ? await pendingRequests(db, ctx.caller, sites, filters.brokerId, ctx.clock.nowMs())
      : await pendingGeoApprovals(db, ctx.caller, sites, filters.brokerId);
  const wanted = filters.securityType === undefined ? undefined : SECURITY_TYPE_CLASSES[filters.securityType];
  return views
    .filter((view) => wanted === undefined || view.settings[wanted].enabled)
    .sort((a, b) => a.since - b.since || a.id - b.id);
}

interface Sites {
  readonly whiteLabelSiteId?: number | undefined;
  readonly geoSiteId?: number | undefined;
}

/** WL: approval requests not final (nor past their expiry, which the scheduler marks at its next pass). */
async function pendingRequests(
  db: Tx,
  caller: Caller,
  sites: Sites,
  brokerId: number | undefined,
  nowMs: number,
): Promise<PendingView[]> {
  let query = db
    .selectFrom("autotrade_approvals as r")
    .innerJoin("strategies as st", "st.id", "r.strategy_id")
    .innerJoin("brokers as br", "br.id", "r.broker_id")
    .innerJoin("persons as p", "p.id", "r.person_id")
    .innerJoin("sites as rs", "rs.id", "r.site_id")
    .leftJoin("sites as ws", "ws.id", "p.white_label_site_id")
    .leftJoin("sites as g", (join) => join.on(sql`g.id`, "=", sql`coalesce(p.geo_site_id, ws.geo_site_id)`))
    .leftJoin("broker_accounts as b", (join) =>
      join.onRef("b.broker_id", "=", "r.broker_id").onRef("b.account_number", "=", "r.account_number"),
    )
    .selectAll("r")
    .select([
      "p.first_name",
      "p.last_name",
      "p.email",
      "p.country_code",
      "p.division_code",
      "p.language",
      "g.id as geo_id",
      sql<string | null>`coalesce(ws.domain, g.domain)`.as("site_domain"),
      "st.name as strategy_name",
      "br.name as broker_name",
      "br.connection_name",
      "b.first_activation_at",
      "b.net_liquidation",
      "b.net_liquidation_at",
    ])
    .where("r.status", "in", PENDING_APPROVAL_STATUSES)
    .where("r.expires_at", ">", nowMs)
    // A request for an account not at the service yet waits all the same; a paper account is no live one.
    .where((eb) => eb.or([eb("b.is_paper", "is", null), eb("b.is_paper", "=", 0)]))
    .where(
      caller.role === "geo-admin"
        ? sql<SqlBool>`rs.geo_site_id = ${caller.geoSiteId ?? -1}`
        : administeredBy(caller, "g"),
    );
  if (sites.whiteLabelSiteId !== undefined) query = query.where("r.site_id", "=", sites.whiteLabelSiteId);
  if (sites.geoSiteId !== undefined) query = query.where("rs.geo_site_id", "=", sites.geoSiteId);
  if (brokerId !== undefined) query = query.where("r.broker_id", "=", brokerId);
  const rows = await query.execute();
  return rows.map((row) =>
    viewOf(row, {
      id: row.id,
      status: row.status,
      declinedAt: null,
      since: row.created_at,
      whiteLabelSiteId: row.site_id,
      settings: settingsOfStart(requestBodyOf(row)),
    }),
  );
}

/** GEO: active setups of live accounts whose geo-site requires approval and has not given it. */
async function pendingGeoApprovals(
  db: Tx,
  caller: Caller,
  sites: Sites,
  brokerId: number | undefined,
): Promise<PendingView[]> {
  let query = setupRows(db)
    .select(
      sql<number | null>`(select max(aa.deleted_at) from approved_accounts aa
        where aa.account_id = b.account_id and aa.geo_site_id = gs.id
          and aa.connection_type = ${CONNECTION_TYPES.Autotrade})`.as("declined_at"),
    )
    .select(["gs.id as geo_id", "p.white_label_site_id"])
    .where("s.status", "=", "active")
    .where(approvalRequiredSql("gs"))
    .where(sql<SqlBool>`not ${approvedSql("gs")}`)
    .where(administeredBy(caller, "gs"));
  if (sites.whiteLabelSiteId !== undefined) query = query.where("p.white_label_site_id", "=", sites.whiteLabelSiteId);
  if (sites.geoSiteId !== undefined) query = query.where("gs.id", "=", sites.geoSiteId);
  if (brokerId !== undefined) query = query.where("s.broker_id", "=", brokerId);
  const rows = await query.execute();
  return rows.map((row) => {
    const declinedAt = row.declined_at === null ? null : Number(row.declined_at);
    return viewOf(row, {
      id: row.id,
      status: declinedAt === null ? GEO_PENDING_STATUSES.pending : GEO_PENDING_STATUSES.declined,
      declinedAt,
      // A setup waits from its start, or from the deletion of the approval it had.
      since: Math.max(row.started_at, declinedAt ?? 0),
      whiteLabelSiteId: row.white_label_site_id,
      settings: settingsOfText(row.settings),
    });
  });
}

/** What both kinds of waiting share: the account, its holder, broker and strategy. */
interface PendingRowFields {
  readonly account_number: string;
  readonly person_id: number;
  readonly broker_id: number;
  readonly broker_name: string;
  readonly connection_name: string;
  readonly first_name: string;
  readonly last_name: string;
  readonly email: string;
  readonly country_code: string | null;
  readonly division_code: string | null;
  readonly language: string | null;
  readonly geo_id: number | null;
  readonly site_domain: string | null;
  readonly strategy_id: number;
  readonly strategy_name: string;
  readonly first_activation_at: number | null;
  readonly net_liquidation: string | null;
  readonly net_liquidation_at: number | null;
}

function viewOf(
  row: PendingRowFields,
  own: Pick<PendingView, "id" | "status" | "declinedAt" | "since" | "whiteLabelSiteId" | "settings">,
): PendingView {
  return {
    ...own,
    account: row.account_number,
    personId: row.person_id,
    brokerId: row.broker_id,
    brokerName: row.broker_name,
    connection: row.connection_name,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    country: row.country_code,
    state: row.division_code,
    language: row.language,
    geoSiteId: row.geo_id,
    siteDomain: row.site_domain,
    strategyId: row.strategy_id,
    strategyName: row.strategy_name,
    firstActivationAt: row.first_activation_at,
    netLiquidation: row.net_liquidation,
    netLiquidationAt: row.net_liquidation_at,
  };
}
