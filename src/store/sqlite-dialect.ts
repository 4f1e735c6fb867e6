import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from "kysely";
import { type SqliteLockWaits, writeWithoutBlocking } from "./sqlite-lock-wait.js";

/**
 * Kysely's SQLite dialect with the one connection handed out first come,
 * first served. Kysely's own lock wakes every waiter each time it is
 * released, so that with n callers waiting the work grows as n²: thousands
 * of reads at once (the trading frame loading thousands of accounts, many
 * requests together) would spend their time waking up. A statement that
 * writes outside a transaction waits for another connection's write lock
 * off the event loop (sqlite-lock-wait.ts).
 */
export class QueuedSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #lock: SqliteLockWaits;

  constructor(config: SqliteDialectConfig, lock: SqliteLockWaits) {
    super(config);
    this.#config = config;
    this.#lock = lock;
  }

  override createDriver(): Driver {
    return new QueuedDriver(new SqliteDriver(this.#config), this.#lock);
  }
}

class QueuedDriver implements Driver {
  readonly #waiting: (() => void)[] = [];
  #busy = false;
  #connection: DatabaseConnection | null = null;

  constructor(
    private readonly inner: SqliteDriver,
    private readonly lock: SqliteLockWaits,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#busy) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#busy = true;
    // Uncontended: only one caller at a time gets this far.
    const connection = await this.inner.acquireConnection();
    if (this.#connection === null) this.#connection = new LockWaitingConnection(connection, this.lock);
    return this.#connection;
  }

  async releaseConnection(): Promise<void> {
    await this.inner.releaseConnection();
    const next = this.#waiting.shift();
    if (next) next();
    else this.#busy = false;
  }

  beginTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.beginTransaction(connection);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  savepoint(...args: Parameters<SqliteDriver["savepoint"]>): Promise<void> {
    return this.inner.savepoint(...args);
  }

  rollbackToSavepoint(...args: Parameters<SqliteDriver["rollbackToSavepoint"]>): Promise<void> {
    return this.inner.rollbackToSavepoint(...args);
  }

  releaseSavepoint(...args: Parameters<SqliteDriver["releaseSavepoint"]>): Promise<void> {
    return this.inner.releaseSavepoint(...args);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** The one connection, its writes outside a transaction waiting for a held lock without blocking. */
class LockWaitingConnection implements DatabaseConnection {
  constructor(
    private readonly inner: DatabaseConnection,
    private readonly lock: SqliteLockWaits,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.lock.inTransaction() || !this.lock.writes(query.sql)) return this.inner.executeQuery(query);
    return writeWithoutBlocking(this.lock, () => this.inner.executeQuery<R>(query));
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery(query, chunkSize);
  }
}
