import { Worker } from "node:worker_threads";
import { errorCode } from "../unavailable.js";
import type { AllocatedTable, CommitOutcome, IdRanges, Journal, JournalBatch } from "./batch.js";

/**
 * A journal whose writer is a thread of its own: the frame's batches and id
 * reservations are posted to it and answered by it, so a commit's round trips
 * and fsyncs never wait on (or hold up) the service's event loop.
 */
export interface JournalRequest {
  readonly id: number;
  readonly command:
    | { readonly kind: "commit"; readonly batch: JournalBatch }
    | { readonly kind: "reserve"; readonly table: AllocatedTable; readonly count: number }
    | { readonly kind: "probe"; readonly atIso: string }
    | { readonly kind: "close" };
}

export type JournalReply =
  | { readonly id: number; readonly ok: true; readonly value: CommitOutcome | IdRanges | null }
  | { readonly id: number; readonly ok: false; readonly message: string; readonly code?: string };

/** What a thread answers for a request that failed: the error's message and its code (SQLITE_FULL, a SQLSTATE...). */
export function failureReply(id: number, error: unknown): JournalReply {
  const code = errorCode(error);
  return { id, ok: false, message: error instanceof Error ? error.message : String(error), ...(code ? { code } : {}) };
}

/** The journal of the writer thread started from `module` with `workerData`; `beforeClose` runs first at close. */
export function journalOnThread(module: URL, workerData: unknown, beforeClose?: () => Promise<void>): Journal {
  const worker = startThread(module, workerData);
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 1;
  let failure: Error | null = null;
  worker.on("message", (reply: JournalReply) => {
    const waiter = waiting.get(reply.id);
    if (!waiter) return;
    waiting.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.value);
    // The code goes with it: it tells a full disk or a lost connection from a refused row (unavailable.ts).
    else waiter.reject(Object.assign(new Error(`journal: ${reply.message}`), reply.code ? { code: reply.code } : {}));
  });
  const failAll = (error: Error) => {
    // An error ends the thread: the exit that follows says less of why.
    failure ??= error;
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
    get failure() {
      return failure?.message ?? null;
    },
    commit: (batch: JournalBatch) => send<CommitOutcome>({ kind: "commit", batch }),
    reserveIds: (table: AllocatedTable, count: number) => send<IdRanges>({ kind: "reserve", table, count }),
    probe: (atIso: string) => send<null>({ kind: "probe", atIso }).then(() => undefined),
    async close() {
      await beforeClose?.();
      if (failure) return;
      await send({ kind: "close" });
      await worker.terminate();
    },
  };
}

/**
 * The module `name` beside the module at `from` (an `import.meta.url`), as
 * it is built: TypeScript under tsx in development and tests, JavaScript in
 * `dist/` once compiled.
 */
export function siblingModule(name: string, from: string): URL {
  return new URL(`./${name}${from.endsWith(".ts") ? ".ts" : ".js"}`, from);
}

/**
 * A worker running `module`. Under tsx, whose loader a worker thread does not
 * inherit on Node 20, the worker registers it before importing the module.
 */
export function startThread(module: URL, workerData: unknown): Worker {
  const target = JSON.stringify(module.href);
  const entry = module.pathname.endsWith(".ts")
    ? `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${target}); });`
    : `import(${target});`;
  return new Worker(entry, { eval: true, workerData });
}
