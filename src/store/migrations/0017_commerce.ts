import { type Kysely, type Migration, sql } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Commerce: subscriptions gain their kind, lane, price and billing state; a
 * strategy may offer annual billing; white-label sites keep a resale catalog
 * and may be allowed to bill into a negative house balance; and money moves
 * only through a double-entry ledger in integer cents, whose balances are
 * sums of entries, never edited in place.
 */
export function commerceMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const subscriptionColumns: [string, "text" | "bigint" | "integer", string | number | null][] = [
        ["kind", "text", "real"],
        ["lane", "text", "free"],
        ["site_id", "bigint", null],
        ["price_cents", "bigint", 0],
        ["base_price_cents", "bigint", 0],
        ["markup_cents", "bigint", 0],
        ["billing_interval", "text", null],
        ["billing_interval_count", "integer", null],
        ["paid_until", "bigint", null],
        ["next_charge_at", "bigint", null],
        ["next_charge_cents", "bigint", null],
        ["cancel_pending", "integer", 0],
        ["failure_count", "integer", 0],
        ["last_failure_reason", "text", null],
        ["last_failure_at", "bigint", null],
        ["last_charge_at", "bigint", null],
        ["last_charge_cents", "bigint", null],
        ["charge_seq", "integer", 0],
        ["idempotency_key", "text", null],
        ["request_fingerprint", "text", null],
        ["start_equity", "text", null],
        ["end_reason", "text", null],
        ["payment_ref", "text", null],
        ["live_key", "text", null],
        ["billing_claimed_until", "bigint", null],
      ];
      for (const [name, type, fallback] of subscriptionColumns) {
        await db.schema
          .alterTable("subscriptions")
          .addColumn(name, type, (c) => (fallback === null ? c : c.notNull().defaultTo(fallback)))
          .execute();
      }
      // A person holds at most one live subscription per strategy, whatever its kind: the
      // unique key is set while it lives and cleared when it ends, so concurrent starts
      // race on the index, not on a read.
      await sql`update subscriptions set live_key = person_id || ':' || strategy_id where ended_at is null`.execute(db);
      await db.schema.createIndex("subscriptions_live_key").on("subscriptions").column("live_key").unique().execute();
      await db.schema
        .createIndex("subscriptions_due_idx")
        .on("subscriptions")
        .columns(["next_charge_at", "id"])
        .execute();
      await db.schema
        .createIndex("subscriptions_site_idx")
        .on("subscriptions")
        .columns(["site_id", "strategy_id"])
        .execute();

      await db.schema.alterTable("strategies").addColumn("annual_cost", "text").execute();
      await db.schema
        .alterTable("sites")
        .addColumn("allow_negative_billing", "integer", (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema
        .createTable("site_catalog")
        .addColumn("site_id", "bigint", (c) => c.notNull().references("sites.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("markup_cents", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("display_name", "text")
        .addColumn("short_description", "text")
        .addColumn("long_description", "text")
        .addColumn("added_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("site_catalog_pkey", ["site_id", "strategy_id"])
        .execute();

      await withId(backend, db.schema.createTable("ledger_accounts"))
        .addColumn("owner_key", "text", (c) => c.notNull().unique())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("person_id", "bigint", (c) => c.references("persons.id"))
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
      await withId(backend, db.schema.createTable("ledger_transactions"))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("reference", "text", (c) => c.unique())
        .addColumn("subscription_id", "bigint", (c) => c.references("subscriptions.id"))
        .addColumn("memo", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
      await withId(backend, db.schema.createTable("ledger_entries"))
        .addColumn("transaction_id", "bigint", (c) => c.notNull().references("ledger_transactions.id"))
        .addColumn("account_id", "bigint", (c) => c.notNull().references("ledger_accounts.id"))
        .addColumn("amount_cents", "bigint", (c) => c.notNull())
        // The account's balance after this entry: a balance is read from its latest entry, not summed
        // over all of them (a house account takes an entry per charge, for years), and entries are
        // only ever appended, so nothing is edited in place.
        .addColumn("balance_after_cents", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("ledger_entries_account_idx")
        .on("ledger_entries")
        .columns(["account_id", "id"])
        .execute();
      await db.schema
        .createIndex("ledger_entries_transaction_idx")
        .on("ledger_entries")
        .column("transaction_id")
        .execute();
      await db.schema
        .createIndex("ledger_transactions_subscription_idx")
        .on("ledger_transactions")
        .columns(["subscription_id", "id"])
        .execute();
    },
  };
}
