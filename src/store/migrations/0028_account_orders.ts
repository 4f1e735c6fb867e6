import { type Kysely, type Migration, sql } from "kysely";

/**
 * Autotrade account orders and positions over the API (issue 14): the marks
 * of brokerage accounts at each NYSE close (the account's value, and per
 * strategy followed the profit and loss of what the setup holds in it),
 * which GetDashBoard's returns are computed from; when a paper account was
 * last reset (its starting cash is the accounts row's, as opened); and an
 * index for GetAutotradeHistoricalOrders, which pages an account's ended
 * orders by id.
 */
export function accountOrdersMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("broker_accounts").addColumn("reset_at", "bigint").execute();

      await db.schema
        .createTable("account_marks")
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("marked_at", "bigint", (c) => c.notNull())
        .addColumn("value", "text", (c) => c.notNull())
        .addColumn("cash", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("account_marks_pk", ["account_id", "marked_at"])
        .execute();

      await db.schema
        .createTable("autotrade_marks")
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("marked_at", "bigint", (c) => c.notNull())
        .addColumn("holdings_value", "text", (c) => c.notNull())
        .addColumn("pnl", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("autotrade_marks_pk", ["account_id", "strategy_id", "marked_at"])
        .execute();

      // Ended orders carry closed_at (the desk sets it as they end): the history pages them by id.
      await db.schema
        .createIndex("account_orders_ended_idx")
        .on("account_orders")
        .columns(["account_id", "id"])
        .where(sql.ref("closed_at"), "is not", null)
        .execute();
    },
  };
}
