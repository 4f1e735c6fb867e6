import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { configureSqlite } from "../sqlite-settings.js";

/**
 * Checkpoints the embedded database's WAL on a thread of its own, in small
 * passive steps: a checkpoint copying many pages back takes a while, and on
 * the journal's thread it would hold the next commits back (WAL lets a
 * writer append while a checkpoint runs).
 *
 * Passive steps alone never let the WAL start over while the journal keeps
 * writing: the log restarts only when a writer finds every frame copied
 * back, and under steady orders new frames always arrive during the copy,
 * so the file grew without end (1.9 GB in 15 s of resting orders, each
 * commit slower than the last). Past `restartFrames` frames a step finishes
 * with a RESTART checkpoint: it waits for the writer's current transaction,
 * copies the few frames the passive step left, and makes the next commit
 * write the log from its beginning. Writers wait while it is pending, so it
 * gives up soon (busy, tried again next step) when a reader holds an old
 * snapshot, rather than hold the journal's commits for the 5 s every other
 * connection waits.
 */
const { file, checkpointMs, restartFrames } = workerData as {
  file: string;
  checkpointMs: number;
  restartFrames: number;
};
const db = new Database(file);
configureSqlite(db);
db.pragma("busy_timeout = 50");

interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

function step(): void {
  try {
    const [passive] = db.pragma("wal_checkpoint(PASSIVE)") as CheckpointResult[];
    if (passive && passive.log >= restartFrames) db.pragma("wal_checkpoint(RESTART)");
  } catch {
    // A checkpoint that fails (the file busy or locked a moment) leaves the log as it was: the next
    // step tries again. Thrown out of the timer it would end the thread, and checkpoints with it.
  }
}

const timer = setInterval(step, checkpointMs);

parentPort?.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort?.postMessage("closed");
  parentPort?.close();
});
