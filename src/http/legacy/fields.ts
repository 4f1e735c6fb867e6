import { Type } from "@sinclair/typebox";
import { amountProblemMessage, readAmount } from "../../core/amounts.js";
import type { Decimal } from "../../core/decimal.js";
import { LegacyFailure } from "./command.js";
import type { LegacyFailureName } from "./titles.js";

/**
 * Building blocks of the legacy commands' input schemas. Legacy clients send
 * most values as text, numbers as JSON numbers or strings alike and "" for
 * "not given", so apart from ids every value is text of a given shape, read by
 * its handler. Each block says what its field must be; the reader names the
 * field (./input.ts). `failure` names the title a field answers with when it
 * cannot be read (Invalid request unless given).
 */

/** The largest id a client may name: past it, JSON numbers no longer hold every integer. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

export interface FieldOptions {
  readonly failure?: LegacyFailureName;
}

// C0 and C1 control characters: free text may still hold tabs and line breaks.
const LINE = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$";
const FREE_TEXT = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$";

const failureOf = (options: FieldOptions) => (options.failure ? { failure: options.failure } : {});

/** A positive whole number naming a record (a system, a person). */
export const id = (options: FieldOptions = {}) =>
  Type.Integer({
    minimum: 1,
    maximum: MAX_ID,
    errorMessage: `must be a whole number from 1 to ${MAX_ID}`,
    ...failureOf(options),
  });

/** One line of text; `free` text (descriptions) may also hold tabs and line breaks. */
export const text = (maxLength: number, options: FieldOptions & { readonly free?: boolean } = {}) =>
  Type.String({
    maxLength,
    pattern: options.free ? FREE_TEXT : LINE,
    errorMessage: `must be text of at most ${maxLength} characters, without control characters${options.free ? " other than tabs and line breaks" : ""}`,
    ...failureOf(options),
  });

/** 0 or 1 (or "" for not given). */
export const flag = (options: FieldOptions = {}) =>
  Type.String({ pattern: "^\\s*[01]?\\s*$", errorMessage: "must be 0 or 1", ...failureOf(options) });

/** A whole number of up to 15 digits, maybe negative (or "" for not given); the rules say its range. */
export const wholeNumber = (options: FieldOptions = {}) =>
  Type.String({ pattern: "^\\s*(-?\\d{1,15})?\\s*$", errorMessage: "must be a whole number", ...failureOf(options) });

/** The characters of a decimal number (or "" for not given); its handler reads the number. */
export const decimalText = (options: FieldOptions = {}) =>
  Type.String({
    maxLength: 40,
    pattern: "^[-+.0-9eE\\s]*$",
    errorMessage: "must be a number",
    ...failureOf(options),
  });

/**
 * A price or quantity: a JSON number (kept a number, so its binary noise is
 * rounded away where it is read: core/amounts.ts) or the characters of a
 * decimal number (read exactly).
 */
export const amount = (options: FieldOptions = {}) =>
  Type.Union([Type.Number(), Type.String({ maxLength: 40, pattern: "^[-+.0-9eE\\s]*$" })], {
    errorMessage: "must be a number",
    ...failureOf(options),
  });

/** The value of an amount field (amounts.ts); one that cannot be read fails with `failure`, naming `field`. */
export function amountOf(value: number | string, field: string, failure: LegacyFailureName): Decimal {
  const reading = readAmount(typeof value === "string" ? value.trim() : value);
  if (!reading.ok) throw new LegacyFailure(failure, amountProblemMessage(field, reading.problem));
  return reading.value;
}

/** Digits only (or "" for not given): times written as numbers. */
export const digits = (maxLength: number, options: FieldOptions = {}) =>
  Type.String({
    pattern: `^\\s*\\d{0,${maxLength}}\\s*$`,
    errorMessage: `must be at most ${maxLength} digits`,
    ...failureOf(options),
  });

/** A field that may not be given (null stands for not given): it ends a nesting. */
export const never = (why: string) => Type.Null({ errorMessage: why });
