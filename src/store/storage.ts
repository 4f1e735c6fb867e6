import { mkdirSync } from "node:fs";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, type SqliteDatabase as KyselySqliteDatabase, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import type { Database } from "./schema.js";

export type Backend = "sqlite" | "postgres";

/** An open database: the Kysely handle, which engine is under it, and how to close it. */
export interface Storage {
  readonly db: Kysely<Database>;
  readonly backend: Backend;
  close(): Promise<void>;
  /**
   * PostgreSQL only: calls `onMessage` with the payload of each notification on
   * the channel, on a connection of its own, until the answered stop is called.
   */
  readonly listen?: (channel: string, onMessage: (payload: string) => void) => Promise<() => Promise<void>>;
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
  return {
    db,
    backend: "sqlite",
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
  return {
    db,
    backend: "postgres",
    async close() {
      await db.destroy();
    },
    async listen(channel, onMessage) {
      const client = new pg.Client({
        connectionString: url,
        ...(schema ? { options: `-c search_path=${schema}` } : {}),
      });
      await client.connect();
      client.on("notification", (message) => onMessage(message.payload ?? ""));
      await client.query(`listen ${channel}`);
      return () => client.end();
    },
  };
}
