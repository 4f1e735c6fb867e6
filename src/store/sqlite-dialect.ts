import { type DatabaseConnection, type Driver, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from "kysely";

/**
 * Kysely's SQLite dialect with the one connection handed out first come,
 * first served. Kysely's own lock wakes every waiter each time it is
 * released, so that with n callers waiting the work grows as n²: thousands
 * of reads at once (the trading frame loading thousands of accounts, many
 * requests together) would spend their time waking up.
 */
export class QueuedSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new QueuedDriver(new SqliteDriver(this.#config));
  }
}

class QueuedDriver implements Driver {
  readonly #waiting: (() => void)[] = [];
  #busy = false;

  constructor(private readonly inner: SqliteDriver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#busy) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#busy = true;
    // Uncontended: only one caller at a time gets this far.
    return this.inner.acquireConnection();
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
