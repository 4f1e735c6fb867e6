import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Strategies: model accounts owned by a person. Money is exact decimal text
 * (src/core/decimal.ts); description changes wait for a compliance review
 * before they are published.
 */
export function strategiesMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("strategies"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("owner_person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("white_label_site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("is_private", "integer", (c) => c.notNull())
        .addColumn("is_alive", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("starting_capital", "text", (c) => c.notNull())
        .addColumn("cash", "text", (c) => c.notNull())
        .addColumn("monthly_cost", "text", (c) => c.notNull().defaultTo("0"))
        .addColumn("short_description", "text")
        .addColumn("long_description", "text")
        .addColumn("pending_short_description", "text")
        .addColumn("pending_long_description", "text")
        .addColumn("review_status", "text", (c) => c.notNull().defaultTo("none"))
        .addColumn("review_note", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("strategies_owner_idx").on("strategies").columns(["owner_person_id", "id"]).execute();
      await db.schema
        .createIndex("strategies_site_idx")
        .on("strategies")
        .columns(["white_label_site_id", "id"])
        .execute();
    },
  };
}
