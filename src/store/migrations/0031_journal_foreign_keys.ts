import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";

/**
 * On PostgreSQL the rows every order writes check no foreign keys (issue 10).
 * Each foreign key is a trigger running a query per row written: an order that
 * fills ran seven of them (its order's account and strategy, each event's
 * account, the fill's account, order, strategy and trade), about a quarter of
 * what PostgreSQL spent on the order. Those rows are written by the trading
 * frame's journal only, from an account it holds and has locked in the same
 * transaction, and no strategy, account, order or trade is ever deleted.
 * The orders' references to other orders (parent, replaced, OCA group), and
 * the keys of rows written once per trade or position, stay. SQLite keeps
 * every key: checking them there costs nothing measurable.
 */
export const JOURNAL_KEYS_DROPPED: Readonly<Record<string, readonly string[]>> = {
  orders: ["account_id", "strategy_id"],
  order_events: ["account_id"],
  fills: ["account_id", "order_id", "strategy_id", "trade_id"],
};

export function journalForeignKeysMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (backend !== "postgres") return;
      for (const [table, columns] of Object.entries(JOURNAL_KEYS_DROPPED)) {
        for (const column of columns)
          await db.schema.alterTable(table).dropConstraint(`${table}_${column}_fkey`).execute();
      }
    },
  };
}
