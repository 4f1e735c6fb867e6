import { type TSchema, Type } from "@sinclair/typebox";

/**
 * The values of legacy answers, for the OpenAPI document (../openapi.ts):
 * answers write numbers as text (API.md "Records (legacy v3)"). Requests are
 * described by the commands' input schemas (../fields.ts).
 */

/** One of some words. */
export const OneOf = (words: readonly string[], description: string) =>
  Type.Union(
    words.map((word) => Type.Literal(word)),
    { description },
  );

/** Text written by the service; numbers too are written as text. */
export const Text = (description?: string) => Type.String(description === undefined ? {} : { description });

/** A 0/1 flag as the service writes it. */
export const Flag = (description?: string) =>
  Type.Union([Type.Literal("0"), Type.Literal("1")], description === undefined ? {} : { description });

/** A New York wall time as the service writes it. */
export const NewYorkTime = (description: string) =>
  Type.String({ description: `${description}: New York time, YYYY-MM-DD HH:MM:SS; empty when none` });

/** Unix seconds as the service writes them. */
export const UnixTime = (description: string) =>
  Type.String({ description: `${description}: unix seconds; empty when none` });

/** An answer's list, under `response`. */
export const ResponseList = (entry: TSchema) => Type.Object({ response: Type.Array(entry) });
