import { compare, type Decimal, decimal, parseDecimal } from "./decimal.js";
import type { ErrorEntry } from "./errors.js";

/** Rules for a strategy's name, descriptions and capital (API.md UpdateStrategy, Limits). */
export const STRATEGY_LIMITS = {
  name: { min: 3, max: 40 },
  shortDescription: 300,
  longDescription: 20_000,
  startingCapital: { min: decimal("1000"), max: decimal("10000000") },
} as const;

/** Letters, digits, spaces, apostrophe, # and /. */
const NAME = /^[\p{L}\p{N} '#/]+$/u;

type Check<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ErrorEntry };

export function checkStrategyName(value: string, field = "Name"): Check<string> {
  const name = value.trim();
  const { min, max } = STRATEGY_LIMITS.name;
  if (name.length < min || name.length > max) {
    return {
      ok: false,
      error: { name: "InvalidValue", field, message: `${field} must be ${min} to ${max} characters` },
    };
  }
  if (!NAME.test(name)) {
    return {
      ok: false,
      error: {
        name: "InvalidValue",
        field,
        message: `${field} may hold letters, digits, spaces, apostrophes, # and /`,
      },
    };
  }
  return { ok: true, value: name };
}

export function checkStartingCapital(value: number | string): Check<Decimal> {
  const amount = parseDecimal(value);
  const { min, max } = STRATEGY_LIMITS.startingCapital;
  if (amount === null || compare(amount, min) < 0 || compare(amount, max) > 0) {
    return {
      ok: false,
      error: { name: "InvalidValue", field: "StartingCapital", message: "StartingCapital must be 1000 to 10000000" },
    };
  }
  return { ok: true, value: amount };
}
