/**
 * Exact decimal numbers for prices, quantities and money: an integer count of
 * 10^-8 units held in a bigint. Eight places hold every tick size traded
 * (the yen future's 0.0000005 included); sums are exact, and products and
 * quotients round half-to-even once, where the caller says so.
 */
declare const decimalBrand: unique symbol;
export type Decimal = bigint & { readonly [decimalBrand]: true };

export const PLACES = 8;
const SCALE = 10n ** BigInt(PLACES);

const as = (units: bigint): Decimal => units as Decimal;

export const ZERO = as(0n);
export const ONE = as(SCALE);

const DECIMAL_TEXT = /^([-+]?)(?=\.?\d)(\d*)(?:\.(\d*))?(?:e([-+]?\d+))?$/i;

/** A number written in decimal or exponent form, as digits × 10^exponent (digits without leading zeros; "" is zero). */
export interface DecimalParts {
  readonly negative: boolean;
  readonly digits: string;
  readonly exponent: number;
}

/** The parts of a decimal's text or of a JSON number (its shortest decimal form), or null when it is neither. */
export function decimalParts(value: string | number): DecimalParts | null {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value.trim();
  const match = DECIMAL_TEXT.exec(text);
  if (!match) return null;
  const [, sign, whole = "", fraction = "", exponentText] = match;
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  if (!Number.isSafeInteger(exponent)) return null;
  return {
    negative: sign === "-",
    digits: `${whole}${fraction}`.replace(/^0+/, ""),
    exponent: exponent - fraction.length,
  };
}

/**
 * Where the value lies: below 10 to this power and (unless zero) at or above
 * one tenth of it: 1 for 1 to 9.99..., -7 for 0.00000001 to 0.0000000999...
 */
export const magnitudeOf = (parts: DecimalParts): number => parts.digits.length + parts.exponent;

/**
 * The decimal the parts name: exactly (null when they go past eight places)
 * or rounded half-to-even to eight places. Only for parts whose magnitude the
 * caller has bounded: the work grows with it.
 */
export function fromParts(parts: DecimalParts, rounding: "exact" | "halfEven"): Decimal | null {
  if (parts.digits === "") return ZERO;
  const shift = parts.exponent + PLACES;
  const digits = BigInt(parts.digits);
  let units: bigint;
  if (shift >= 0) units = digits * 10n ** BigInt(shift);
  else {
    const restScale = 10n ** BigInt(-shift);
    if (rounding === "exact" && digits % restScale !== 0n) return null;
    units = divideRounded(digits, restScale);
  }
  return as(parts.negative ? -units : units);
}

/** A decimal from text or a JSON number; null when it is not a finite number with at most 8 places. */
export function parseDecimal(value: string | number): Decimal | null {
  const parts = decimalParts(value);
  if (!parts) return null;
  // Beyond 10^40 is no amount of anything, and below 10^-8 is not exact: both refused before any arithmetic.
  const magnitude = magnitudeOf(parts);
  if (parts.digits !== "" && (magnitude > 40 || magnitude <= -PLACES)) return null;
  return fromParts(parts, "exact");
}

export function decimal(value: string | number): Decimal {
  const parsed = parseDecimal(value);
  if (parsed === null) throw new RangeError(`not a decimal with at most ${PLACES} places: ${value}`);
  return parsed;
}

const NO_FRACTION = "0".repeat(PLACES);

/**
 * A decimal from text storage holds: formatDecimal's output, checked when it
 * was written, so it is read without being checked again (a plain decimal,
 * no exponent, at most eight places).
 */
export function storedDecimal(text: string): Decimal {
  const point = text.indexOf(".");
  const units = point < 0 ? text + NO_FRACTION : text.slice(0, point) + text.slice(point + 1).padEnd(PLACES, "0");
  return as(BigInt(units));
}

export const fromInteger = (n: number | bigint): Decimal => as(BigInt(n) * SCALE);

/** A whole number of cents as a decimal of dollars. */
export const centsToDecimal = (cents: number | bigint): Decimal => as(BigInt(cents) * (SCALE / 100n));

