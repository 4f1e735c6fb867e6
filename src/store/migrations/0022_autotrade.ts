import { type Kysely, type Migration, sql } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Autotrade: the brokers the service trades through; brokerage accounts
 * (each an account of kind broker, whose cash and value the broker reports);
 * autotrade setups (an account following a strategy with its settings);
 * account orders (the copies of strategy orders sent to the broker, each
 * under its own idempotency key, with the broker-order state machine's
 * status); their fills; the positions each setup holds in its account; copies
 * skipped with their reason; WL approval requests; the sites' webhook
 * endpoints and the deliveries owed to them; and notices to customers.
 */
export function autotradeMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("brokers"))
        .addColumn("name", "text", (c) => c.notNull().unique())
        .addColumn("connection_name", "text", (c) => c.notNull())
        .addColumn("is_enabled", "integer", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
      // The simulated broker (src/engine/brokers/simulated.ts) is broker 1.
      await sql`insert into brokers (name, connection_name, is_enabled, created_at)
        values ('Simulated Broker', 'Simulated', 1, 0)`.execute(db);

      await db.schema
        .createTable("broker_accounts")
        .addColumn("account_id", "bigint", (c) => c.primaryKey().references("accounts.id"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("broker_id", "bigint", (c) => c.notNull().references("brokers.id"))
        .addColumn("account_number", "text", (c) => c.notNull())
        .addColumn("is_paper", "integer", (c) => c.notNull())
        .addColumn("account_type", "integer", (c) => c.notNull())
        .addColumn("currency", "text", (c) => c.notNull())
        .addColumn("broker_username", "text")
        .addColumn("is_linked", "integer", (c) => c.notNull())
        .addColumn("net_liquidation", "text")
        .addColumn("net_liquidation_at", "bigint")
        .addColumn("first_activation_at", "bigint")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addUniqueConstraint("broker_accounts_number_key", ["broker_id", "account_number"])
        .execute();
      await db.schema.createIndex("broker_accounts_person_idx").on("broker_accounts").column("person_id").execute();

      await withId(backend, db.schema.createTable("autotrade_setups"))
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("broker_id", "bigint", (c) => c.notNull().references("brokers.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("live_key", "text", (c) => c.unique())
        .addColumn("scaling_percentage", "text", (c) => c.notNull())
        .addColumn("is_autotrade_enabled", "integer", (c) => c.notNull())
        .addColumn("autotrade_disabled_reason", "text")
        .addColumn("is_sync_enabled", "integer", (c) => c.notNull())
        .addColumn("sync_disabled_reason", "text")
        .addColumn("is_confirmation_needed", "integer", (c) => c.notNull())
        .addColumn("approved", "integer", (c) => c.notNull())
        .addColumn("settings", "text", (c) => c.notNull())
        .addColumn("sync_to_open", "text", (c) => c.notNull())
        .addColumn("last_sync", "text", (c) => c.notNull())
        .addColumn("do_not_join_open_positions", "integer", (c) => c.notNull())
        .addColumn("stop_requested_at", "bigint")
        .addColumn("stop_leave_positions_open", "integer")
        .addColumn("stop_terminate_subscription", "integer")
        .addColumn("started_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addColumn("stopped_at", "bigint")
        .execute();
      await db.schema
        .createIndex("autotrade_setups_strategy_idx")
        .on("autotrade_setups")
        .columns(["strategy_id", "status"])
        .execute();
      await db.schema
        .createIndex("autotrade_setups_person_idx")
        .on("autotrade_setups")
        .columns(["person_id", "account_id"])
        .execute();

      await withId(backend, db.schema.createTable("account_orders"))
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("setup_id", "bigint", (c) => c.references("autotrade_setups.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("source_order_id", "bigint")
        .addColumn("purpose", "text", (c) => c.notNull())
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("open_close", "text", (c) => c.notNull())
        .addColumn("order_type", "text", (c) => c.notNull())
        .addColumn("tif", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("limit_price", "text")
        .addColumn("stop_price", "text")
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("prior_status", "text")
        .addColumn("awaiting_confirmation", "integer", (c) => c.notNull())
        .addColumn("filled_quantity", "text", (c) => c.notNull())
        .addColumn("filled_notional", "text", (c) => c.notNull())
        .addColumn("idempotency_key", "text", (c) => c.notNull().unique())
        .addColumn("broker_order_id", "text")
        .addColumn("replaces_id", "bigint")
        .addColumn("reason", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addColumn("sent_at", "bigint")
        .addColumn("closed_at", "bigint")
        .execute();
      await db.schema
        .createIndex("account_orders_account_status_idx")
        .on("account_orders")
        .columns(["account_id", "status"])
        .execute();
      await db.schema
        .createIndex("account_orders_source_idx")
        .on("account_orders")
        .columns(["source_order_id"])
        .execute();

      await withId(backend, db.schema.createTable("account_fills"))
        .addColumn("account_order_id", "bigint", (c) => c.notNull().references("account_orders.id"))
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull())
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("side", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("price", "text", (c) => c.notNull())
        .addColumn("broker_fill_id", "text", (c) => c.notNull())
        .addColumn("filled_at", "bigint", (c) => c.notNull())
        .addUniqueConstraint("account_fills_broker_key", ["account_order_id", "broker_fill_id"])
        .execute();

      await db.schema
        .createTable("autotrade_positions")
        .addColumn("account_id", "bigint", (c) => c.notNull().references("accounts.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("symbol", "text", (c) => c.notNull())
        .addColumn("symbol_type", "text", (c) => c.notNull())
        .addColumn("quantity", "text", (c) => c.notNull())
        .addColumn("cost", "text", (c) => c.notNull())
        .addColumn("opened_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("autotrade_positions_pk", ["account_id", "strategy_id", "symbol"])
        .execute();

      await withId(backend, db.schema.createTable("copy_skips"))
        .addColumn("setup_id", "bigint", (c) => c.notNull().references("autotrade_setups.id"))
        .addColumn("account_id", "bigint", (c) => c.notNull())
        .addColumn("strategy_id", "bigint", (c) => c.notNull())
        .addColumn("source_order_id", "bigint", (c) => c.notNull())
        .addColumn("reason", "text", (c) => c.notNull())
        .addColumn("message", "text", (c) => c.notNull())
        .addColumn("at", "bigint", (c) => c.notNull())
        .addUniqueConstraint("copy_skips_key", ["setup_id", "source_order_id"])
        .execute();

      await withId(backend, db.schema.createTable("autotrade_approvals"))
        .addColumn("site_id", "bigint", (c) => c.notNull().references("sites.id"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("broker_id", "bigint", (c) => c.notNull().references("brokers.id"))
        .addColumn("account_number", "text", (c) => c.notNull())
        .addColumn("request", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("status_detail", "text")
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("setup_id", "bigint", (c) => c.references("autotrade_setups.id"))
        .addColumn("superseded_by", "bigint")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("autotrade_approvals_setup_idx")
        .on("autotrade_approvals")
        .columns(["person_id", "strategy_id", "account_number", "status"])
        .execute();

      await withId(backend, db.schema.createTable("webhook_endpoints"))
        .addColumn("site_id", "bigint", (c) => c.notNull().references("sites.id"))
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("secret", "text", (c) => c.notNull())
        .addColumn("live_key", "text", (c) => c.unique())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("deleted_at", "bigint")
        .execute();
      await withId(backend, db.schema.createTable("webhook_deliveries"))
        .addColumn("endpoint_id", "bigint", (c) => c.notNull().references("webhook_endpoints.id"))
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("event_type", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull())
        .addColumn("next_attempt_at", "bigint")
        .addColumn("claimed_until", "bigint")
        .addColumn("last_error", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("delivered_at", "bigint")
        .addUniqueConstraint("webhook_deliveries_event_key", ["endpoint_id", "event_id"])
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_due_idx")
        .on("webhook_deliveries")
        .columns(["status", "next_attempt_at"])
        .execute();

      await withId(backend, db.schema.createTable("customer_notices"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("message", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
    },
  };
}
