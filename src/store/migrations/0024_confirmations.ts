import type { Kysely, Migration } from "kysely";

/**
 * The page where a customer confirms or discards the autotrade copies held
 * for their confirmation: one link per brokerage account (not per order),
 * made or refreshed when a copy is held. The token is an HMAC of the nonce
 * under a service secret; only its sha256 is kept. `holds` counts the holds
 * that refreshed the link, so a link spent (nothing held any more) is marked
 * used only if no copy was held meanwhile.
 */
export function confirmationsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("confirmation_links")
        .addColumn("account_id", "bigint", (c) => c.primaryKey().references("broker_accounts.account_id"))
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("holds", "integer", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .addColumn("used_at", "bigint")
        .execute();
    },
  };
}
