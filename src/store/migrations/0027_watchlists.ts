import { type Kysely, type Migration, sql } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Watchlists (issue 14): a person's own lists of strategies, and the one
 * list the service offers everyone, the curated leaderboard (kind
 * `leaderboard`, no owner, its members read from the leaderboard itself). A
 * person's list names are unique without regard to case (`name_key`).
 */
export function watchlistsMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("watchlists"))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("person_id", "bigint", (c) => c.references("persons.id"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("name_key", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("watchlists_person_name_key")
        .on("watchlists")
        .columns(["person_id", "name_key"])
        .unique()
        .execute();
      await db.schema
        .createTable("watchlist_members")
        .addColumn("watchlist_id", "bigint", (c) => c.notNull().references("watchlists.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("added_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("watchlist_members_pk", ["watchlist_id", "strategy_id"])
        .execute();
      await db.schema
        .createIndex("watchlist_members_added_idx")
        .on("watchlist_members")
        .columns(["watchlist_id", "added_at", "strategy_id"])
        .execute();
      await sql`insert into watchlists (kind, person_id, name, name_key, created_at, updated_at)
        values ('leaderboard', null, 'Leaderboard', null, 0, 0)`.execute(db);
    },
  };
}
