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
  const inFlight = new Map<number, (() => void)[]>();
  let next = 1;
  let scheduled = false;

  const send = () => {
    scheduled = false;
    if (inFlight.size > 0 || gathering.length === 0) return;
    const id = next++;
    inFlight.set(id, waiting);
    thread.postMessage({ id, rows: gathering });
    gathering = [];
    waiting = [];
  };
  const schedule = () => {
    if (scheduled || inFlight.size > 0) return;
    scheduled = true;
    // One turn of the event loop lets the requests that arrived together join the batch.
    setImmediate(send);
  };
  thread.on("message", (id: number) => {
    const answered = inFlight.get(id) ?? [];
    inFlight.delete(id);
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
