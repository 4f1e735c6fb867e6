import { refuse } from "../core/errors.js";
import { centsOfText } from "../core/money.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import { type Tx, withTransaction } from "../store/transaction.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { commerceSite } from "./site-scope.js";

/**
 * A white-label site's resale catalog: marketplace strategies the site sells
 * to its customers at the owner's monthly price (the wholesale price its
 * house account pays) plus the site's markup, under the site's display name
 * and descriptions where it set them (docs/decisions.md "White-label
 * commerce").
 */

export interface CatalogEntry {
  readonly siteId: number;
  readonly strategyId: number;
  readonly strategyName: string;
  /** The site's own name for it; null: shown under its original name. */
  readonly displayName: string | null;
  /** The site's descriptions where it set them, else the strategy's published ones. */
  readonly shortDescription: string | null;
  readonly longDescription: string | null;
  readonly baseMonthlyCents: number;
  readonly markupCents: number;
  readonly addedAt: number;
  readonly updatedAt: number;
}

function catalogRows(tx: Tx, siteId: number) {
  return tx
    .selectFrom("site_catalog as c")
    .innerJoin("strategies as s", "s.id", "c.strategy_id")
    .select([
      "c.site_id",
      "c.strategy_id",
      "s.name",
      "c.display_name",
      "c.short_description",
      "c.long_description",
      "s.short_description as strategy_short_description",
      "s.long_description as strategy_long_description",
      "s.monthly_cost",
      "c.markup_cents",
      "c.added_at",
      "c.updated_at",
    ])
    .where("c.site_id", "=", siteId);
}

type CatalogRow = Awaited<ReturnType<ReturnType<typeof catalogRows>["executeTakeFirstOrThrow"]>>;

const entryOf = (row: CatalogRow): CatalogEntry => ({
  siteId: row.site_id,
  strategyId: row.strategy_id,
  strategyName: row.name,
  displayName: row.display_name,
  shortDescription: row.short_description ?? row.strategy_short_description,
  longDescription: row.long_description ?? row.strategy_long_description,
  baseMonthlyCents: centsOfText(row.monthly_cost) ?? 0,
  markupCents: Number(row.markup_cents),
  addedAt: row.added_at,
  updatedAt: row.updated_at,
});

/** GetSiteCatalog: the site's catalog, by strategy id. */
export async function siteCatalog(
  ctx: RequestContext,
  requestedSiteId: number | undefined,
  page: PageRequest,
): Promise<Page<CatalogEntry>> {
  const db = dbOf(ctx);
  const site = await commerceSite(ctx, db, requestedSiteId);
  const result = await fetchPage(catalogRows(db, site.id), ["c.strategy_id"], (row) => [row.strategy_id], page);
  return { ...result, items: result.items.map(entryOf) };
}

export type CatalogAction = "Add" | "Remove";
export type CatalogOutcome = "added" | "already_in_catalog" | "removed" | "not_in_catalog" | "refused";

export interface CatalogUpdateResult {
  readonly strategyId: number;
  readonly outcome: CatalogOutcome;
  readonly reason: string | null;
  /** Remove: the site's customers holding a live resold subscription to the strategy. */
  readonly activeSubscriberCount: number | null;
}

/**
 * UpdateSiteCatalog: adds or removes each strategy on its own, reporting
 * each. A strategy already in the asked state succeeds as it is, so a replay
 * changes nothing.
 */
export async function updateSiteCatalog(
  ctx: RequestContext,
  input: {
    readonly siteId: number | undefined;
    readonly strategyIds: readonly number[];
    readonly action: CatalogAction;
  },
): Promise<CatalogUpdateResult[]> {
  return withTransaction(ctx, async ({ tx }) => {
    const site = await commerceSite(ctx, tx, input.siteId);
    const now = ctx.clock.nowMs();
    const inCatalog = new Set(
      (
        await tx
          .selectFrom("site_catalog")
          .select("strategy_id")
          .where("site_id", "=", site.id)
          .where("strategy_id", "in", input.strategyIds)
          .execute()
      ).map((row) => row.strategy_id),
    );
    const results: CatalogUpdateResult[] = [];
    for (const strategyId of input.strategyIds) {
      results.push(
        input.action === "Add"
          ? await add(tx, site.id, strategyId, inCatalog.has(strategyId), now)
          : await remove(tx, site.id, strategyId, inCatalog.has(strategyId), now),
      );
    }
    return results;
  });
}

