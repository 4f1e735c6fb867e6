import { sql } from "kysely";
import { mayReadPrivate, membership } from "../core/access.js";
import { type Decimal, formatDecimal, storedDecimal, sub, toNumber } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { asPersonId } from "../core/ids.js";
import { withTransaction } from "../store/transaction.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { siteCustomer } from "./site-customer.js";
import { endSubscription, liveSubscription, startSubscription } from "./subscription-rows.js";
import { modelAccount, type TradingContext } from "./trading.js";

/**
 * Simulated subscriptions: a white-label customer follows a strategy's
 * aggregate performance from the moment the simulation starts, with no money,
 * no live signals and no positions. A simulation is an ordinary subscription
 * row of kind simulated (one live subscription per person and strategy, of
 * any kind), remembering the strategy's equity when it started.
 */

export const MAX_SIMS_PER_CALL = 8;
export const MAX_ACCOUNT_DAYS = 365;
const DAY_MS = 86_400_000;

/** Why a strategy was not started (StartSim's Skipped entries). */
export type SkipReason = "not_found" | "not_alive" | "own_strategy" | "already_subscribed" | "already_simulated";

export interface SimStarted {
  readonly strategyId: number;
  readonly subscriptionId: number;
  readonly startDate: Date;
  readonly startEquity: number;
}

export interface SimSkipped {
  readonly strategyId: number;
  readonly reason: SkipReason;
  readonly message: string;
  /** The live subscription that stands in the way, when there is one. */
  readonly subscriptionId: number | null;
}

const skip = (strategyId: number, reason: SkipReason, message: string, subscriptionId: number | null = null) => ({
  strategyId,
  reason,
  message,
  subscriptionId,
});

/**
 * Starts a simulation of each strategy for the site's customer. A strategy the
 * site may not offer (private to another site, or none), a dead one, the
 * customer's own, or one the customer already follows is skipped with its
 * reason; the others start, all in one transaction.
 */
export async function startSims(
  ctx: TradingContext,
  input: { readonly personId: number; readonly strategyIds: readonly number[]; readonly siteId: number | undefined },
): Promise<{ readonly started: SimStarted[]; readonly skipped: SimSkipped[] }> {
  const db = dbOf(ctx);
  const customer = await siteCustomer(db, ctx, input.personId, input.siteId);
  const rows = await db
    .selectFrom("strategies")
    .select(["id", "is_alive", "is_private", "white_label_site_id", "owner_person_id"])
    .where("id", "in", [...input.strategyIds])
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const skipped: SimSkipped[] = [];
  const candidates: number[] = [];
  for (const id of input.strategyIds) {
    const strategy = byId.get(id);
    // Public strategies, and the site's own private ones: others do not exist for the site.
    if (!strategy || (strategy.is_private === 1 && strategy.white_label_site_id !== customer.siteId)) {
      skipped.push(skip(id, "not_found", `No strategy ${id}`));
    } else if (strategy.is_alive !== 1) {
      skipped.push(skip(id, "not_alive", `Strategy ${id} no longer trades`));
    } else if (strategy.owner_person_id === customer.personId) {
      skipped.push(skip(id, "own_strategy", `Person ${customer.personId} owns strategy ${id}`));
    } else {
      candidates.push(id);
    }
  }
  // Equity of now, read from the trading frame before the rows are written.
  const equities = new Map<number, Decimal>();
  await Promise.all([...new Set(candidates)].map(async (id) => equities.set(id, (await modelAccount(ctx, id)).equity)));
  const started: SimStarted[] = [];
  await withTransaction(ctx, async ({ tx }) => {
    const now = ctx.clock.nowMs();
    for (const id of candidates) {
      const equity = equities.get(id) as Decimal;
      const result = await startSubscription(tx, customer.personId, id, now, {
        kind: "simulated",
        lane: "free",
        site_id: customer.siteId,
        start_equity: formatDecimal(equity),
      });
      if (result.started) {
        started.push({
          strategyId: id,
          subscriptionId: result.row.id,
          startDate: new Date(now),
          startEquity: toNumber(equity),
        });
      } else if (result.live.kind === "simulated") {
        skipped.push(skip(id, "already_simulated", `Strategy ${id} is already simulated`, result.live.id));
      } else {
        skipped.push(skip(id, "already_subscribed", `Person already subscribes to strategy ${id}`, result.live.id));
      }
    }
  });
  return { started, skipped };
}

