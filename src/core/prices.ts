import { parseDecimal, round } from "./decimal.js";
import { centsOf } from "./money.js";

/**
 * Prices and amounts of money as operators and sites state them: dollars,
 * exact to the cent (a sub-cent amount is a mistake, never rounded away),
 * never negative, and below a bound no subscription price or funding
 * reaches. Text is read exactly; a JSON number by its shortest decimal form.
 */

/** Far above any monthly price, markup or funding: larger is a typing mistake. */
export const MAX_DOLLARS = 10_000_000;

export type DollarsReading =
  | { readonly ok: true; readonly cents: number }
  | { readonly ok: false; readonly message: string };

export function readDollars(
  value: string | number,
  field: string,
  options: { readonly zeroAllowed: boolean },
): DollarsReading {
  const amount = parseDecimal(value);
  if (amount === null) return { ok: false, message: `${field} must be an amount of dollars, such as 49.99` };
  if (round(amount, 2) !== amount)
    return { ok: false, message: `${field} must be whole cents: at most 2 decimal places` };
  const cents = centsOf(amount);
  if (cents < 0 || (cents === 0 && !options.zeroAllowed)) {
    return { ok: false, message: `${field} must be ${options.zeroAllowed ? "0 or more" : "more than 0"}` };
  }
  if (cents > MAX_DOLLARS * 100) return { ok: false, message: `${field} must be at most ${MAX_DOLLARS}` };
  return { ok: true, cents };
}
