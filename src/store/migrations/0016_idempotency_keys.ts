import type { Kysely, Migration } from "kysely";

/**
 * Idempotency keys of order entry (the Idempotency-Key header): who sent
 * which key for which request, how far it got, and the answer to replay. A
 * key is claimed (pending) before the request runs, marked committed in the
 * same commit as the orders it made, and answered once its answer is known.
 */
export function idempotencyKeysMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("idempotency_keys")
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("operation", "text", (c) => c.notNull())
        .addColumn("fingerprint", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("claimed_by", "text", (c) => c.notNull())
        .addColumn("claimed_at", "bigint", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("answer", "text")
        .addPrimaryKeyConstraint("idempotency_keys_pkey", ["person_id", "key"])
        .execute();
      await db.schema.createIndex("idempotency_keys_created_idx").on("idempotency_keys").column("created_at").execute();
    },
  };
}
