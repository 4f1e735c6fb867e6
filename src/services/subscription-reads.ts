import { sql } from "kysely";
import { administers, type Caller, isServiceAdmin, whiteLabelScope } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { asSiteId } from "../core/ids.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import { STRATEGY_COLUMNS } from "../store/trading-state.js";
import type { Tx } from "../store/transaction.js";
import { maySeeStrategy, mayTrade, noStrategy } from "./order-access.js";
import { memberOf, personsWithSites } from "./person-view.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * The v4 reads of subscriptions: a person's subscribed strategies, a
 * strategy's subscribers, and the revenue rows of paid subscriptions. Each
 * walks one index in id order (keyset pages), so a page costs the same over
 * a hundred rows or a hundred thousand.
 */

/** A subscription with its strategy and its subscriber, as the reads answer it. */
function subscriptionRows(db: Tx) {
  return db
    .selectFrom("subscriptions as s")
    .innerJoin("strategies as st", "st.id", "s.strategy_id")
    .innerJoin("persons as p", "p.id", "s.person_id")
    .leftJoin("sites as ws", "ws.id", "p.white_label_site_id")
    .selectAll("s")
    .select([
      "st.name as strategy_name",
      "st.owner_person_id",
      "p.alias",
      "p.first_name",
      "p.last_name",
      "p.email",
      "p.white_label_site_id as subscriber_site_id",
      sql<number | null>`coalesce(p.geo_site_id, ws.geo_site_id)`.as("subscriber_geo_site_id"),
    ]);
}

export type SubscriptionView = Awaited<ReturnType<ReturnType<typeof subscriptionRows>["executeTakeFirstOrThrow"]>>;

const live = (nowMs: number) => sql<boolean>`(s.ended_at is null or s.ended_at > ${nowMs})`;

const pageOf = (query: ReturnType<typeof subscriptionRows>, page: PageRequest): Promise<Page<SubscriptionView>> =>
  fetchPage(query, ["s.id"], (row) => [row.id], page);

/** Whether the subscription is live at `nowMs`. */
export const isLive = (row: { readonly ended_at: number | null }, nowMs: number): boolean =>
  row.ended_at === null || row.ended_at > nowMs;

/**
 * GetSubscribedStrategies: the person's subscriptions of every kind, live
 * ones only unless `activeOnly` is false. The person and their administrators
 * may read them; anyone else may see the person (profiles are public) but not
 * this: 403.
 */
export async function subscribedStrategies(
  ctx: RequestContext,
  personId: number,
  activeOnly: boolean,
  page: PageRequest,
): Promise<Page<SubscriptionView>> {
  const db = dbOf(ctx);
  const person = await personsWithSites(db).where("p.id", "=", personId).executeTakeFirst();
  if (!person) throw refuse("NotFound", { field: "PersonId", message: `No person ${personId}` });
  const member = memberOf(person);
  if (ctx.caller.personId !== member.personId && !administers(ctx.caller, member)) {
    throw refuse("Forbidden", { field: "PersonId", message: "Only the person and their administrators" });
  }
  let query = subscriptionRows(db).where("s.person_id", "=", personId);
  if (activeOnly) query = query.where(live(ctx.clock.nowMs()));
  return pageOf(query, page);
}

/**
 * GetSubscribers: the strategy's subscriptions, every one unless
 * `activeOnly`. Its owner, service admins and administrators of the owner's
 * sites (or of the strategy's site) read them all; another white-label
 * administrator reads the subscriptions of its own site's customers only (a
 * site reselling a marketplace strategy sees whom it sold to, never the
 * other sites' customers). Anyone else gets 403 for a strategy they may
 * see, 404 for one they may not.
 */
