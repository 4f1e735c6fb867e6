/**
 * When a delivery that failed is tried again: 1 minute, 5 minutes, 30
 * minutes, 2 hours after the failed attempt, then every 6 hours, and a last
 * time exactly 24 hours after the event was owed (its first attempt is due
 * then); after that it has failed. Times are the service clock's, so the
 * sandbox can move through the schedule.
 */
export const RETRY_DELAYS_MS: readonly number[] = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000];

/** How long a delivery is retried, from when the event was owed (its first attempt is due at once). */
export const RETRY_WINDOW_MS = 24 * 3_600_000;

/**
 * When to try again after the `attempts`-th attempt failed at `nowMs`, for a
 * delivery owed since `owedAtMs`; null: it has failed for good.
 */
export function nextAttemptAt(owedAtMs: number, attempts: number, nowMs: number): number | null {
  const deadline = owedAtMs + RETRY_WINDOW_MS;
  if (nowMs >= deadline) return null;
  const delay = RETRY_DELAYS_MS[Math.min(attempts, RETRY_DELAYS_MS.length) - 1] as number;
  return Math.min(nowMs + delay, deadline);
}
