import { setTimeout as sleep } from "node:timers/promises";
import { SQLITE_BUSY_TIMEOUT_MS } from "./sqlite-settings.js";
import { errorCode } from "./unavailable.js";

/**
 * Waiting for another connection's write lock (the journal's thread, the CLI,
 * an operator's shell, a backup that writes) without blocking the event loop.
 * better-sqlite3 is synchronous: a connection's busy timeout waits inside the
 * call, and every request of the process waits with it, up to 5 s each time.
 * So the service's connection tries without waiting and, while the lock is
 * held, tries again after a pause (1 ms, doubling to 50), for as long as the
 * busy timeout would have waited; then it fails SQLITE_BUSY (503) as that did.
 */

/** The longest pause between two tries. */
const PAUSE_AT_MOST_MS = 50;

export const isBusy = (error: unknown): boolean => errorCode(error)?.startsWith("SQLITE_BUSY") === true;

/** What an attempt answers when it met the lock held. */
export const busy: unique symbol = Symbol("busy");

/**
 * Runs `attempt` until it does not meet a held lock: `attempt(lastTry)`
 * answers `busy` to be tried again after a pause, anything else to be done;
 * on the last try (the busy timeout's wait spent) it must fail or finish.
 */
export async function retryWhileLocked<T>(attempt: (lastTry: boolean) => Promise<T | typeof busy>): Promise<T> {
  let waitedMs = 0;
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, PAUSE_AT_MOST_MS)) {
    const outcome = await attempt(waitedMs >= SQLITE_BUSY_TIMEOUT_MS);
    if (outcome !== busy) return outcome;
    await sleep(pauseMs);
    waitedMs += pauseMs;
  }
}

/** What the connection's driver needs of its database to write without blocking. */
export interface SqliteLockWaits {
  /** Whether the statement writes (transaction control does not count). */
  writes(sqlText: string): boolean;
  /** Whether the connection is in a transaction (whose writes hold the lock already). */
  inTransaction(): boolean;
  /** Turns the connection's own busy timeout off (false) or back on. */
  waitForLock(wait: boolean): void;
}

/**
 * Runs one statement outside a transaction, which writes: it fails whole when
 * it meets the lock held (nothing written, no transaction to spoil), so it is
 * tried again after a pause.
 */
export function writeWithoutBlocking<T>(lock: SqliteLockWaits, run: () => Promise<T>): Promise<T> {
  return retryWhileLocked(async (lastTry) => {
    lock.waitForLock(false);
    try {
      return await run();
    } catch (error) {
      if (lastTry || !isBusy(error)) throw error;
      return busy;
    } finally {
      lock.waitForLock(true);
    }
  });
}
