import type { Kysely, Migration } from "kysely";

/**
 * The legacy desired-positions mode: while a strategy holds a target
 * portfolio (JSON), the service keeps it there and signal entry is off.
 */
export function desiredPositionsModeMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("strategies").addColumn("desired_positions", "text").execute();
    },
  };
}
