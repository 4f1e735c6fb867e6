import { type Kysely, PostgresAdapter, sql, type Transaction } from "kysely";
import type { Database } from "./schema.js";
import { busy, isBusy, retryWhileLocked } from "./sqlite-lock-wait.js";
import { SQLITE_BUSY_TIMEOUT_MS } from "./sqlite-settings.js";
import type { Backend, Storage } from "./storage.js";

export type Tx = Kysely<Database> | Transaction<Database>;

/**
 * The transactions `transaction` has open, each with the work to run once it
 * commits. On SQLite a transaction's handle is a plain Kysely bound to the
 * one connection (its `isTransaction` is false), so being open is known here.
 */
const open = new WeakMap<Tx, AfterCommit[]>();

/** Work run once a transaction has committed; a promise is awaited before the transaction's caller goes on. */
type AfterCommit = () => void | Promise<void>;

/**
 * Runs `work` in one transaction: all of it commits or none of it does. Once
 * it has committed, the work `afterCommit` was given inside it runs, and is
 * awaited before this answers.
 *
 * On SQLite the transaction begins IMMEDIATE so that it takes the write lock up
 * front: a deferred one that reads and then writes can fail with SQLITE_BUSY
 * without waiting when another process (the CLI) committed in between. While
 * another connection holds the lock it is tried again, off the event loop,
 * for as long as a connection's busy timeout would wait (5 s).
 */
export async function transaction<T>(storage: Storage, work: (tx: Tx) => Promise<T>): Promise<T> {
  const committed: AfterCommit[] = [];
  const tracked = async (tx: Tx): Promise<T> => {
    open.set(tx, committed);
    try {
      return await work(tx);
    } finally {
      open.delete(tx);
    }
  };
  const result = await run(storage, tracked);
  for (const then of committed) await then();
  return result;
}

async function run<T>(storage: Storage, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (storage.backend === "postgres") {
    return storage.db.transaction().execute(work);
  }
  // The connection is lent to others (reads) between tries.
  return retryWhileLocked((lastTry) =>
    storage.db.connection().execute(async (connection) => {
      if (!(await beginImmediateNow(connection, lastTry))) return busy;
      try {
        const result = await work(connection);
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        await sql`rollback`.execute(connection);
        throw error;
      }
    }),
  );
}

/**
 * Begins the transaction holding SQLite's write lock, or answers false when
 * another connection holds it (sqlite-lock-wait.ts: the connection's own busy
 * timeout would block the event loop). The last try fails SQLITE_BUSY.
 */
async function beginImmediateNow(connection: Tx, lastTry: boolean): Promise<boolean> {
  await sql`pragma busy_timeout = 0`.execute(connection);
  try {
    await sql`begin immediate`.execute(connection);
    return true;
  } catch (error) {
    if (!lastTry && isBusy(error)) return false;
    throw error;
  } finally {
    await sql.raw(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`).execute(connection);
  }
}

/** Whether the context carries a transaction `transaction` opened and that has not ended. */
export const inTransaction = (ctx: { readonly tx?: Tx }): boolean => ctx.tx !== undefined && open.has(ctx.tx);

/**
 * Runs `work` in the caller's transaction when the context carries one, and
 * in a transaction of its own otherwise: services compose inside one
 * transaction through the context alone (a second transaction inside the
 * first would wait for it forever on SQLite, and not see its writes).
 */
export async function withTransaction<C extends { readonly storage: Storage; readonly tx?: Tx }, T>(
  ctx: C,
  work: (ctx: C & { readonly tx: Tx }) => Promise<T>,
): Promise<T> {
  if (inTransaction(ctx)) return work(ctx as C & { readonly tx: Tx });
  return transaction(ctx.storage, (tx) => work({ ...ctx, tx }));
}

/**
 * Runs `then` once the context's transaction has committed: after the
 * outermost one, when services joined it; never when it rolls back. Outside a
 * transaction what was written has committed already, so it runs at once.
 * `then` must not throw, nor its promise reject: its transaction has
 * committed. Its promise is awaited by the transaction's caller (outside a
 * transaction, by no one).
 */
export function afterCommit(ctx: { readonly tx?: Tx }, then: AfterCommit): void {
  const waiting = ctx.tx === undefined ? undefined : open.get(ctx.tx);
  if (waiting) waiting.push(then);
  else void then();
}

/**
 * Runs reads that must agree with each other (an account's row, orders,
 * positions and open trades) on one snapshot: each statement on its own
 * would see the commits made between them, another process's or the
 * journal's, and put together rows of different moments. PostgreSQL: a
 * read-only repeatable-read transaction; SQLite: a deferred transaction,
 * whose snapshot is taken at its first read.
 */
export async function readConsistently<T>(storage: Storage, work: (db: Tx) => Promise<T>): Promise<T> {
  if (storage.backend === "postgres") {
    return storage.db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only").execute(work);
  }
  return storage.db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    try {
      return await work(connection);
    } finally {
      await sql`commit`.execute(connection);
    }
  });
}

/** The backend a transaction (or the storage's handle) talks to, for the few statements that differ. */
export const backendOf = (db: Tx): Backend =>
  db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
