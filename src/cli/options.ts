import { readDollars } from "../core/prices.js";
import { UsageError } from "./usage-error.js";

/** Reading the options of operator commands. */

export function required(options: Readonly<Record<string, string | undefined>>, name: string): string {
  const value = options[name];
  if (value === undefined || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

export function optionalId(options: Readonly<Record<string, string | undefined>>, name: string): number | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer`);
  return Number(value);
}

export function requiredId(options: Readonly<Record<string, string | undefined>>, name: string): number {
  const id = optionalId(options, name);
  if (id === undefined) throw new UsageError(`--${name} is required`);
  return id;
}

/** Dollars exact to the cent, as --name gives them. */
export function dollarsOption(
  options: Readonly<Record<string, string | undefined>>,
  name: string,
  rule: { readonly zeroAllowed: boolean },
): number {
  const reading = readDollars(required(options, name), `--${name}`, rule);
  if (!reading.ok) throw new UsageError(reading.message);
  return reading.cents;
}
