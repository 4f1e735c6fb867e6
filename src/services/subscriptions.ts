import { refuse } from "../core/errors.js";
import type { PlatformId } from "../core/ids.js";
import { centsOfText, dollarsOf } from "../core/money.js";
import { type Tx, withTransaction } from "../store/transaction.js";
import { dbOf, type Runtime } from "./runtime.js";
import {
  endSubscription,
  givesAccess,
  liveKeyOf,
  liveSubscription,
  type NewSubscription,
  startSubscription,
} from "./subscription-rows.js";

/**
 * Subscriptions as the legacy commands use them: a person follows a strategy
 * from a start until an end. A person holds at most one live subscription per
 * strategy; subscribing again answers the live one, except that a live
 * simulated one is superseded by the real one, as on v4.
 *
 * A paid system is not followed for free: a strategy with a monthly price is
 * bought through the checkout (or resold by a white-label site), so the
 * legacy subscribe refuses it, unless a Private Platform key subscribes a
 * person of its own platform's site: the platform bills its customer itself,
 * and the subscription is an open-ended grant of the platform's site, which
 * the platform ends with unsubscribeFromStrategy.
 */
export async function subscribe(
  runtime: Runtime,
  strategyId: number,
  personId: number,
  platformId: PlatformId | null,
): Promise<string> {
  return withTransaction(runtime, async ({ tx }) => {
    const person = await tx
      .selectFrom("persons")
      .select("white_label_site_id")
      .where("id", "=", personId)
      .executeTakeFirst();
    if (!person) throw refuse("NotFound", { field: "personid", message: `No person ${personId}` });
    const strategy = await tx
      .selectFrom("strategies")
      .select("monthly_cost")
      .where("id", "=", strategyId)
      .executeTakeFirst();
    if (!strategy) throw refuse("NotFound", { field: "systemid", message: `No system ${strategyId}` });
    const monthlyCents = centsOfText(strategy.monthly_cost) ?? 0;
    let lane: NewSubscription = { platform_id: platformId, kind: "real", lane: "free" };
    if (monthlyCents > 0) {
      const siteId = await platformSiteOf(tx, platformId);
      if (siteId === null || siteId !== person.white_label_site_id) {
        throw refuse("WrongState", {
          field: "systemid",
          message: `System ${strategyId} costs ${dollarsOf(monthlyCents)} a month: subscribe through the checkout (CreateSubscriptionCheckout)`,
          meta: { MonthlyCost: dollarsOf(monthlyCents) },
        });
      }
      lane = { ...lane, lane: "grant", site_id: siteId };
    }
    const now = runtime.clock.nowMs();
    let result = await startSubscription(tx, personId, strategyId, now, lane);
    if (!result.started && result.live.kind === "simulated") {
      await endSubscription(tx, result.live.id, now, now, "superseded");
      result = await startSubscription(tx, personId, strategyId, now, lane);
    }
    return result.started ? result.row.guid : result.live.guid;
  });
}

async function platformSiteOf(tx: Tx, platformId: PlatformId | null): Promise<number | null> {
  if (platformId === null) return null;
  const platform = await tx
    .selectFrom("platforms")
    .select("white_label_site_id")
    .where("id", "=", platformId)
    .executeTakeFirst();
  return platform?.white_label_site_id ?? null;
}

/** How a legacy unsubscribe ends a subscription: now, or at the end of the term it paid for. */
export type UnsubscribeMode = "immediate" | "end_of_term";

/**
 * Ends the person's live subscription to the strategy; answers its guid.
 * Immediate ends it now. End of term stops billing and lets access run to
 * the end of the paid or granted term (at once when there is none, as for a
 * free subscription); repeating it changes nothing.
 */
export async function unsubscribe(
  runtime: Runtime,
  strategyId: number,
  personId: number,
  mode: UnsubscribeMode,
): Promise<string> {
  return withTransaction(runtime, async ({ tx }) => {
    const now = runtime.clock.nowMs();
    const live = await liveSubscription(tx, personId, strategyId, now);
    if (!live)
      throw refuse("NotFound", {
        field: "personid",
        message: `Person ${personId} does not follow system ${strategyId}`,
      });
    const termEnd = live.ended_at ?? live.paid_until;
    if (mode === "end_of_term" && termEnd !== null && termEnd > now) {
      await endSubscription(tx, live.id, termEnd, now, live.end_reason ?? "stopped");
      await tx.updateTable("subscriptions").set({ cancel_pending: 1 }).where("id", "=", live.id).execute();
    } else {
      await endSubscription(tx, live.id, now, now, "unsubscribed");
    }
    return live.guid;
  });
}

/**
 * The person's live subscription to the strategy now, of any kind: one
 * lookup on the unique live key (it is on the hot read paths of orders and
 * positions). A row whose end has passed may keep its key until the next
 * start clears it, so the end is checked here too.
 */
async function liveRowOf(runtime: Runtime, strategyId: number, personId: number) {
  const row = await dbOf(runtime)
    .selectFrom("subscriptions")
    .select(["kind", "ended_at", "paid_until"])
    .where("live_key", "=", liveKeyOf(personId, strategyId))
    .executeTakeFirst();
  const now = runtime.clock.nowMs();
  return row && (row.ended_at === null || row.ended_at > now) ? { row, now } : undefined;
}

/** Whether the person's subscription gives access to the strategy's live signals, orders and positions now. */
export async function follows(runtime: Runtime, strategyId: number, personId: number): Promise<boolean> {
  const live = await liveRowOf(runtime, strategyId, personId);
  return live !== undefined && givesAccess(live.row, live.now);
}

/** Whether the person holds a live subscription of any kind (a simulated one sees aggregate performance). */
export async function subscribesTo(runtime: Runtime, strategyId: number, personId: number): Promise<boolean> {
  return (await liveRowOf(runtime, strategyId, personId)) !== undefined;
}

/** The strategy's subscriptions with their subscribers and billing, oldest first; `live` while it has not ended. */
export async function subscribersOf(runtime: Runtime, strategyId: number) {
  const now = runtime.clock.nowMs();
  const rows = await dbOf(runtime)
    .selectFrom("subscriptions as s")
    .innerJoin("persons as p", "p.id", "s.person_id")
    .selectAll("s")
    .select(["p.email", "p.first_name", "p.last_name", "p.country_code"])
    .where("s.strategy_id", "=", strategyId)
    .orderBy("s.id")
    .execute();
  return rows.map((row) => ({ ...row, live: row.ended_at === null || row.ended_at > now }));
}
