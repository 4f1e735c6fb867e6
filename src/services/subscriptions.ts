import { randomUUID } from "node:crypto";
import { refuse } from "../core/errors.js";
import type { PlatformId } from "../core/ids.js";
import { withTransaction } from "../store/transaction.js";
import { dbOf, type Runtime } from "./runtime.js";

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
    const now = runtime.clock.nowMs();
    const live = await tx
      .selectFrom("subscriptions")
      .select("guid")
      .where("strategy_id", "=", strategyId)
      .where("person_id", "=", personId)
      .where((eb) => eb.or([eb("ended_at", "is", null), eb("ended_at", ">", now)]))
      .executeTakeFirst();
    if (live) return live.guid;
    const guid = randomUUID();
    await tx
      .insertInto("subscriptions")
      .values({ guid, strategy_id: strategyId, person_id: personId, platform_id: platformId, started_at: now })
      .execute();
    return guid;
  });
}

/** Ends the person's live subscription to the strategy now; answers its guid. */
export async function unsubscribe(runtime: Runtime, strategyId: number, personId: number): Promise<string> {
  return withTransaction(runtime, async ({ tx }) => {
    const now = runtime.clock.nowMs();
    const live = await tx
      .selectFrom("subscriptions")
      .select(["id", "guid"])
      .where("strategy_id", "=", strategyId)
      .where("person_id", "=", personId)
      .where((eb) => eb.or([eb("ended_at", "is", null), eb("ended_at", ">", now)]))
      .executeTakeFirst();
    if (!live)
      throw refuse("NotFound", {
        field: "personid",
        message: `Person ${personId} does not follow system ${strategyId}`,
      });
    await tx.updateTable("subscriptions").set({ ended_at: now }).where("id", "=", live.id).execute();
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
