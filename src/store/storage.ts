import { mkdirSync } from "node:fs";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, type SqliteDatabase as KyselySqliteDatabase, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { Listeners, type OnListening } from "./listener.js";
import type { Database } from "./schema.js";

export type Backend = "sqlite" | "postgres";

/** An open database: the Kysely handle, which engine is under it, and how to close it. */
export interface Storage {
  readonly db: Kysely<Database>;
  readonly backend: Backend;
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
}

export interface StorageConfig {
  /** postgres://... selects PostgreSQL; absent selects embedded SQLite in dataDir. */
  readonly databaseUrl?: string | undefined;
  readonly dataDir: string;
  /** PostgreSQL schema to work in (tests isolate themselves with one each). */
  readonly pgSchema?: string | undefined;
  /** PostgreSQL pool size. */
  readonly pgPoolSize?: number | undefined;
}

// int8 (bigserial ids, millisecond times) arrives as a string by default; all our
// int8 values are below 2^53, so numbers are exact.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export async function openStorage(config: StorageConfig): Promise<Storage> {
  if (config.databaseUrl) {
    return openPostgres(config.databaseUrl, config.pgSchema, config.pgPoolSize ?? 8);
  }
  return openSqlite(config.dataDir);
}

function openSqlite(dataDir: string): Storage {
  mkdirSync(dataDir, { recursive: true });
  const database = new SqliteDatabase(join(dataDir, "strategy-hub.sqlite"));
  database.pragma("journal_mode = WAL");
  // FULL makes each commit durable on power loss, not only on process crash.
  database.pragma("synchronous = FULL");
  // The CLI and the server share the file; wait for the other writer instead of failing.
  database.pragma("busy_timeout = 5000");
  database.pragma("foreign_keys = ON");
  // Checkpoints run on our own timer in small steps instead of one large stall
  // every 1000 pages inside some unlucky request.
  database.pragma("wal_autocheckpoint = 0");
  const checkpoints = setInterval(() => {
    database.pragma("wal_checkpoint(PASSIVE)");
  }, 250);
  checkpoints.unref();
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  const dataVersion = database.prepare("pragma data_version").pluck();
  return {
    db,
    backend: "sqlite",
    dataVersion: () => dataVersion.get() as number,
    async close() {
      clearInterval(checkpoints);
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
function withStatementCache(database: SqliteDatabase.Database, capacity = 1000): KyselySqliteDatabase {
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

async function openPostgres(url: string, schema: string | undefined, poolSize: number): Promise<Storage> {
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name: ${schema}`);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  if (schema) {
    const client = await pool.connect();
    try {
      await client.query(`create schema if not exists ${schema}`);
    } finally {
      client.release();
    }
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const listeners = new Listeners(
    () =>
      new pg.Client({
        connectionString: url,
        // TCP keep-alive: a peer gone without a word still ends the connection, so it is retried.
        keepAlive: true,
        // Operators (and tests) find the listeners of a deployment in pg_stat_activity by this name.
        application_name: `strategy-hub listener ${schema ?? ""}`.trimEnd(),
        ...(schema ? { options: `-c search_path=${schema}` } : {}),
      }),
  );
  return {
    db,
    backend: "postgres",
    async close() {
      await listeners.close();
      await db.destroy();
    },
    listen: (channel, onMessage, onListening) => listeners.listen(channel, onMessage, onListening),
  };
}
