import {
  abs,
  compare,
  type Decimal,
  decimalParts,
  formatDecimal,
  fromInteger,
  fromParts,
  isZero,
  magnitudeOf,
  PLACES,
  ZERO,
} from "./decimal.js";

/**
 * Prices and quantities as requests carry them. Text is read exactly: more
 * than eight decimal places is refused. A JSON number arrives as a double,
 * and doubles computed by clients carry binary noise (`(100 + 100.02) / 2`
 * is `100.00999999999999`), so its shortest decimal form is rounded
 * half-to-even to eight places. Either way an amount is at most
 * MAX_AMOUNT, and one that is not zero is at least the smallest unit.
 */

/** Far above any price or order size traded: larger is a client's mistake, never an order. */
export const MAX_AMOUNT = fromInteger(1_000_000_000);
const SMALLEST_UNIT = `0.${"0".repeat(PLACES - 1)}1`;
/** The magnitude (magnitudeOf) of MAX_AMOUNT: past it an amount is too large whatever its digits. */
const MAX_MAGNITUDE = formatDecimal(MAX_AMOUNT).length;

export type AmountProblem = "notANumber" | "tooLarge" | "belowSmallestUnit" | "tooManyPlaces";

export type AmountReading =
  | { readonly ok: true; readonly value: Decimal }
  | { readonly ok: false; readonly problem: AmountProblem };

const refused = (problem: AmountProblem): AmountReading => ({ ok: false, problem });

/** A price or quantity from a request: a JSON number (rounded to eight places) or text (exact). */
export function readAmount(value: string | number): AmountReading {
  const parts = decimalParts(value);
  if (!parts) return refused("notANumber");
  if (parts.digits === "") return { ok: true, value: ZERO };
  // Decided on the number of digits before any arithmetic, so 1e308 or 1e-300 costs nothing.
  const magnitude = magnitudeOf(parts);
  if (magnitude > MAX_MAGNITUDE) return refused("tooLarge");
  const isText = typeof value === "string";
  // Magnitude -8 is 0.000000001 up to just below the smallest unit: text cannot hold it, a number may round up to it.
  if (magnitude < -PLACES || (isText && magnitude === -PLACES)) return refused("belowSmallestUnit");
  const amount = fromParts(parts, isText ? "exact" : "halfEven");
  if (amount === null) return refused("tooManyPlaces");
  if (isZero(amount)) return refused("belowSmallestUnit");
  if (compare(abs(amount), MAX_AMOUNT) > 0) return refused("tooLarge");
  return { ok: true, value: amount };
}

const MESSAGES: Readonly<Record<AmountProblem, (field: string) => string>> = {
  notANumber: (field) => `${field} must be a number`,
  tooLarge: (field) => `${field} is too large: at most ${formatDecimal(MAX_AMOUNT)}`,
  belowSmallestUnit: (field) => `${field} is smaller than the smallest unit, ${SMALLEST_UNIT}`,
  tooManyPlaces: (field) => `${field} has more than ${PLACES} decimal places`,
};

/** What a refusal of the amount in `field` says. */
export const amountProblemMessage = (field: string, problem: AmountProblem): string => MESSAGES[problem](field);