export async function strategySubscribers(
  ctx: RequestContext,
  strategyId: number,
  activeOnly: boolean,
  page: PageRequest,
): Promise<Page<SubscriptionView>> {
  const db = dbOf(ctx);
  const strategy = await db
    .selectFrom("strategies")
    .select(STRATEGY_COLUMNS)
    .where("id", "=", strategyId)
    .executeTakeFirst();
  if (!strategy || !(await maySeeStrategy(ctx, strategy))) throw noStrategy(strategyId);
  const whole = (await mayTrade(db, ctx.caller, strategy)) || ownSiteStrategy(ctx.caller, strategy.white_label_site_id);
  let query = subscriptionRows(db).where("s.strategy_id", "=", strategyId);
  if (!whole) {
    if (ctx.caller.role !== "whitelabel-admin" || ctx.caller.whiteLabelSiteId === null) {
      throw refuse("Forbidden", {
        field: "StrategyId",
        message: "Only the strategy's owner and administrators read its subscribers",
      });
    }
    query = query.where("p.white_label_site_id", "=", ctx.caller.whiteLabelSiteId);
  }
  if (activeOnly) query = query.where(live(ctx.clock.nowMs()));
  return pageOf(query, page);
}

const ownSiteStrategy = (caller: Caller, siteId: number | null) =>
  caller.role === "whitelabel-admin" && siteId !== null && caller.whiteLabelSiteId === siteId;

export interface RevenueFilters {
  readonly strategyId?: number;
  readonly startMs?: number;
  readonly endMs?: number;
  readonly strategyOwnerPersonId?: number;
  readonly subscriberPersonId?: number;
  readonly whiteLabelSiteId?: number;
}

/** The lanes that bring the service money: grants and free subscriptions are charged nothing. */
const PAID_LANES = ["resale", "direct"] as const;

/**
 * GetSubscriptionRevenue: the revenue rows of paid subscriptions (resold and
 * direct; grants and free ones bring nothing) matching every filter given,
 * with a charge in [StartDate, EndDate) when either date is given. At least
 * one filter besides the dates. The caller's scope bounds the rows and the
 * filters narrow them: a person (and a geo-site administrator) sees the
 * strategies they own, a white-label administrator the subscriptions its
 * site sold (naming another site is refused), service admins everything.
 */
export async function subscriptionRevenue(
  ctx: RequestContext,
  filters: RevenueFilters,
  page: PageRequest,
): Promise<Page<SubscriptionView>> {
  const { strategyId, strategyOwnerPersonId, subscriberPersonId, whiteLabelSiteId, startMs, endMs } = filters;
  if (
    strategyId === undefined &&
    strategyOwnerPersonId === undefined &&
    subscriberPersonId === undefined &&
    whiteLabelSiteId === undefined
  ) {
    throw refuse("MissingValue", {
      field: "StrategyId",
      message:
        "At least one of StrategyId, StrategyOwnerPersonId, SubscriberPersonId or WhiteLabelSiteId is required (StartDate and EndDate alone are not enough)",
    });
  }
  if (startMs !== undefined && endMs !== undefined && endMs < startMs) {
    throw refuse("InvalidValue", { field: "EndDate", message: "EndDate is before StartDate" });
  }
  let query = subscriptionRows(dbOf(ctx)).where("s.lane", "in", PAID_LANES);
  const caller = ctx.caller;
  if (caller.role === "whitelabel-admin") {
    const scope = whiteLabelScope(caller, whiteLabelSiteId === undefined ? undefined : asSiteId(whiteLabelSiteId));
    if (!scope.ok) {
      throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not an administrator of that site" });
    }
    query = query.where("s.site_id", "=", scope.siteId);
  } else if (!isServiceAdmin(caller)) {
    query = query.where("st.owner_person_id", "=", Number(caller.personId));
  }
  if (whiteLabelSiteId !== undefined) query = query.where("s.site_id", "=", whiteLabelSiteId);
  if (strategyId !== undefined) query = query.where("s.strategy_id", "=", strategyId);
  if (strategyOwnerPersonId !== undefined) query = query.where("st.owner_person_id", "=", strategyOwnerPersonId);
  if (subscriberPersonId !== undefined) query = query.where("s.person_id", "=", subscriberPersonId);
  if (startMs !== undefined || endMs !== undefined) {
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom("ledger_transactions as t")
          .select("t.id")
          .whereRef("t.subscription_id", "=", "s.id")
          .where("t.kind", "=", "charge")
          .$if(startMs !== undefined, (q) => q.where("t.created_at", ">=", startMs as number))
          .$if(endMs !== undefined, (q) => q.where("t.created_at", "<", endMs as number)),
      ),
    );
  }
  return pageOf(query, page);
}
