import { type TSchema, Type } from "@sinclair/typebox";

/** Schema building blocks shared by operations and records. */

export const DateTime = (options: { description?: string } = {}) => Type.String({ format: "date-time", ...options });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A database id: a positive integer. */
export const Id = (options: { description?: string } = {}) => Type.Integer({ minimum: 1, ...options });