async function add(
  tx: Tx,
  siteId: number,
  strategyId: number,
  present: boolean,
  now: number,
): Promise<CatalogUpdateResult> {
  const result = (outcome: CatalogOutcome, reason: string | null = null): CatalogUpdateResult => ({
    strategyId,
    outcome,
    reason,
    activeSubscriberCount: null,
  });
  if (present) return result("already_in_catalog");
  const reason = await whyNotResellable(tx, siteId, strategyId);
  if (reason !== null) return result("refused", reason);
  await tx
    .insertInto("site_catalog")
    .values({ site_id: siteId, strategy_id: strategyId, added_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(["site_id", "strategy_id"]).doNothing())
    .execute();
  return result("added");
}

/** Why the site may not resell the strategy, or null when it may. */
async function whyNotResellable(tx: Tx, siteId: number, strategyId: number): Promise<string | null> {
  const strategy = await tx
    .selectFrom("strategies")
    .select(["is_private", "is_alive", "white_label_site_id", "monthly_cost"])
    .where("id", "=", strategyId)
    .executeTakeFirst();
  if (strategy?.white_label_site_id === siteId) {
    return "The site owns this strategy: grant access with WhiteLabelStartSubscription, no catalog needed";
  }
  // A private strategy of someone else's is, to this site, no strategy at all.
  if (!strategy || strategy.is_private === 1) return `No strategy ${strategyId}`;
  if (strategy.is_alive !== 1) return "The strategy is no longer alive";
  if ((centsOfText(strategy.monthly_cost) ?? 0) <= 0) return "The strategy has no monthly price to resell at";
  return null;
}

async function remove(
  tx: Tx,
  siteId: number,
  strategyId: number,
  present: boolean,
  now: number,
): Promise<CatalogUpdateResult> {
  if (!present) return { strategyId, outcome: "not_in_catalog", reason: null, activeSubscriberCount: 0 };
  const count = await activeResoldSubscribers(tx, siteId, strategyId, now);
  if (count > 0) {
    return {
      strategyId,
      outcome: "refused",
      reason: `${count} customer(s) of the site hold a live subscription to it: stop them first`,
      activeSubscriberCount: count,
    };
  }
  await tx.deleteFrom("site_catalog").where("site_id", "=", siteId).where("strategy_id", "=", strategyId).execute();
  return { strategyId, outcome: "removed", reason: null, activeSubscriberCount: 0 };
}

/** The site's customers with a live subscription to the strategy resold by the site (simulated ones never count). */
async function activeResoldSubscribers(tx: Tx, siteId: number, strategyId: number, now: number): Promise<number> {
  const row = await tx
    .selectFrom("subscriptions as sub")
    .innerJoin("persons as p", "p.id", "sub.person_id")
    .select((eb) => eb.fn.count<string | number>("sub.id").as("count"))
    .where("sub.strategy_id", "=", strategyId)
    .where("sub.site_id", "=", siteId)
    .where("sub.lane", "=", "resale")
    .where("sub.kind", "=", "real")
    .where("p.white_label_site_id", "=", siteId)
    .where((eb) => eb.or([eb("sub.ended_at", "is", null), eb("sub.ended_at", ">", now)]))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export interface CatalogPricing {
  readonly siteId: number | undefined;
  readonly strategyId: number;
  readonly markupCents: number;
  /** Stated every call: null or "" shows the original name. */
  readonly displayName: string | null;
  /** Omitted: kept; "": the strategy's own description shows again. */
  readonly shortDescription?: string | undefined;
  readonly longDescription?: string | undefined;
}

/** WhiteLabelUpdateSiteCatalogPricing: the site's markup and presentation of one catalog strategy. */
export async function priceCatalogStrategy(ctx: RequestContext, input: CatalogPricing): Promise<CatalogEntry> {
  return withTransaction(ctx, async ({ tx }) => {
    const site = await commerceSite(ctx, tx, input.siteId);
    const strategy = await tx
      .selectFrom("strategies")
      .select(["white_label_site_id", "is_private"])
      .where("id", "=", input.strategyId)
      .executeTakeFirst();
    if (strategy?.white_label_site_id === site.id) {
      throw refuse("WrongState", {
        field: "StrategyId",
        message: "The site owns this strategy: the service charges its customers nothing for it, so it has no markup",
      });
    }
    const blankIsNull = (text: string | undefined) => (text === undefined ? undefined : text === "" ? null : text);
    const shortDescription = blankIsNull(input.shortDescription);
    const longDescription = blankIsNull(input.longDescription);
    const updated = await tx
      .updateTable("site_catalog")
      .set({
        markup_cents: input.markupCents,
        display_name: input.displayName === "" ? null : input.displayName,
        ...(shortDescription !== undefined ? { short_description: shortDescription } : {}),
        ...(longDescription !== undefined ? { long_description: longDescription } : {}),
        updated_at: ctx.clock.nowMs(),
      })
      .where("site_id", "=", site.id)
      .where("strategy_id", "=", input.strategyId)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      if (!strategy || strategy.is_private === 1) {
        throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${input.strategyId}` });
      }
      throw refuse("WrongState", {
        field: "StrategyId",
        message: "The strategy is not in the site's resale catalog: add it with UpdateSiteCatalog first",
      });
    }
    return entryOf(
      await catalogRows(tx, site.id).where("c.strategy_id", "=", input.strategyId).executeTakeFirstOrThrow(),
    );
  });
}

/** The site's catalog entry for the strategy, if any (the resold lane's price). */
export async function catalogEntry(tx: Tx, siteId: number, strategyId: number): Promise<CatalogEntry | undefined> {
  const row = await catalogRows(tx, siteId).where("c.strategy_id", "=", strategyId).executeTakeFirst();
  return row && entryOf(row);
}
