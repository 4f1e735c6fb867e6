import { centsToDecimal, type Decimal, round, storedDecimal, toNumber } from "./decimal.js";

/**
 * Money of commerce is whole cents (integers): prices, charges, balances.
 * Strategies keep their prices as exact decimal text of dollars; these turn
 * one into the other.
 */

/** Dollars as a whole number of cents, rounded half-even to the cent. */
export function centsOf(dollars: Decimal): number {
  return Number(round(dollars, 2) / (centsToDecimal(1) as bigint));
}

/** Stored decimal text of dollars as cents (null: null). */
export const centsOfText = (text: string | null): number | null =>
  text === null ? null : centsOf(storedDecimal(text));

/** Cents as dollars for a JSON answer (12345 → 123.45). */
export const dollarsOf = (cents: number): number => toNumber(centsToDecimal(cents));
