import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { configureSqlite } from "../sqlite-settings.js";

/**
 * Checkpoints the embedded database's WAL on a thread of its own, in small
 * passive steps: a checkpoint copying many pages back takes a while, and on
 * the journal's thread it would hold the next commits back (WAL lets a
 * writer append while a checkpoint runs).
 */
const { file, checkpointMs } = workerData as { file: string; checkpointMs: number };
const db = new Database(file);
configureSqlite(db);
const timer = setInterval(() => db.pragma("wal_checkpoint(PASSIVE)"), checkpointMs);

parentPort?.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort?.postMessage("closed");
  parentPort?.close();
});
