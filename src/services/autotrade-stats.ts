import { SECURITY_TYPE_CLASSES, type SecurityTypeCode } from "../core/autotrade/stats.js";
import { refuse } from "../core/errors.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { siteFilters } from "./site-filters.js";

/**
 * GetAutotradeStats: the daily snapshots (autotrade-snapshots.ts) of the
 * accounts of the caller's site (white-label administrators their site's
 * customers, geo-site administrators their geo-site's members, service
 * admins every account), narrowed by the filters, oldest day first. Without
 * StartDate and EndDate: the latest day's. Not paginated (the spec lists
 * none), so an answer is bounded instead: more than MAX_STATS_ROWS
 * snapshots is refused, never cut short.
 */
export interface StatsFilters {
  readonly whiteLabelSiteId?: number | undefined;
  readonly geoSite?: string | undefined;
  readonly brokerId?: number | undefined;
  readonly securityType?: SecurityTypeCode | undefined;
  readonly disabled?: boolean | undefined;
  readonly autoSync?: boolean | undefined;
  readonly manualConfirmation?: boolean | undefined;
  readonly brokerEnabled?: boolean | undefined;
  /** Days (DateUtc, their UTC midnight) from this instant on. */
  readonly startDate?: Date | undefined;
  /** Days before this instant. */
  readonly endDate?: Date | undefined;
}

/** The most snapshots one answer holds: two days of 10,000 accounts. */
export const MAX_STATS_ROWS = 20_000;

const flag = (value: boolean) => (value ? 1 : 0);

export async function autotradeStats(ctx: RequestContext, filters: StatsFilters) {
  const { caller } = ctx;
  const { startDate, endDate } = filters;
  if (startDate && endDate && endDate.getTime() <= startDate.getTime())
    throw refuse("InvalidValue", { field: "EndDate", message: "EndDate must be after StartDate" });
  const db = dbOf(ctx);
  const sites = await siteFilters(db, caller, filters);
  let query = db
    .selectFrom("autotrade_stats as t")
    .innerJoin("broker_accounts as b", "b.account_id", "t.account_id")
    .innerJoin("persons as p", "p.id", "t.person_id")
    .selectAll("t")
    .select(["b.account_number", "p.email", "p.first_name", "p.last_name"]);
  switch (caller.role) {
    case "admin":
      break;
    case "whitelabel-admin":
      query = query.where("t.white_label_site_id", "=", caller.whiteLabelSiteId ?? -1);
      break;
    case "geo-admin":
      query = query.where("t.geo_site_id", "=", caller.geoSiteId ?? -1);
      break;
    case "person":
      throw refuse("Forbidden", { message: "GetAutotradeStats is for site administrators" });
  }
  if (sites.whiteLabelSiteId !== undefined) query = query.where("t.white_label_site_id", "=", sites.whiteLabelSiteId);
  if (sites.geoSiteId !== undefined) query = query.where("t.geo_site_id", "=", sites.geoSiteId);
  if (filters.brokerId !== undefined) query = query.where("t.broker_id", "=", filters.brokerId);
  if (filters.securityType !== undefined)
    query = query.where(`t.autotraded_${SECURITY_TYPE_CLASSES[filters.securityType]}`, ">", 0);
  if (filters.disabled !== undefined) query = query.where("t.is_disabled", "=", flag(filters.disabled));
  if (filters.autoSync !== undefined) query = query.where("t.is_sync_enabled", "=", flag(filters.autoSync));
  if (filters.manualConfirmation !== undefined)
    query = query.where("t.is_manual_confirmation", "=", flag(filters.manualConfirmation));
  if (filters.brokerEnabled !== undefined) query = query.where("t.is_broker_enabled", "=", flag(filters.brokerEnabled));
  if (startDate || endDate) {
    if (startDate) query = query.where("t.day_at", ">=", startDate.getTime());
    if (endDate) query = query.where("t.day_at", "<", endDate.getTime());
  } else {
    const latest = await db
      .selectFrom("autotrade_stats")
      .select((eb) => eb.fn.max("day_at").as("day_at"))
      .executeTakeFirst();
    if (latest?.day_at === null || latest?.day_at === undefined) return [];
    query = query.where("t.day_at", "=", Number(latest.day_at));
  }
  const rows = await query
    .orderBy("t.day_at")
    .orderBy("t.id")
    .limit(MAX_STATS_ROWS + 1)
    .execute();
  if (rows.length > MAX_STATS_ROWS)
    throw refuse("InvalidValue", {
      field: "StartDate",
      message: `The answer would hold more than ${MAX_STATS_ROWS} snapshots: narrow the window (StartDate, EndDate) or filter`,
      meta: { MaxRows: MAX_STATS_ROWS },
    });
  return rows;
}

export type StatsRow = Awaited<ReturnType<typeof autotradeStats>>[number];
