import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Subscriptions, as far as the legacy commands need them: who follows which
 * strategy, since and until when. Billing and the subscription kinds of v4
 * extend these records later.
 */
export function subscriptionsMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("subscriptions"))
        .addColumn("guid", "text", (c) => c.notNull().unique())
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("platform_id", "bigint", (c) => c.references("platforms.id"))
        .addColumn("started_at", "bigint", (c) => c.notNull())
        .addColumn("ended_at", "bigint")
        .execute();
      await db.schema
        .createIndex("subscriptions_strategy_idx")
        .on("subscriptions")
        .columns(["strategy_id", "id"])
        .execute();
      await db.schema
        .createIndex("subscriptions_person_idx")
        .on("subscriptions")
        .columns(["person_id", "strategy_id"])
        .execute();
    },
  };
}
