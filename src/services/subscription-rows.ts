import { randomUUID } from "node:crypto";
import type { Insertable, Selectable } from "kysely";
import type { SubscriptionsTable } from "../store/schema.js";
import type { Tx } from "../store/transaction.js";

/**
 * The one way subscriptions begin and end. A person holds at most one live
 * subscription per strategy, of any kind: `live_key` (person:strategy) is set
 * while it lives, under a unique index, so two concurrent starts race on the
 * index and exactly one wins, on both backends; it is cleared when it ends.
 * A subscription that ends in the future (an end-of-term stop, a grant) keeps
 * its key until then; the next start clears a key whose end has passed.
 */

export type SubscriptionRow = Selectable<SubscriptionsTable>;

export const liveKeyOf = (personId: number, strategyId: number): string => `${personId}:${strategyId}`;

export type NewSubscription = Omit<
  Insertable<SubscriptionsTable>,
  "id" | "guid" | "live_key" | "person_id" | "strategy_id" | "started_at"
>;

export type StartResult =
  | { readonly started: true; readonly row: SubscriptionRow }
  | { readonly started: false; readonly live: SubscriptionRow };

/** The person's live subscription to the strategy at `nowMs`, of any kind. */
export async function liveSubscription(
  tx: Tx,
  personId: number,
  strategyId: number,
  nowMs: number,
): Promise<SubscriptionRow | undefined> {
  return tx
    .selectFrom("subscriptions")
    .selectAll()
    .where("live_key", "=", liveKeyOf(personId, strategyId))
    .where((eb) => eb.or([eb("ended_at", "is", null), eb("ended_at", ">", nowMs)]))
    .executeTakeFirst();
}

/**
 * Starts a subscription unless one is live; answers the live one otherwise
 * (a concurrent start that won the race included).
 */
export async function startSubscription(
  tx: Tx,
  personId: number,
  strategyId: number,
  nowMs: number,
  values: NewSubscription,
): Promise<StartResult> {
  const liveKey = liveKeyOf(personId, strategyId);
  await tx
    .updateTable("subscriptions")
    .set({ live_key: null })
    .where("live_key", "=", liveKey)
    .where("ended_at", "is not", null)
    .where("ended_at", "<=", nowMs)
    .execute();
  const inserted = await tx
    .insertInto("subscriptions")
    .values({
      ...values,
      guid: randomUUID(),
      person_id: personId,
      strategy_id: strategyId,
      started_at: nowMs,
      live_key: liveKey,
    })
    .onConflict((oc) => oc.column("live_key").doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { started: true, row: inserted };
  const live = await liveSubscription(tx, personId, strategyId, nowMs);
  if (!live) throw new Error(`subscription ${liveKey} neither inserted nor live`);
  return { started: false, live };
}

/** Ends a subscription at `atMs` (now, or the end of its term) for `reason`; billing stops. */
export async function endSubscription(
  tx: Tx,
  subscriptionId: number,
  atMs: number,
  nowMs: number,
  reason: string,
): Promise<void> {
  await tx
    .updateTable("subscriptions")
    .set({
      ended_at: atMs,
      end_reason: reason,
      next_charge_at: null,
      next_charge_cents: null,
      ...(atMs <= nowMs ? { live_key: null } : {}),
    })
    .where("id", "=", subscriptionId)
    .execute();
}

/**
 * Whether a subscription gives access to live signals at `nowMs`: live,
 * real (simulated ones see aggregate performance only) and paid up or
 * granted (free ones are not bought by terms).
 */
export const givesAccess = (row: Pick<SubscriptionRow, "kind" | "ended_at" | "paid_until">, nowMs: number): boolean =>
  row.kind === "real" &&
  (row.ended_at === null || row.ended_at > nowMs) &&
  (row.paid_until === null || row.paid_until > nowMs);
