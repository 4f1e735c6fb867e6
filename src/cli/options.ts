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
