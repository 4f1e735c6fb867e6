/**
 * Billing periods and retries, pure. A subscription's periods are counted
 * from its anchor (the start of the first paid period), so month ends do not
 * drift: anchored on January 31, periods end February 28 (or 29), March 31,
 * April 30. Times are epoch milliseconds, calendar arithmetic in UTC.
 */

export type BillingInterval = "month" | "year";

const DAY_MS = 86_400_000;

/** The instant `months` calendar months after `atMs`, the day clamped to the month's length. */
export function addMonths(atMs: number, months: number): number {
  const at = new Date(atMs);
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth() + months;
  const targetYear = year + Math.floor(month / 12);
  const targetMonth = ((month % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  const day = Math.min(at.getUTCDate(), lastDay);
  const timeOfDay = atMs - Date.UTC(year, at.getUTCMonth(), at.getUTCDate());
  return Date.UTC(targetYear, targetMonth, day) + timeOfDay;
}

/** Months in one billing interval of `count` months or years. */
export const monthsIn = (interval: BillingInterval, count: number): number =>
  interval === "year" ? 12 * count : count;

/** The end of the `n`th period (1 = the first) of a subscription anchored at `anchorMs`. */
export const periodEnd = (anchorMs: number, interval: BillingInterval, count: number, n: number): number =>
  addMonths(anchorMs, monthsIn(interval, count) * n);

/**
 * How long the biller waits after the `failures`th failed charge in a row
 * before trying again: an hour, six hours, a day, three days. After the last
 * the subscription is given up (billing_failed), its access lapsing at the end
 * of what was paid.
 */
export const RETRY_DELAYS_MS: readonly number[] = [3_600_000, 6 * 3_600_000, DAY_MS, 3 * DAY_MS];

/** The next attempt after a failure, or null once the retries are spent. */
export function retryAt(failedAtMs: number, failures: number): number | null {
  const delay = RETRY_DELAYS_MS[failures - 1];
  return delay === undefined ? null : failedAtMs + delay;
}
