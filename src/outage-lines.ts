import { errorCode, isStorageUnavailable } from "./store/unavailable.js";

/** How long a storage failure, once logged, stays out of the log when it repeats. */
export const OUTAGE_QUIET_MS = 60_000;

/** Distinct failures remembered at once; past it, what was remembered is forgotten (each logs again). */
const REMEMBERED = 1_000;

/**
 * While storage is unavailable (a full disk, PostgreSQL unreachable) every
 * background pass and every request fails the same way, several times a
 * second, for as long as the outage lasts: a log that repeats each would grow
 * by megabytes a minute, on the very disk that may be full. Such a failure is
 * logged the first time, then at most once a minute per message and error
 * code, each line saying how many like it were left out since the last
 * (`suppressed`). Other failures are always logged.
 */
export class OutageLines {
  readonly #logged = new Map<string, { atMs: number; leftOut: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * For a line about to be logged: null to leave it out; otherwise how many
   * like it were left out before it (0 for a line that is not about storage
   * being unavailable).
   */
  admit(error: unknown, message: string): number | null {
    if (!isStorageUnavailable(error)) return 0;
    const key = `${message}\u0000${errorCode(error) ?? (error as Error).message}`;
    const nowMs = this.now();
    const last = this.#logged.get(key);
    if (last !== undefined && nowMs - last.atMs < OUTAGE_QUIET_MS) {
      last.leftOut += 1;
      return null;
    }
    if (last === undefined && this.#logged.size >= REMEMBERED) this.#logged.clear();
    this.#logged.set(key, { atMs: nowMs, leftOut: 0 });
    return last?.leftOut ?? 0;
  }
}
