/**
 * A daily equity mark as storage keeps it: text decimals and the trading day.
 * Each mark is checked once, when it is written, so every reader trusts the
 * stored text and parses it without checking it again (storedDecimal).
 */
import { localDate } from "./calendar.js";
import { formatDecimal, parseDecimal } from "./decimal.js";

export interface StoredMark {
  /** The trading day, YYYY-MM-DD: the New York date of the close. */
  readonly day: string;
  /** The close, epoch milliseconds. */
  readonly marked_at: number;
  readonly equity: string;
  readonly cash: string;
  readonly exposure: string;
  readonly commissions_paid: string;
  /** What the fills so far would have cost under each plan: {"Default": "12.5", ...}. */
  readonly plan_commissions: string;
  readonly benchmark: string;
}

const NEW_YORK = "America/New_York";

/** Decimal columns hold formatDecimal's text: plain digits, no trailing zeros, at most eight places. */
const isStoredDecimal = (text: unknown): boolean => {
  if (typeof text !== "string") return false;
  const value = parseDecimal(text);
  return value !== null && formatDecimal(value) === text;
};

/** The marks of one close share its time: its date is worked out once (reading the zone's calendar is slow). */
let lastDay = { atMs: Number.NaN, day: "" };

function dayOf(atMs: number): string {
  if (lastDay.atMs !== atMs) {
    const { year, month, day } = localDate(NEW_YORK, atMs);
    lastDay = {
      atMs,
      day: `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`,
    };
  }
  return lastDay.day;
}

/** What is wrong with a mark about to be stored, or null when nothing is. */
function markProblem(mark: StoredMark): string | null {
  if (!Number.isSafeInteger(mark.marked_at)) return `marked_at is not a time: ${mark.marked_at}`;
  if (mark.day !== dayOf(mark.marked_at)) return `day ${mark.day} is not the New York date of its close`;
  for (const column of ["equity", "cash", "exposure", "commissions_paid", "benchmark"] as const) {
    if (!isStoredDecimal(mark[column])) return `${column} is not a stored decimal: ${mark[column]}`;
  }
  let plans: unknown;
  try {
    plans = JSON.parse(mark.plan_commissions);
  } catch {
    plans = null;
  }
  if (
    typeof plans !== "object" ||
    plans === null ||
    Array.isArray(plans) ||
    !Object.values(plans).every(isStoredDecimal)
  ) {
    return `plan_commissions is not a map of stored decimals: ${mark.plan_commissions}`;
  }
  return null;
}

/** Throws (a programming error: the writer made a bad mark) unless the mark may be stored. */
export function checkMark(mark: StoredMark): void {
  const problem = markProblem(mark);
  if (problem !== null) throw new RangeError(`equity mark: ${problem}`);
}
