/**
 * What makes the bare server durable (BARE_DURABLE_FILE, bench/bare.ts): each
 * request's body is stored as a row on a thread of its own
 * (bench/bare-store-thread.ts), the rows of one turn of the event loop in one
 * transaction, one batch at a time, and the request is answered once its
 * batch is committed. The service's write path in its simplest form (no
 * state, no checks, one row per order): the least a durably stored order
 * costs on this machine.
 */
import { siblingModule, startThread } from "../src/store/journal/journal-thread.js";
import type { StoredRow } from "./bare-store-thread.js";

export interface DurableStore {
  /** Resolves once the row is durably committed. */
  store(strategyId: number, body: string): Promise<void>;
}

export function durableStore(file: string): DurableStore {
  const thread = startThread(siblingModule("bare-store-thread", import.meta.url), { file });
  thread.on("error", (error) => {
    console.error(error);
    process.exit(1);
  });
  let gathering: StoredRow[] = [];
  let waiting: (() => void)[] = [];
  /** The requests of the batch being committed (one at a time), null when none is. */
  let committing: (() => void)[] | null = null;
  let scheduled = false;

  const send = () => {
    scheduled = false;
    if (committing !== null || gathering.length === 0) return;
    committing = waiting;
    thread.postMessage(gathering);
    gathering = [];
    waiting = [];
  };
  const schedule = () => {
    if (scheduled || committing !== null) return;
    scheduled = true;
    // One turn of the event loop lets the requests that arrived together join the batch.
    setImmediate(send);
  };
  thread.on("message", () => {
    const answered = committing ?? [];
    committing = null;
    for (const answer of answered) answer();
    schedule();
  });
  return {
    store(strategyId, body) {
      return new Promise<void>((resolve) => {
        gathering.push([strategyId, body, Date.now()]);
        waiting.push(resolve);
        schedule();
      });
    },
  };
}