/** Canonical text: no exponent, no trailing zeros (`150.25`, `-0.5`, `3`). */
export function formatDecimal(value: Decimal): string {
  // Within 2^53 units (90 million) the arithmetic is done exactly on doubles, several times faster than on
  // bigints: every price and most amounts are written this way, many per fill.
  if (value <= SAFE_UNITS && value >= -SAFE_UNITS) return formatUnits(Number(value));
  const negative = value < 0n;
  const units = negative ? -value : value;
  const whole = units / SCALE;
  const fraction = (units % SCALE).toString().padStart(PLACES, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

const SAFE_UNITS = BigInt(Number.MAX_SAFE_INTEGER);
const UNITS_PER_ONE = 10 ** PLACES;

/** formatDecimal of a whole number of units within ±2^53 (each step exact on doubles). */
function formatUnits(units: number): string {
  const magnitude = Math.abs(units);
  let fraction = magnitude % UNITS_PER_ONE;
  const whole = (magnitude - fraction) / UNITS_PER_ONE;
  const sign = units < 0 ? "-" : "";
  if (fraction === 0) return `${sign}${whole}`;
  let places = PLACES;
  while (fraction % 10 === 0) {
    fraction /= 10;
    places -= 1;
  }
  return `${sign}${whole}.${String(fraction).padStart(places, "0")}`;
}

/** For JSON answers: the nearest double, which prints as the same decimal for values of this size. */
export const toNumber = (value: Decimal): number => Number(formatDecimal(value));

export const add = (a: Decimal, b: Decimal): Decimal => as(a + b);
export const sub = (a: Decimal, b: Decimal): Decimal => as(a - b);
export const neg = (a: Decimal): Decimal => as(-a);
export const abs = (a: Decimal): Decimal => (a < 0n ? neg(a) : a);
export const compare = (a: Decimal, b: Decimal): -1 | 0 | 1 => (a < b ? -1 : a > b ? 1 : 0);
export const min = (a: Decimal, b: Decimal): Decimal => (a <= b ? a : b);
export const max = (a: Decimal, b: Decimal): Decimal => (a >= b ? a : b);
export const sign = (a: Decimal): -1 | 0 | 1 => compare(a, ZERO);
export const isZero = (a: Decimal): boolean => a === 0n;

/**
 * a × b, rounded half-to-even to 8 places. A factor of one (a stock's
 * multiplier, a dollar amount's rate) gives the other back, exactly as the
 * rounding would, without its half-dozen bigint operations.
 */
export const mul = (a: Decimal, b: Decimal): Decimal =>
  b === ONE ? a : a === ONE ? b : as(divideRounded(a * b, SCALE));

/** a × n for a whole number n: exact. */
export const mulInteger = (a: Decimal, n: number | bigint): Decimal => as(a * BigInt(n));

/** a ÷ b, rounded half-to-even to 8 places. */
export function div(a: Decimal, b: Decimal): Decimal {
  if (b === 0n) throw new RangeError("division by zero");
  return as(divideRounded(a * SCALE, b));
}

/** The units of the last place kept, by places kept: made once (raising a bigint to a power costs more than the rounding). */
const ROUNDING_STEPS: readonly bigint[] = Array.from(
  { length: PLACES + 1 },
  (_, places) => 10n ** BigInt(PLACES - places),
);

/** Rounded half-to-even to `places` decimal places (0 to 8): money to the cent is `round(x, 2)`. */
export function round(a: Decimal, places: number): Decimal {
  const step = ROUNDING_STEPS[places];
  if (step === undefined) throw new RangeError(`places must be 0 to ${PLACES}`);
  return as(divideRounded(a, step) * step);
}

/** Whether a is a whole number of steps (a price on the tick grid). */
export function isMultipleOf(a: Decimal, step: Decimal): boolean {
  if (step <= 0n) throw new RangeError("step must be positive");
  return a % step === 0n;
}

/** n ÷ d rounded half-to-even, for bigints of any sign. */
function divideRounded(n: bigint, d: bigint): bigint {
  const negative = n < 0n !== d < 0n;
  const num = n < 0n ? -n : n;
  const den = d < 0n ? -d : d;
  let quotient = num / den;
  const twice = (num % den) * 2n;
  if (twice > den || (twice === den && quotient % 2n === 1n)) quotient += 1n;
  return negative ? -quotient : quotient;
}
