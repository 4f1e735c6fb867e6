import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * StrategyMux (issue 14): variants (child strategies) mirroring a parent.
 * Each child has one parent, its scaling and the parent's last event when it
 * was linked (`from_seq`: later events are mirrored). `mux_orders` records
 * what became of each parent order for each child: mirrored (with the child's
 * order), failed (the child's trading rules refused it) or skipped, once per
 * child, parent order and action.
 */
export function strategyMuxMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("strategy_mux")
        .addColumn("child_strategy_id", "bigint", (c) => c.primaryKey().references("strategies.id"))
        .addColumn("parent_strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("scaling_percentage", "text", (c) => c.notNull())
        .addColumn("from_seq", "bigint", (c) => c.notNull())
        .addColumn("linked_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("strategy_mux_parent_idx").on("strategy_mux").column("parent_strategy_id").execute();
      await withId(backend, db.schema.createTable("mux_orders"))
        .addColumn("parent_strategy_id", "bigint", (c) => c.notNull())
        .addColumn("child_strategy_id", "bigint", (c) => c.notNull())
        .addColumn("parent_order_id", "bigint", (c) => c.notNull())
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("child_order_id", "bigint")
        .addColumn("reason", "text")
        .addColumn("message", "text")
        .addColumn("parent_seq", "bigint", (c) => c.notNull())
        .addColumn("at", "bigint", (c) => c.notNull())
        .addUniqueConstraint("mux_orders_key", ["child_strategy_id", "parent_order_id", "action"])
        .execute();
      await db.schema
        .createIndex("mux_orders_child_idx")
        .on("mux_orders")
        .columns(["child_strategy_id", "id"])
        .execute();
    },
  };
}
