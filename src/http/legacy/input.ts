import type { TObject } from "@sinclair/typebox";
import type { ErrorEntry } from "../../core/errors.js";
import { compileInput } from "../input.js";
import { LegacyFailure } from "./command.js";
import type { LegacyFailureName } from "./titles.js";

/**
 * Reading a legacy command's fields against its schema, with the v4 reader
 * (names in any case, numbers as strings, null for "not given"). What cannot
 * be read answers with the title its top-level field names (./fields.ts), and
 * a message naming each faulty field.
 */
export function legacyInput<T>(schema: TObject): (fields: Readonly<Record<string, unknown>>) => T {
  const reader = compileInput<T>(schema, "body");
  return (fields) => {
    const read = reader.read(fields);
    if (read.ok) return read.value;
    throw new LegacyFailure(failureOf(schema, read.errors[0]?.field ?? ""), read.errors.map(messageOf).join("; "));
  };
}

function failureOf(schema: TObject, field: string): LegacyFailureName {
  const top = field.split(/[.[]/, 1)[0] ?? "";
  const property = schema.properties[top] as { failure?: LegacyFailureName } | undefined;
  return property?.failure ?? "InvalidRequest";
}

/** The building blocks say what a field must be; the field is named here. */
function messageOf({ field = "", message = "" }: ErrorEntry): string {
  return field === "" || message.startsWith(field) ? message : `${field} ${message}`;
}
