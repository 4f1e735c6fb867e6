import { once } from "node:events";
import { Worker } from "node:worker_threads";
import type { AllocatedTable, CommitOutcome, IdRanges, Journal, JournalBatch } from "./batch.js";
import type { JournalReply, JournalRequest } from "./sqlite-journal-thread.js";

/** How often the checkpointing thread checkpoints the WAL. */
const CHECKPOINT_MS = 250;

/**
 * The embedded database's journal: batches go to a thread of their own
 * (sqlite-journal-thread.ts) that owns a connection and answers once each
 * batch is durably committed; another thread checkpoints the WAL.
 */
export function openSqliteJournal(file: string): Journal {
  const worker = new Worker(threadEntry(new URL("./sqlite-journal-thread.ts", import.meta.url)), {
    eval: true,
    workerData: { file },
  });
  const checkpointer = new Worker(threadEntry(new URL("./sqlite-checkpoint-thread.ts", import.meta.url)), {
    eval: true,
    workerData: { file, checkpointMs: CHECKPOINT_MS },
  });
  checkpointer.on("error", () => undefined);
  const checkpointerExited = once(checkpointer, "exit");
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 1;
  let failure: Error | null = null;
  worker.on("message", (reply: JournalReply) => {
    const waiter = waiting.get(reply.id);
    if (!waiter) return;
    waiting.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(new Error(`journal: ${reply.message}`));
  });
  const failAll = (error: Error) => {
    failure = error;
    for (const waiter of waiting.values()) waiter.reject(error);
    waiting.clear();
  };
  worker.on("error", failAll);
  worker.on("exit", (code) => failAll(new Error(`the journal's thread exited (${code})`)));

  const send = <T>(command: JournalRequest["command"]): Promise<T> => {
    if (failure) return Promise.reject(failure);
    const id = next++;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, command } satisfies JournalRequest);
    });
  };
  return {
    commit: (batch: JournalBatch) => send<CommitOutcome>({ kind: "commit", batch }),
    reserveIds: (table: AllocatedTable, count: number) => send<IdRanges>({ kind: "reserve", table, count }),
    async close() {
      checkpointer.postMessage("close");
      await checkpointerExited;
      if (failure) return;
      await send({ kind: "close" });
      await worker.terminate();
    },
  };
}

/**
 * The code a worker starts with. The service runs its TypeScript through tsx,
 * whose loader a worker thread does not inherit on Node 20: the worker
 * registers it before importing the module.
 */
function threadEntry(module: URL): string {
  const target = JSON.stringify(module.href);
  return module.pathname.endsWith(".ts")
    ? `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${target}); });`
    : `import(${target});`;
}
