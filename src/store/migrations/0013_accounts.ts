import { type Kysely, type Migration, sql } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Trading accounts. Cash, orders, fills, positions and trades belong to an
 * account; a strategy's model account is the first kind (follower autotrade
 * and paper accounts come later). Each strategy gets its model account with
 * the cash, trading version and commission totals the strategy held. The
 * account's version counts its commits (the trading frame checks it under the
 * row lock before each commit, so two processes never both write an account
 * from the same state), and its event sequence numbers the order events of
 * the outbox, gap-free per account.
 */
export function accountsMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("accounts"))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("strategy_id", "bigint", (c) => c.references("strategies.id").unique())
        .addColumn("cash", "text", (c) => c.notNull())
        .addColumn("starting_cash", "text", (c) => c.notNull())
        .addColumn("version", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("event_seq", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("commissions_paid", "text", (c) => c.notNull().defaultTo("0"))
        .addColumn("plan_commissions", "text", (c) => c.notNull().defaultTo("{}"))
        .addColumn("commission_plan", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
      await sql`insert into accounts (kind, strategy_id, cash, starting_cash, version, event_seq, commissions_paid,
          plan_commissions, commission_plan, created_at)
        select 'model', id, cash, starting_capital, trading_version, 0, commissions_paid, plan_commissions, 'Default',
          created_at from strategies order by id`.execute(db);

      const modelAccount = sql`(select a.id from accounts a where a.strategy_id = t.strategy_id)`;
      for (const table of ["orders", "fills", "trades", "oca_groups"]) {
        await db.schema
          .alterTable(table)
          .addColumn("account_id", "bigint", (c) => c.references("accounts.id"))
          .execute();
        await sql`update ${sql.table(table)} as t set account_id = ${modelAccount}`.execute(db);
      }

      // Positions are keyed by account and symbol now: the table is made again.
      await db.schema
        .createTable("account_positions")
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("cost", "text", (c) => c.notNull())
        .addColumn("opened_at", "bigint", (c) => c.notNull())
        .addColumn("trade_id", "bigint")
        .addPrimaryKeyConstraint("account_positions_pk", ["account_id", "symbol"])
        .execute();
      await sql`insert into account_positions (account_id, strategy_id, symbol, symbol_type, quantity, cost, opened_at,
          trade_id)
        select (select a.id from accounts a where a.strategy_id = p.strategy_id), p.strategy_id, p.symbol,
          p.symbol_type, p.quantity, p.cost, p.opened_at, p.trade_id from positions p`.execute(db);
      await db.schema.dropTable("positions").execute();
      await db.schema.alterTable("account_positions").renameTo("positions").execute();
      await db.schema
        .createIndex("positions_strategy_idx")
        .on("positions")
        .columns(["strategy_id", "symbol"])
        .execute();

      // What loading an account reads: its live orders (by status, which a query names with parameters:
      // a partial index would not serve it) and its open trades, few beside the history.
      await db.schema.createIndex("orders_account_status_idx").on("orders").columns(["account_id", "status"]).execute();
      await db.schema
        .createIndex("trades_account_open_idx")
        .on("trades")
        .column("account_id")
        .where(sql.ref("closed_at"), "is", null)
        .execute();
      await db.schema.createIndex("fills_account_idx").on("fills").columns(["account_id", "id"]).execute();

      for (const column of ["cash", "trading_version", "commissions_paid", "plan_commissions"]) {
        await db.schema.alterTable("strategies").dropColumn(column).execute();
      }

      // The outbox: every order event and fill, numbered per account in the commit that made it.
      await withId(backend, db.schema.createTable("order_events"))
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("seq", "bigint", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("order_id", "bigint")
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("actor_person_id", "bigint")
        .addColumn("on_behalf_of_person_id", "bigint")
        .addColumn("origin", "text", (c) => c.notNull())
        .addColumn("at", "bigint", (c) => c.notNull())
        .addUniqueConstraint("order_events_account_seq_key", ["account_id", "seq"])
        .execute();
      // Where each consumer of the outbox stands, per account.
      await db.schema
        .createTable("outbox_positions")
        .addColumn("consumer", "text", (c) => c.notNull())
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("seq", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("outbox_positions_pk", ["consumer", "account_id"])
        .execute();
    },
  };
}
