import { mkdirSync } from "node:fs";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, type SqliteDatabase as KyselySqliteDatabase, PostgresDialect } from "kysely";
import pg from "pg";
import { Listeners, type OnListening } from "./listener.js";
import { PG_CONNECT_TIMEOUT_MS, PG_LOCK_TIMEOUT_MS } from "./pg-connect.js";
import { namedStatementPool } from "./pg-named-statements.js";
import { readInt8AsNumber } from "./pg-types.js";
import type { Database } from "./schema.js";
import { QueuedSqliteDialect } from "./sqlite-dialect.js";
import type { SqliteLockWaits } from "./sqlite-lock-wait.js";
import { configureSqlite, SQLITE_BUSY_TIMEOUT_MS } from "./sqlite-settings.js";

export type Backend = "sqlite" | "postgres";

/** Where the database is, for connections of their own (the trading journal's). */
export type StorageLocation =
  | { readonly backend: "sqlite"; readonly file: string }
  /** `options`: what connections send at connect (the schema's search_path); none, the process's PGOPTIONS. */
  | { readonly backend: "postgres"; readonly url: string; readonly options: string | undefined };

/** An open database: the Kysely handle, which engine is under it, and how to close it. */
export interface Storage {
  readonly db: Kysely<Database>;
  readonly backend: Backend;
  readonly location: StorageLocation;
  close(): Promise<void>;
  /**
   * PostgreSQL only: calls `onMessage` with the payload of each notification on
   * the channel, on a connection of its own, until the answered stop is called
   * or storage closes. A lost connection comes back by itself; `onListening`
   * hears when it is lost (notifications are missed until it is back) and back.
   */
  readonly listen?: (
    channel: string,
    onMessage: (payload: string) => void,
    onListening?: OnListening,
  ) => Promise<() => Promise<void>>;
  /**
   * SQLite only: `PRAGMA data_version` of the connection queries run on. It
   * changes when another connection (another process) commits; reading it
   * takes the WAL read lock for a moment (microseconds).
   */
  readonly dataVersion?: () => number;
  /**
   * SQLite only: moves whenever something may have been written: another
   * connection committed (data_version, looked at once a turn of the event
   * loop) or the connection queries run on changed rows (total_changes, at
   * once). While it stands, every row reads as it did.
   */
  readonly writeMark?: () => string;
  /**
   * SQLite only: a small read run at once on the connection queries run on
   * (its statement prepared once), without a turn through the query queue;
   * null while a transaction is open there, whose writes it would see
   * uncommitted: the caller then reads through `db`, after that transaction.
   */
  readonly readAtOnce?: (sqlText: string, params: readonly unknown[]) => { readonly row: unknown } | null;
}

export interface StorageConfig {
  /** postgres://... selects PostgreSQL; absent selects embedded SQLite in dataDir. */
  readonly databaseUrl?: string | undefined;
  readonly dataDir: string;
  /** PostgreSQL schema to work in (tests isolate themselves with one each). */
  readonly pgSchema?: string | undefined;
  /**
   * Options sent to PostgreSQL at connect, as libpq's PGOPTIONS (`-c search_path=...`):
   * the operator CLI passes the variable of the environment it runs in; without
   * it (and without pgSchema) the driver reads the process's own.
   */
  readonly pgOptions?: string | undefined;
  /** PostgreSQL pool size. */
  readonly pgPoolSize?: number | undefined;
}

readInt8AsNumber();

export async function openStorage(config: StorageConfig): Promise<Storage> {
  if (config.databaseUrl) {
    const options = config.pgSchema ? `-c search_path=${config.pgSchema}` : config.pgOptions;
    return openPostgres(config.databaseUrl, config.pgSchema, options, config.pgPoolSize ?? 8);
  }
  return openSqlite(config.dataDir);
}

