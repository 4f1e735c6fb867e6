import type SqliteDatabase from "better-sqlite3";

/** How long a connection waits for another's write lock before it fails SQLITE_BUSY. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** The settings every connection to the embedded database runs with (the service's and the journal's). */
export function configureSqlite(database: SqliteDatabase.Database): void {
  database.pragma("journal_mode = WAL");
  // FULL makes each commit durable on power loss, not only on process crash.
  database.pragma("synchronous = FULL");
  // The CLI, the service and the journal's thread share the file; wait for the other writer instead of failing.
  database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  database.pragma("foreign_keys = ON");
  // Checkpoints run in small steps on a thread of their own (src/store/journal/sqlite-checkpoint-thread.ts),
  // instead of one large stall every 1000 pages inside some unlucky request.
  database.pragma("wal_autocheckpoint = 0");
  // A log that grew past 64 MiB (a burst between two checkpoints) is cut back to it when it starts over.
  database.pragma("journal_size_limit = 67108864");
}
