import { type RawBuilder, sql } from "kysely";
import { refuse } from "../core/errors.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import { approvedSql } from "./account-approval.js";
import { autotradersVisibleTo, type SetupView, setupRows } from "./autotrade-reads.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * SearchAutotradedAccounts: the live setups (an account autotrading a
 * strategy) matching every filter, within what the caller may see among
 * autotraders (GetAutotraders' rule). At least one filter is required
 * (API.md Errors).
 */
export interface AutotradedAccountFilters {
  readonly strategyId?: number | undefined;
  readonly brokerId?: number | undefined;
  readonly autoSyncEnabled?: boolean | undefined;
  readonly autoTradeEnabled?: boolean | undefined;
  readonly autoTradingNow?: boolean | undefined;
  /** The setup started at or after. */
  readonly startDate?: Date | undefined;
  /** The setup started before. */
  readonly endDate?: Date | undefined;
}

const FILTER_NAMES = [
  "StrategyId",
  "BrokerId",
  "AutoSyncEnabled",
  "AutoTradeEnabled",
  "AutoTradingNow",
  "StartDate",
  "EndDate",
] as const;

/** Autotrade enabled: an active setup whose autotrade is on (a requested stop shows disabled). */
const enabledSql = () => sql<boolean>`(s.status = 'active' and s.is_autotrade_enabled = 1)`;

/**
 * Copying now (IsAutotrading): enabled, the account linked, its broker
 * enabled, and approved where its geo-site requires it.
 */
export function autotradingNowSql(): RawBuilder<number> {
  return sql<number>`case when ${enabledSql()} and b.is_linked = 1 and br.is_enabled = 1 and ${approvedSql("gs")} then 1 else 0 end`;
}

export async function searchAutotradedAccounts(
  ctx: RequestContext,
  filters: AutotradedAccountFilters,
  page: PageRequest,
): Promise<Page<SetupView & { readonly autotrading_now: number }>> {
  if (Object.values(filters).every((value) => value === undefined)) {
    throw refuse("MissingValue", {
      field: FILTER_NAMES[0],
      message: `At least one of ${FILTER_NAMES.join(", ")} is required`,
    });
  }
  const { startDate, endDate } = filters;
  if (startDate && endDate && endDate.getTime() <= startDate.getTime())
    throw refuse("InvalidValue", { field: "EndDate", message: "EndDate must be after StartDate" });
  let query = setupRows(dbOf(ctx))
    .select(autotradingNowSql().as("autotrading_now"))
    .where(autotradersVisibleTo(ctx.caller));
  if (filters.strategyId !== undefined) query = query.where("s.strategy_id", "=", filters.strategyId);
  if (filters.brokerId !== undefined) query = query.where("s.broker_id", "=", filters.brokerId);
  if (filters.autoSyncEnabled !== undefined)
    query = query.where("s.is_sync_enabled", "=", filters.autoSyncEnabled ? 1 : 0);
  if (filters.autoTradeEnabled !== undefined)
    query = query.where(filters.autoTradeEnabled ? enabledSql() : sql<boolean>`not ${enabledSql()}`);
  if (filters.autoTradingNow !== undefined)
    query = query.where(autotradingNowSql(), "=", filters.autoTradingNow ? 1 : 0);
  if (startDate) query = query.where("s.started_at", ">=", startDate.getTime());
  if (endDate) query = query.where("s.started_at", "<", endDate.getTime());
  return fetchPage(query, ["s.id"], (row) => [row.id], page);
}
