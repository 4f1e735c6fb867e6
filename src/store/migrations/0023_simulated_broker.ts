import type { Kysely, Migration } from "kysely";

/**
 * The simulated broker's own books (src/engine/brokers/simulated.ts): what a
 * real broker keeps on its side and the service cannot see but through the
 * broker port. Its accounts (cash, linked or not), its orders (one per
 * idempotency key the service sent: a retry or a second process gets the same
 * order), their executions, the positions they make, and the faults the
 * sandbox set on an account.
 */
export function simulatedBrokerMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("sim_broker_accounts")
        .addColumn("account", "text", (c) => c.primaryKey())
        .addColumn("cash", "text", (c) => c.notNull())
        .addColumn("is_linked", "integer", (c) => c.notNull())
        .addColumn("username", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("sim_broker_orders")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("idempotency_key", "text", (c) => c.notNull().unique())
        .addColumn("broker_order_id", "text", (c) => c.notNull())
        .addColumn("account", "text", (c) => c.notNull())
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("order_type", "text", (c) => c.notNull())
        .addColumn("tif", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("limit_price", "text")
        .addColumn("stop_price", "text")
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("filled_quantity", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .addColumn("partial_fraction", "text")
        .addColumn("held_until", "bigint")
        .addColumn("expires_at", "bigint")
        .addColumn("replacements", "integer", (c) => c.notNull())
        .addColumn("reported", "integer", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("sim_broker_orders_open_idx")
        .on("sim_broker_orders")
        .columns(["status", "account"])
        .execute();
      await db.schema
        .createIndex("sim_broker_orders_reported_idx")
        .on("sim_broker_orders")
        .column("reported")
        .execute();

      await db.schema
        .createTable("sim_broker_executions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("order_id", "text")
        .addColumn("account", "text", (c) => c.notNull())
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("price", "text", (c) => c.notNull())
        .addColumn("executed_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("sim_broker_executions_order_idx")
        .on("sim_broker_executions")
        .column("order_id")
        .execute();

      await db.schema
        .createTable("sim_broker_positions")
        .addColumn("account", "text", (c) => c.notNull())
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("sim_broker_positions_pk", ["account", "symbol"])
        .execute();

      await db.schema
        .createTable("sim_broker_faults")
        .addColumn("account", "text", (c) => c.notNull())
        .addColumn("fault", "text", (c) => c.notNull())
        .addColumn("detail", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("sim_broker_faults_pk", ["account", "fault"])
        .execute();
    },
  };
}
