import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * White-label access grants: one row per WhiteLabelStartSubscription call on
 * a strategy the site owns, under its IdempotencyKey (unique per site). A
 * grant extends one subscription call after call, so the subscription row
 * can hold only the last key; these rows remember every key, so a late
 * retry of an earlier renewal replays it instead of extending twice.
 */
export function whiteLabelMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("subscription_grants"))
        .addColumn("site_id", "bigint", (c) => c.notNull().references("sites.id"))
        .addColumn("idempotency_key", "text", (c) => c.notNull())
        .addColumn("request_fingerprint", "text", (c) => c.notNull())
        .addColumn("subscription_id", "bigint", (c) => c.references("subscriptions.id"))
        .addColumn("granted_until", "bigint")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addUniqueConstraint("subscription_grants_key", ["site_id", "idempotency_key"])
        .execute();
    },
  };
}