export interface SimStopped {
  readonly personId: number;
  readonly strategyId: number;
  /** The simulation this call ended; null when none was live (stopping again is a no-op). */
  readonly subscriptionId: number | null;
  readonly endDate: Date | null;
}

/** Ends the customer's live simulation of the strategy now; a real subscription is refused. */
export async function stopSim(
  ctx: RequestContext,
  input: { readonly personId: number; readonly strategyId: number; readonly siteId: number | undefined },
): Promise<SimStopped> {
  return withTransaction(ctx, async ({ tx }) => {
    const customer = await siteCustomer(tx, ctx, input.personId, input.siteId);
    const now = ctx.clock.nowMs();
    const live = await liveSubscription(tx, customer.personId, input.strategyId, now);
    const none = { personId: customer.personId, strategyId: input.strategyId, subscriptionId: null, endDate: null };
    if (!live) return none;
    if (live.kind !== "simulated") {
      throw refuse("WrongState", {
        field: "StrategyId",
        message: `The subscription to strategy ${input.strategyId} is ${live.kind}, not simulated: use WhiteLabelStopSubscription`,
        meta: { SubscriptionId: live.id },
      });
    }
    await endSubscription(tx, live.id, now, now, "stopped");
    return { ...none, subscriptionId: live.id, endDate: new Date(now) };
  });
}

export interface SimResultFilter {
  readonly personId?: number | undefined;
  readonly siteId?: number | undefined;
  readonly activeOnly: boolean;
  readonly maxAccountDays: number;
  readonly minLoginDays?: number | undefined;
}

export interface SimResult {
  readonly subscriptionId: number;
  readonly personId: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly strategyId: number;
  readonly strategyName: string;
  readonly startDate: Date;
  readonly endDate: Date | null;
  readonly startEquity: number | null;
  /** Null until the result is ready. */
  readonly endEquity: number | null;
  /** A fraction (0.05 is 5 %). */
  readonly totalReturn: number | null;
  readonly totalDelta: number | null;
  readonly scalingFactor: number;
  readonly isResultReady: boolean;
}

/**
 * Simulations measured since each started: against the strategy's equity now
 * while live, at its last daily mark before the end once ended. A result is
 * ready once the strategy has been marked at a close after the start.
 */
