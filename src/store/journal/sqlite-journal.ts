import { once } from "node:events";
import type { Journal } from "./batch.js";
import { journalOnThread, siblingModule, startThread } from "./journal-thread.js";

/** How often the checkpointing thread checkpoints the WAL. */
const CHECKPOINT_MS = 250;

/**
 * The embedded database's journal: batches go to a thread of their own
 * (sqlite-journal-thread.ts) that owns a connection and answers once each
 * batch is durably committed; another thread checkpoints the WAL.
 */
export function openSqliteJournal(file: string): Journal {
  const checkpointer = startThread(siblingModule("sqlite-checkpoint-thread", import.meta.url), {
    file,
    checkpointMs: CHECKPOINT_MS,
  });
  checkpointer.on("error", () => undefined);
  const checkpointerExited = once(checkpointer, "exit");
  return journalOnThread(siblingModule("sqlite-journal-thread", import.meta.url), { file }, async () => {
    checkpointer.postMessage("close");
    await checkpointerExited;
  });
}
