import { type TSchema, Type } from "@sinclair/typebox";

/**
 * The values of legacy requests and answers, for the OpenAPI document
 * (../openapi.ts): requests take numbers as JSON numbers or as text, answers
 * write them as text (API.md "Records (legacy v3)").
 */

/** A positive whole number, as a JSON number or as digits. */
export const WholeIn = (description: string) =>
  Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: "^\\s*\\d{1,15}\\s*$" })], { description });

/** A whole number the command checks itself (a count of seconds, a fee), as a JSON number or as text. */
export const CountIn = (description: string) =>
  Type.Union([Type.Integer(), Type.String({ maxLength: 20 })], { description });

/** A price or quantity: a JSON number (rounded half-even to eight places) or numeric text, read exactly. */
export const AmountIn = (description: string) =>
  Type.Union([Type.Number(), Type.String({ maxLength: 100 })], { description });

/** A 0/1 flag, as a number or as text. */
export const FlagIn = (description: string) =>
  Type.Union([Type.Union([Type.Literal(0), Type.Literal(1)]), Type.Union([Type.Literal("0"), Type.Literal("1")])], {
    description,
  });

/** The system a command names. */
export const SystemIdIn = WholeIn("The system (strategy) id");

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
