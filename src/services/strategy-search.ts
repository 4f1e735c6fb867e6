import { type Selectable, sql } from "kysely";
import { type Caller, isServiceAdmin } from "../core/access.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import { type SecurityType, SYMBOL_TYPES } from "../core/symbols/instrument.js";
import { matchesWildcards } from "../store/match.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import type { StrategiesTable } from "../store/schema.js";
import { TRADES_COLUMNS } from "../store/trading-state.js";
import { type Tx, withTransaction } from "../store/transaction.js";
import { autotradeFigures, figuresOf, ownerAutotrades } from "./autotrade-aum.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * Finding strategies: SearchStrategies and the curated leaderboard. Private
 * strategies never appear to others: a caller sees the public ones, its own,
 * and (administrators) those of the people it administers.
 */
export type StrategyListing = Selectable<StrategiesTable> & {
  /** Its owner autotrades it in their own brokerage account now (IsTradeOwnSystem). */
  readonly tradesOwnSystem: boolean;
};

/** The strategies with whether their owners autotrade them. */
export async function withOwnTrading(db: Tx, rows: readonly Selectable<StrategiesTable>[]): Promise<StrategyListing[]> {
  const figures = await autotradeFigures(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ ...row, tradesOwnSystem: figuresOf(figures, row.id).tradesOwnSystem }));
}

const tradesColumn = (securityType: SecurityType) => TRADES_COLUMNS[SYMBOL_TYPES[securityType]];

/** Strategies (`st`) with their owners (`o`) and owners' sites (`s`), limited to those the caller may see. */
export function visibleStrategies(tx: Tx, caller: Caller) {
  let query = tx
    .selectFrom("strategies as st")
    .innerJoin("persons as o", "o.id", "st.owner_person_id")
    .leftJoin("sites as s", "s.id", "o.white_label_site_id")
    .selectAll("st");
  if (isServiceAdmin(caller)) return query;
  query = query.where((eb) =>
    eb.or([
      eb("st.is_private", "=", 0),
      eb("st.owner_person_id", "=", caller.personId),
      ...(caller.role === "whitelabel-admin" && caller.whiteLabelSiteId !== null
        ? [eb("o.white_label_site_id", "=", caller.whiteLabelSiteId)]
        : []),
      ...(caller.role === "geo-admin" && caller.geoSiteId !== null
        ? [eb.or([eb("o.geo_site_id", "=", caller.geoSiteId), eb("s.geo_site_id", "=", caller.geoSiteId)])]
        : []),
    ]),
  );
  return query;
}

export interface StrategySearch {
  readonly securityType?: SecurityType | undefined;
  readonly createdBeforeMs?: number | undefined;
  readonly name?: string | undefined;
  readonly ownerPersonId?: number | undefined;
  readonly whiteLabelSiteId?: number | undefined;
  readonly isTradeOwnSystem?: boolean | undefined;
}

/** SearchStrategies: every filter together, oldest strategy first, paginated. */
export async function searchStrategies(
  ctx: RequestContext,
  filters: StrategySearch,
  page: PageRequest,
): Promise<Page<StrategyListing>> {
  let query = visibleStrategies(dbOf(ctx), ctx.caller);
  if (filters.securityType) query = query.where(`st.${tradesColumn(filters.securityType)}`, "=", 1);
  if (filters.createdBeforeMs !== undefined) query = query.where("st.created_at", "<", filters.createdBeforeMs);
  if (filters.name !== undefined && filters.name !== "")
    query = query.where(matchesWildcards("st.name_folded", filters.name));
  if (filters.ownerPersonId !== undefined) query = query.where("st.owner_person_id", "=", filters.ownerPersonId);
  if (filters.whiteLabelSiteId !== undefined)
    query = query.where("st.white_label_site_id", "=", filters.whiteLabelSiteId);
  if (filters.isTradeOwnSystem !== undefined)
    query = query.where(filters.isTradeOwnSystem ? ownerAutotrades : sql<boolean>`not ${ownerAutotrades}`);
  const found = await fetchPage(query, ["st.id"], (row) => [row.id], page);
  return { ...found, items: await withOwnTrading(dbOf(ctx), found.items) };
}

/** GetLeaderBoard: the curated strategies in rank order, those visible to the caller, of the security type. */
export async function leaderboard(ctx: RequestContext, securityType?: SecurityType): Promise<StrategyListing[]> {
  let query = visibleStrategies(dbOf(ctx), ctx.caller)
    .innerJoin("leaderboard as lb", "lb.strategy_id", "st.id")
    .where("st.is_alive", "=", 1);
  if (securityType) query = query.where(`st.${tradesColumn(securityType)}`, "=", 1);
  return withOwnTrading(dbOf(ctx), await query.orderBy("lb.rank").execute());
}

/**
 * Replaces the leaderboard with these strategies, in this order (service
 * admins). Only public, live strategies may be ranked.
 */
export async function setLeaderboard(ctx: RequestContext, strategyIds: readonly number[]): Promise<number[]> {
  return withTransaction(ctx, async ({ tx }) => {
    const errors: ErrorEntry[] = [];
    if (new Set(strategyIds).size !== strategyIds.length) {
      throw refuse("InvalidValue", { field: "StrategyIds", message: "A strategy is listed twice" });
    }
    const rows =
      strategyIds.length === 0
        ? []
        : await tx
            .selectFrom("strategies")
            .select(["id", "is_private", "is_alive"])
            .where("id", "in", [...strategyIds])
            .execute();
    strategyIds.forEach((id, index) => {
      const row = rows.find((r) => r.id === id);
      const field = `StrategyIds[${index}]`;
      if (!row) errors.push({ name: "NotFound", field, message: `No strategy ${id}` });
      else if (row.is_private === 1 || row.is_alive !== 1) {
        errors.push({ name: "InvalidValue", field, message: `Strategy ${id} is not public and live` });
      }
    });
    if (errors.length > 0) throw new Refusal(errors);
    await tx.deleteFrom("leaderboard").execute();
    if (strategyIds.length > 0) {
      await tx
        .insertInto("leaderboard")
        .values(strategyIds.map((strategy_id, index) => ({ rank: index + 1, strategy_id })))
        .execute();
    }
    return [...strategyIds];
  });
}
