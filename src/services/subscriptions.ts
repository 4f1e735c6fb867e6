import { refuse } from "../core/errors.js";
import type { PlatformId } from "../core/ids.js";
import { withTransaction } from "../store/transaction.js";
import { dbOf, type Runtime } from "./runtime.js";
import { endSubscription, liveSubscription, startSubscription } from "./subscription-rows.js";

/**
 * Subscriptions as the legacy commands use them: a person follows a strategy
 * from a start until an end. A person holds at most one live subscription per
 * strategy; subscribing again answers the live one.
 */
export async function subscribe(
  runtime: Runtime,
  strategyId: number,
  personId: number,
  platformId: PlatformId | null,
): Promise<string> {
  return withTransaction(runtime, async ({ tx }) => {
    const person = await tx.selectFrom("persons").select("id").where("id", "=", personId).executeTakeFirst();
    if (!person) throw refuse("NotFound", { field: "personid", message: `No person ${personId}` });
    const result = await startSubscription(tx, personId, strategyId, runtime.clock.nowMs(), {
      platform_id: platformId,
    });
    return result.started ? result.row.guid : result.live.guid;
  });
}

/** Ends the person's live subscription to the strategy now; answers its guid. */
export async function unsubscribe(runtime: Runtime, strategyId: number, personId: number): Promise<string> {
  return withTransaction(runtime, async ({ tx }) => {
    const now = runtime.clock.nowMs();
    const live = await liveSubscription(tx, personId, strategyId, now);
    if (!live)
      throw refuse("NotFound", {
        field: "personid",
        message: `Person ${personId} does not follow system ${strategyId}`,
      });
    await endSubscription(tx, live.id, now, now, "unsubscribed");
    return live.guid;
  });
}

/** Whether the person follows the strategy now. */
export async function follows(runtime: Runtime, strategyId: number, personId: number): Promise<boolean> {
  const now = runtime.clock.nowMs();
  const live = await dbOf(runtime)
    .selectFrom("subscriptions")
    .select("id")
    .where("strategy_id", "=", strategyId)
    .where("person_id", "=", personId)
    .where((eb) => eb.or([eb("ended_at", "is", null), eb("ended_at", ">", now)]))
    .executeTakeFirst();
  return live !== undefined;
}

/** The strategy's subscriptions with their subscribers, oldest first; `live` while it has not ended. */
export async function subscribersOf(runtime: Runtime, strategyId: number) {
  const now = runtime.clock.nowMs();
  const rows = await dbOf(runtime)
    .selectFrom("subscriptions as s")
    .innerJoin("persons as p", "p.id", "s.person_id")
    .select([
      "s.guid",
      "s.started_at",
      "s.ended_at",
      "s.platform_id",
      "s.person_id",
      "p.email",
      "p.first_name",
      "p.last_name",
      "p.country_code",
    ])
    .where("s.strategy_id", "=", strategyId)
    .orderBy("s.id")
    .execute();
  return rows.map((row) => ({ ...row, live: row.ended_at === null || row.ended_at > now }));
}
