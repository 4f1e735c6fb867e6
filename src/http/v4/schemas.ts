import { type TSchema, Type } from "@sinclair/typebox";

/** Schema building blocks shared by operations and records. */

export const DateTime = (options: { description?: string } = {}) => Type.String({ format: "date-time", ...options });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A database id: a positive integer. */
export const Id = (options: { description?: string } = {}) => Type.Integer({ minimum: 1, ...options });

/**
 * A price or quantity: a JSON number, rounded half-to-even to eight places (clients' doubles carry
 * binary noise), or numeric text, read exactly (src/core/amounts.ts). Read by readDecimal.
 */
export const Amount = (options: { description?: string } = {}) =>
  Type.Union([Type.Number(), Type.String({ maxLength: 100 })], options);
