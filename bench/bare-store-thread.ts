/**
 * The durable bare server's writer (bench/bare-store.ts): a thread of its own
 * with a connection of its own, committing each batch of rows it is sent in
 * one transaction, durably (WAL, synchronous FULL, as the service's journal
 * commits), then answering. SQLite checkpoints the WAL on this thread as it
 * does by default, never on the server's event loop.
 */
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

export type StoredRow = readonly [strategyId: number, body: string, atMs: number];

const db = new Database((workerData as { file: string }).file);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(
  "create table if not exists orders (id integer primary key, strategy_id integer not null, body text not null, at integer not null)",
);
// As the service's orders are indexed by strategy: a batch of many strategies writes a leaf page for each.
db.exec("create index if not exists orders_strategy_idx on orders (strategy_id, id)");
const insert = db.prepare("insert into orders (strategy_id, body, at) values (?, ?, ?)");
const commit = db.transaction((rows: readonly StoredRow[]) => {
  for (const row of rows) insert.run(...row);
});

parentPort?.on("message", (rows: readonly StoredRow[]) => {
  commit(rows);
  parentPort?.postMessage(null);
});
