import { type Kysely, type Migration, sql } from "kysely";

/**
 * The symbol as the client wrote it, on an order whose future was written in
 * another form than the service's (`@ESZ6`, `@TYZ6`): legacy answers name
 * the future so. The index finds a strategy's such orders.
 */
export function sentSymbolsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("orders").addColumn("sent_symbol", "text").execute();
      await db.schema
        .createIndex("orders_sent_symbol")
        .on("orders")
        .columns(["strategy_id", "id"])
        .where(sql.ref("sent_symbol"), "is not", null)
        .execute();
    },
  };
}
