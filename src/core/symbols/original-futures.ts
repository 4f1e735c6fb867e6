import { localDate } from "../calendar.js";
import type { Instrument } from "./instrument.js";

/**
 * Futures symbols in the form clients of the original service write them:
 * a single-digit year (`@ESZ6`) and the original roots of the Treasury
 * contracts. The service keeps its own form (`@ESZ26`, `@ZNZ26`); legacy
 * answers name a future as its client wrote it (sentSymbolOf).
 */

/** The original roots of the Treasury contracts, and the service's root each one names. */
export const ORIGINAL_ROOTS: Readonly<Record<string, string>> = {
  TY: "ZN",
  US: "ZB",
  FV: "ZF",
  TU: "ZT",
};

/** The service's root a root names: an original root's counterpart, any other root itself. */
export const serviceRootOf = (root: string): string => ORIGINAL_ROOTS[root] ?? root;

/** How far back a single-digit year reaches: a contract of two years ago is still named, as an expired one. */
const YEARS_PAST = 2;

/**
 * The year a single-digit contract year names in `currentYear`: the first
 * year ending in that digit that is at most two years past. Each digit names
 * one year of the ten from two years ago; in 2029, 7 is 2027 and 6 is 2036;
 * in 2030, 8 is 2028, 0 is 2030 and 7 is 2037.
 */
export function yearOfDigit(digit: number, currentYear: number): number {
  const earliest = currentYear - YEARS_PAST;
  return earliest + ((((digit - earliest) % 10) + 10) % 10);
}

/** The current year of the service's calendar (New York, as contract expiry is judged) at `nowMs`. */
export const contractCalendarYear = (nowMs: number): number => localDate("America/New_York", nowMs).year;

/**
 * A future as its client wrote it, when that is not the service's form
 * (`@ESZ6`, `@TYZ26`, `ESZ26` with SymbolType future), in capitals: clients
 * of the original service match positions by the symbol they sent, so legacy
 * answers name the future so. Null for the service's form and for anything
 * but a future.
 */
export function sentSymbolOf(written: string, instrument: Instrument): string | null {
  const text = written.trim().toUpperCase();
  return instrument.symbolType === "future" && text !== instrument.fullSymbol ? text : null;
}
