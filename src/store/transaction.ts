import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "./schema.js";
import type { Storage } from "./storage.js";

export type Tx = Kysely<Database> | Transaction<Database>;

/**
 * Runs `work` in one transaction: all of it commits or none of it does.
 *
 * On SQLite the transaction begins IMMEDIATE so that it takes the write lock up
 * front: a deferred one that reads and then writes can fail with SQLITE_BUSY
 * without waiting when another process (the CLI) committed in between.
 */
export async function transaction<T>(storage: Storage, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (storage.backend === "postgres") {
    return storage.db.transaction().execute(work);
  }
  return storage.db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}

/**
 * Runs `work` in the caller's transaction when the context carries one, and
 * in a transaction of its own otherwise: services compose inside one
 * transaction through the context alone.
 */
export async function withTransaction<C extends { readonly storage: Storage; readonly tx?: Tx }, T>(
  ctx: C,
  work: (ctx: C & { readonly tx: Tx }) => Promise<T>,
): Promise<T> {
  if (ctx.tx?.isTransaction) return work(ctx as C & { readonly tx: Tx });
  return transaction(ctx.storage, (tx) => work({ ...ctx, tx }));
}
