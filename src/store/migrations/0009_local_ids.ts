import { type Kysely, type Migration, sql } from "kysely";

/**
 * Caller-chosen ids of the legacy API: a signal's own `signalid` and an OCA
 * group's `ocaid`, each unique per strategy across all time.
 */
export function localIdsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("orders").addColumn("local_signal_id", "text").execute();
      await db.schema.alterTable("oca_groups").addColumn("local_id", "text").execute();
      await db.schema
        .createIndex("orders_local_signal_id_key")
        .on("orders")
        .columns(["strategy_id", "local_signal_id"])
        .unique()
        .where(sql.ref("local_signal_id"), "is not", null)
        .execute();
      await db.schema
        .createIndex("oca_groups_local_id_key")
        .on("oca_groups")
        .columns(["strategy_id", "local_id"])
        .unique()
        .where(sql.ref("local_id"), "is not", null)
        .execute();
    },
  };
}