export async function simResults(ctx: TradingContext, filter: SimResultFilter): Promise<SimResult[]> {
  const db = dbOf(ctx);
  const caller = ctx.caller;
  const now = ctx.clock.nowMs();
  if (filter.personId !== undefined) {
    const person = await db
      .selectFrom("persons as p")
      .leftJoin("sites as s", "s.id", "p.white_label_site_id")
      .select(["p.id", "p.white_label_site_id", "p.geo_site_id", "s.geo_site_id as site_geo_id"])
      .where("p.id", "=", filter.personId)
      .executeTakeFirst();
    if (!person) throw refuse("NotFound", { field: "PersonId", message: `No person ${filter.personId}` });
    const member = {
      personId: asPersonId(person.id),
      ...membership(person.white_label_site_id, person.geo_site_id ?? person.site_geo_id),
    };
    if (!mayReadPrivate(caller, member)) {
      throw refuse("Forbidden", { field: "PersonId", message: "Only the person and their administrators" });
    }
  }
  if (
    filter.siteId !== undefined &&
    caller.role !== "admin" &&
    caller.role !== "geo-admin" &&
    caller.whiteLabelSiteId !== filter.siteId
  ) {
    throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not a member of that site" });
  }
  let query = db
    .selectFrom("subscriptions as sub")
    .innerJoin("persons as p", "p.id", "sub.person_id")
    .leftJoin("sites as ws", "ws.id", "p.white_label_site_id")
    .innerJoin("strategies as st", "st.id", "sub.strategy_id")
    .select([
      "sub.id",
      "sub.person_id",
      "sub.strategy_id",
      "sub.started_at",
      "sub.ended_at",
      "sub.start_equity",
      "st.name as strategy_name",
      "p.first_name",
      "p.last_name",
      "p.email",
    ])
    .where("sub.kind", "=", "simulated")
    .where("sub.started_at", ">=", now - filter.maxAccountDays * DAY_MS);
  if (filter.activeOnly)
    query = query.where((eb) => eb.or([eb("sub.ended_at", "is", null), eb("sub.ended_at", ">", now)]));
  if (filter.minLoginDays !== undefined)
    query = query.where("p.last_logged_in", ">=", now - filter.minLoginDays * DAY_MS);
  if (filter.personId !== undefined) query = query.where("sub.person_id", "=", filter.personId);
  if (filter.siteId !== undefined) query = query.where("p.white_label_site_id", "=", filter.siteId);
  switch (caller.role) {
    case "admin":
      break;
    case "whitelabel-admin":
      query = query.where("p.white_label_site_id", "=", caller.whiteLabelSiteId);
      break;
    case "geo-admin":
      query = query.where(sql`coalesce(p.geo_site_id, ws.geo_site_id)`, "=", caller.geoSiteId);
      break;
    case "person":
      query = query.where("sub.person_id", "=", caller.personId);
      break;
  }
  const rows = await query.orderBy("sub.started_at").orderBy("sub.id").execute();
  if (rows.length === 0) return [];
  const strategyIds = [...new Set(rows.map((row) => row.strategy_id))];
  const earliest = Math.min(...rows.map((row) => row.started_at));
  const marks = await db
    .selectFrom("equity_marks")
    .select(["strategy_id", "marked_at", "equity"])
    .where("strategy_id", "in", strategyIds)
    .where("marked_at", ">", earliest)
    .orderBy("strategy_id")
    .orderBy("marked_at")
    .execute();
  const marksOf = new Map<number, { markedAt: number; equity: string }[]>();
  for (const mark of marks) {
    const list = marksOf.get(mark.strategy_id) ?? [];
    list.push({ markedAt: mark.marked_at, equity: mark.equity });
    marksOf.set(mark.strategy_id, list);
  }
  const liveStrategies = [
    ...new Set(rows.filter((row) => row.ended_at === null || row.ended_at > now).map((row) => row.strategy_id)),
  ];
  const equityNow = new Map<number, Decimal>();
  await Promise.all(liveStrategies.map(async (id) => equityNow.set(id, (await modelAccount(ctx, id)).equity)));
  return rows.map((row) => {
    const ended = row.ended_at !== null && row.ended_at <= now;
    const until = ended ? (row.ended_at as number) : now;
    const within = (marksOf.get(row.strategy_id) ?? []).filter(
      (mark) => mark.markedAt > row.started_at && mark.markedAt <= until,
    );
    const lastMark = within[within.length - 1];
    const isResultReady = lastMark !== undefined;
    const start = row.start_equity === null ? null : storedDecimal(row.start_equity);
    let end: Decimal | null = null;
    if (isResultReady) end = ended ? storedDecimal(lastMark.equity) : (equityNow.get(row.strategy_id) ?? null);
    const delta = start !== null && end !== null ? sub(end, start) : null;
    return {
      subscriptionId: row.id,
      personId: row.person_id,
      firstName: row.first_name,
      lastName: row.last_name,
      email: row.email,
      strategyId: row.strategy_id,
      strategyName: row.strategy_name,
      startDate: new Date(row.started_at),
      endDate: row.ended_at === null ? null : new Date(row.ended_at),
      startEquity: start === null ? null : toNumber(start),
      endEquity: end === null ? null : toNumber(end),
      totalReturn: delta !== null && start !== null && start > 0n ? toNumber(delta) / toNumber(start) : null,
      totalDelta: delta === null ? null : toNumber(delta),
      // Simulations follow the strategy one to one: there is no account to scale to.
      scalingFactor: 1,
      isResultReady,
    };
  });
}
