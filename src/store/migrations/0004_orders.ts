import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Orders, their fills, OCA groups and open positions of strategies. Prices,
 * quantities and money are exact decimal text. `trading_version` counts a
 * strategy's trading transactions, so caches of its working orders can tell
 * a newer state from an older one.
 */
export function ordersMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("strategies")
        .addColumn("trading_version", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      // SecurityTypesEnabled: the kinds of instrument the strategy has traded.
      for (const column of ["trades_stocks", "trades_options", "trades_futures", "trades_forex"]) {
        await db.schema
          .alterTable("strategies")
          .addColumn(column, "integer", (c) => c.notNull().defaultTo(0))
          .execute();
      }
      await withId(backend, db.schema.createTable("oca_groups"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .execute();
      await withId(backend, db.schema.createTable("orders"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("order_type", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("open_close", "text", (c) => c.notNull())
        .addColumn("tif", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("limit_price", "text")
        .addColumn("stop_price", "text")
        .addColumn("profit_target", "text")
        .addColumn("stop_loss", "text")
        .addColumn("do_not_create_oca", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("do_not_sync_to_open", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("parent_id", "bigint", (c) => c.references("orders.id"))
        .addColumn("oca_group_id", "bigint", (c) => c.references("oca_groups.id"))
        .addColumn("cancel_replace_id", "bigint", (c) => c.references("orders.id"))
        .addColumn("parked_until", "bigint")
        .addColumn("expires_at", "bigint")
        .addColumn("signal_type", "integer", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("filled_quantity", "text", (c) => c.notNull().defaultTo("0"))
        .addColumn("filled_notional", "text", (c) => c.notNull().defaultTo("0"))
        .addColumn("info", "text")
        .addColumn("posted_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addColumn("closed_at", "bigint")
        .execute();
      await db.schema.createIndex("orders_strategy_idx").on("orders").columns(["strategy_id", "id"]).execute();
      // Live orders are few beside the history; the fill loop loads them at start.
      await db.schema.createIndex("orders_status_idx").on("orders").columns(["status", "strategy_id"]).execute();
      await db.schema.createIndex("orders_parent_idx").on("orders").column("parent_id").execute();
      await withId(backend, db.schema.createTable("fills"))
        .addColumn("order_id", "bigint", (c) => c.notNull().references("orders.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("price", "text", (c) => c.notNull())
        .addColumn("commission", "text", (c) => c.notNull())
        .addColumn("realized", "text", (c) => c.notNull())
        .addColumn("cash", "text", (c) => c.notNull())
        .addColumn("usd_rate", "text", (c) => c.notNull())
        .addColumn("position_after", "text", (c) => c.notNull())
        .addColumn("filled_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("fills_strategy_idx").on("fills").columns(["strategy_id", "id"]).execute();
      await db.schema.createIndex("fills_order_idx").on("fills").column("order_id").execute();
      await db.schema
        .createTable("positions")
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("cost", "text", (c) => c.notNull())
        .addColumn("opened_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("positions_pk", ["strategy_id", "symbol"])
        .execute();
    },
  };
}
