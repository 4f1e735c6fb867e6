import { type Kysely, type Migration, sql } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Trades: each position's life from flat to flat, with its fills and its
 * maximum adverse excursion. Positions open before this migration become open
 * trades; their earlier fills stay without a trade.
 */
export function tradesMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("trades"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("opened_at", "bigint", (c) => c.notNull())
        .addColumn("closed_at", "bigint")
        .addColumn("opened_quantity", "text", (c) => c.notNull())
        .addColumn("closed_quantity", "text", (c) => c.notNull())
        .addColumn("open_notional", "text", (c) => c.notNull())
        .addColumn("close_notional", "text", (c) => c.notNull())
        .addColumn("realized", "text", (c) => c.notNull())
        .addColumn("commission", "text", (c) => c.notNull())
        .addColumn("evaluated_at", "bigint", (c) => c.notNull())
        .addColumn("mae_amount", "text")
        .addColumn("mae_worst_price", "text")
        .addColumn("mae_worst_price_at", "bigint")
        .addColumn("mae_equity", "text")
        .addColumn("mae_entry_price", "text")
        .addColumn("mae_open_quantity", "text")
        .execute();
      await db.schema.createIndex("trades_strategy_idx").on("trades").columns(["strategy_id", "id"]).execute();
      await db.schema
        .alterTable("fills")
        .addColumn("trade_id", "bigint", (c) => c.references("trades.id"))
        .execute();
      await db.schema.createIndex("fills_trade_idx").on("fills").column("trade_id").execute();
      await db.schema.alterTable("positions").addColumn("trade_id", "bigint").execute();
      const positions = await sql<{
        strategy_id: number;
        symbol: string;
        symbol_type: string;
        quantity: string;
        cost: string;
        opened_at: number;
      }>`select strategy_id, symbol, symbol_type, quantity, cost, opened_at from positions`.execute(db);
      for (const p of positions.rows) {
        const short = p.quantity.startsWith("-");
        const magnitude = (text: string) => (text.startsWith("-") ? text.slice(1) : text);
        const inserted = await sql<{ id: number }>`insert into trades (strategy_id, symbol, symbol_type, side,
          opened_at, opened_quantity, closed_quantity, open_notional, close_notional, realized, commission, evaluated_at)
          values (${p.strategy_id}, ${p.symbol}, ${p.symbol_type}, ${short ? "sell" : "buy"}, ${p.opened_at},
          ${magnitude(p.quantity)}, '0', ${magnitude(p.cost)}, '0', '0', '0', ${p.opened_at}) returning id`.execute(db);
        await sql`update positions set trade_id = ${inserted.rows[0]?.id} where strategy_id = ${p.strategy_id}
          and symbol = ${p.symbol}`.execute(db);
      }
    },
  };
}
