import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * The GEN checkout: a customer's intent to buy a subscription, approved on
 * its page; and the sandbox payment provider's charges, one outcome per
 * reference, so a charge retried after a crash or a restart answers as the
 * first did (real processors keep idempotency keys the same way).
 */
export function checkoutMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("subscription_checkouts"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("status_detail", "text", (c) => c.notNull())
        .addColumn("billing_interval", "text", (c) => c.notNull())
        .addColumn("billing_interval_count", "integer", (c) => c.notNull())
        .addColumn("price_cents", "bigint", (c) => c.notNull())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("pending_key", "text", (c) => c.unique())
        .addColumn("subscription_id", "bigint", (c) => c.references("subscriptions.id"))
        .addColumn("payment_ref", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("sandbox_charges")
        .addColumn("reference", "text", (c) => c.primaryKey())
        .addColumn("outcome", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .addColumn("provider_ref", "text", (c) => c.notNull())
        .addColumn("payment_ref", "text", (c) => c.notNull())
        .addColumn("amount_cents", "bigint", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();
    },
  };
}