function openSqlite(dataDir: string): Storage {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "strategy-hub.sqlite");
  const database = new SqliteDatabase(file);
  configureSqlite(database);
  const statements = withStatementCache(database);
  const waitForLock = database.prepare(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  const dontWaitForLock = database.prepare("pragma busy_timeout = 0");
  const lock: SqliteLockWaits = {
    // BEGIN IMMEDIATE counts as a write to SQLite; transaction() waits for it itself, lending the connection out.
    writes: (sqlText) => !sqlText.startsWith("begin") && !statements.prepare(sqlText).readonly,
    inTransaction: () => database.inTransaction,
    waitForLock: (wait) => void (wait ? waitForLock : dontWaitForLock).run(),
  };
  const db = new Kysely<Database>({ dialect: new QueuedSqliteDialect({ database: statements }, lock) });
  const dataVersion = database.prepare("pragma data_version").pluck();
  const totalChanges = database.prepare("select total_changes()").pluck();
  // data_version takes the WAL read lock, microseconds under load: read once a turn of the event
  // loop. Another connection's commit seen a turn late is one the requests of that turn raced with;
  // this connection's own changes (total_changes, a counter read without a lock) count at once.
  let versionThisTurn: number | null = null;
  const dataVersionThisTurn = () => {
    if (versionThisTurn === null) {
      versionThisTurn = dataVersion.get() as number;
      setImmediate(() => {
        versionThisTurn = null;
      });
    }
    return versionThisTurn;
  };
  return {
    db,
    backend: "sqlite",
    location: { backend: "sqlite", file },
    dataVersion: () => dataVersion.get() as number,
    writeMark: () => `${dataVersionThisTurn()}:${totalChanges.get() as number}`,
    readAtOnce: (sqlText, params) =>
      database.inTransaction ? null : { row: statements.prepare(sqlText).all(params)[0] },
    async close() {
      // The last connection to close checkpoints the WAL into the database file.
      await db.destroy();
    },
  };
}

/**
 * Kysely prepares every query anew; preparing costs more than running a small
 * indexed query, so prepared statements are kept by their SQL text. Queries on
 * one connection never overlap (Kysely serializes them), so reusing a
 * statement is safe.
 */
function withStatementCache(
  database: SqliteDatabase.Database,
  capacity = 1000,
): { close(): void; prepare(sql: string): SqliteDatabase.Statement } {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        // Queries with generated lists can produce unbounded distinct texts.
        if (statements.size >= capacity) statements.clear();
        statement = database.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

async function openPostgres(
  url: string,
  schema: string | undefined,
  options: string | undefined,
  poolSize: number,
): Promise<Storage> {
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name: ${schema}`);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    lock_timeout: PG_LOCK_TIMEOUT_MS,
    keepAlive: true,
    // Operators (and tests) find the service's connections in pg_stat_activity by this name.
    application_name: `strategy-hub ${schema ?? ""}`.trimEnd(),
    ...(options ? { options } : {}),
  });
  // An idle connection the server ends (a restart, a failover, an administrator) is dropped
  // from the pool, which opens another when asked; unheard, the pool's 'error' would end the process.
  pool.on("error", () => undefined);
  if (schema) {
    const client = await pool.connect();
    try {
      await client.query(`create schema if not exists ${schema}`);
    } finally {
      client.release();
    }
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: namedStatementPool(pool) }) });
  const listeners = new Listeners(
    () =>
      new pg.Client({
        connectionString: url,
        // TCP keep-alive: a peer gone without a word still ends the connection, so it is retried.
        keepAlive: true,
        connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
        // Operators (and tests) find the listeners of a deployment in pg_stat_activity by this name.
        application_name: `strategy-hub listener ${schema ?? ""}`.trimEnd(),
        ...(options ? { options } : {}),
      }),
  );
  return {
    db,
    backend: "postgres",
    location: { backend: "postgres", url, options },
    async close() {
      await listeners.close();
      await db.destroy();
    },
    listen: (channel, onMessage, onListening) => listeners.listen(channel, onMessage, onListening),
  };
}
