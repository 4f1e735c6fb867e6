import { type TSchema, Type } from "@sinclair/typebox";
import { MULTILINE } from "../input.js";

/** Schema building blocks shared by operations and records. */

export const DateTime = (options: { description?: string } = {}) => Type.String({ format: "date-time", ...options });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * The largest id taken: ids are read as JavaScript numbers, exact only up to
 * 2^53 − 1 (storage's 64-bit integers go further, but no id gets there).
 */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A database id: a positive integer. */
export const Id = (options: { description?: string } = {}) => Type.Integer({ minimum: 1, maximum: MAX_ID, ...options });

/**
 * A string input that legitimately spans lines (a description): it may hold
 * tabs and line breaks, which every other string input refuses with the rest
 * of the control characters (src/http/input.ts).
 */
export const MultilineText = (options: { maxLength?: number; description?: string } = {}) =>
  Type.String({ ...options, [MULTILINE]: true });

/**
 * A price or quantity: a JSON number, rounded half-to-even to eight places (clients' doubles carry
 * binary noise), or numeric text, read exactly (src/core/amounts.ts). Read by readDecimal.
 */
export const Amount = (options: { description?: string } = {}) =>
  Type.Union([Type.Number(), Type.String({ maxLength: 100 })], options);
