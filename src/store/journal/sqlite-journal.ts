import { once } from "node:events";
import type { Journal } from "./batch.js";
import { journalOnThread, siblingModule, startThread } from "./journal-thread.js";

/** How the checkpointing thread keeps the WAL short (sqlite-checkpoint-thread.ts). */
export interface Checkpoints {
  /** How often it checkpoints. */
  readonly everyMs: number;
  /** WAL frames (pages) past which a checkpoint makes the log start over. */
  readonly restartFrames: number;
}

/** Every 250 ms; the log starts over past 8 MiB of 4 KiB pages. */
const CHECKPOINTS: Checkpoints = { everyMs: 250, restartFrames: 2_048 };

/**
 * The embedded database's journal: batches go to a thread of their own
 * (sqlite-journal-thread.ts) that owns a connection and answers once each
 * batch is durably committed; another thread checkpoints the WAL.
 */
export function openSqliteJournal(file: string, checkpoints = CHECKPOINTS): Journal {
  const checkpointer = startThread(siblingModule("sqlite-checkpoint-thread", import.meta.url), {
    file,
    checkpointMs: checkpoints.everyMs,
    restartFrames: checkpoints.restartFrames,
  });
  checkpointer.on("error", () => undefined);
  const checkpointerExited = once(checkpointer, "exit");
  return journalOnThread(siblingModule("sqlite-journal-thread", import.meta.url), { file }, async () => {
    checkpointer.postMessage("close");
    await checkpointerExited;
  });
}
