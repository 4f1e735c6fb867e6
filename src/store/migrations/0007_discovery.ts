import { type Kysely, type Migration, sql } from "kysely";
import { fold } from "../../core/search.js";

/**
 * Discovery: strategy names folded for case-insensitive search on both
 * backends, and the curated leaderboard (strategies in rank order).
 */
export function discoveryMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("strategies").addColumn("name_folded", "text").execute();
      const existing = await sql<{ id: number; name: string }>`select id, name from strategies`.execute(db);
      for (const strategy of existing.rows) {
        await sql`update strategies set name_folded = ${fold(strategy.name)} where id = ${strategy.id}`.execute(db);
      }
      await db.schema
        .createTable("leaderboard")
        .addColumn("rank", "integer", (c) => c.primaryKey())
        .addColumn("strategy_id", "bigint", (c) => c.notNull().unique().references("strategies.id"))
        .execute();
    },
  };
}
