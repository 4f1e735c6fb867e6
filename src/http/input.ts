import { FormatRegistry, type TObject, type TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { parseDateTime } from "../core/datetime.js";
import type { ErrorEntry } from "../core/errors.js";

/**
 * Reading request input the way existing clients send it (WIRE.md): names in
 * any case, numbers and booleans as strings, null for "not given", arrays as
 * repeated or comma-separated query values. Input is first normalized against
 * the operation's schema, then validated by it.
 */

FormatRegistry.Set("date-time", (value) => parseDateTime(value) !== null);

const INTEGER = /^[-+]?\d+$/;
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

export type InputSource = "query" | "body";

export interface CompiledInput<T> {
  read(raw: unknown): { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: ErrorEntry[] };
}

export function compileInput<T>(given: TObject, source: InputSource): CompiledInput<T> {
  const schema = withTextRule(given) as TObject;
  const check: TypeCheck<TObject> = TypeCompiler.Compile(schema);
  return {
    read(raw) {
      if (raw !== undefined && raw !== null && (typeof raw !== "object" || Array.isArray(raw))) {
        return {
          ok: false,
          errors: [{ name: "InvalidValue", field: "", message: "The request body must be a JSON object" }],
        };
      }
      const value = normalize(schema, raw ?? {}, source);
      if (check.Check(value)) return { ok: true, value: value as T };
      return { ok: false, errors: describe(check.Errors(value)) };
    },
  };
}

/**
 * Marks a string schema whose values may span lines (long descriptions): they
 * may hold tabs and line breaks. An OpenAPI extension, so the documents say it.
 */
export const MULTILINE = "x-multiline";

/**
 * Control characters no string input takes: C0 (U+0000 to U+001F), DEL and C1
 * (U+007F to U+009F). Names, symbols and tokens have no use for them, and
 * PostgreSQL refuses NUL in text outright, so they are refused here, on every
 * backend alike, naming the field. MULTILINE strings keep tab, LF and CR.
 */
const SINGLE_LINE = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$";
const MULTI_LINE = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$";

/**
 * The schema with the control-character rule as the pattern of each free-text
 * string: not formats, not codes, and not strings with a pattern of their own
 * (the pattern says which characters they take).
 */
function withTextRule(schema: TSchema): TSchema {
  if (isObjectSchema(schema)) {
    const properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, property]) => [name, withTextRule(property as TSchema)]),
    );
    return { ...schema, properties };
  }
  if (schema.type === "array") return { ...schema, items: withTextRule(schema.items as TSchema) };
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: (schema.anyOf as TSchema[]).map(withTextRule) };
  if (
    schema.type === "string" &&
    schema.format === undefined &&
    schema.const === undefined &&
    schema.pattern === undefined
  ) {
    return { ...schema, pattern: schema[MULTILINE] === true ? MULTI_LINE : SINGLE_LINE };
  }
  return schema;
}

function normalize(schema: TSchema, value: unknown, source: InputSource): unknown {
  if (value === null || value === undefined) return undefined;
  if (isObjectSchema(schema)) {
    if (typeof value !== "object" || Array.isArray(value)) return value;
    const byLowerName = lowerNamesOf(schema);
    const out: Record<string, unknown> = {};
    for (const [rawName, rawValue] of Object.entries(value as Record<string, unknown>)) {
      const name = byLowerName.get(rawName.toLowerCase());
      // Names the operation does not know are ignored, as newer clients send more.
      if (name === undefined) continue;
      const property = schema.properties[name] as TSchema;
      const normalized = normalize(property, rawValue, source);
      if (normalized === undefined) continue;
      const earlier = out[name];
      // `Ids=1&ids=2` is one list given under two spellings.
      out[name] = Array.isArray(earlier) && Array.isArray(normalized) ? [...earlier, ...normalized] : normalized;
    }
    return out;
  }
  if (schema.type === "array") {
    const values = Array.isArray(value) ? value : [value];
    const items = source === "query" ? values.flatMap((v) => (typeof v === "string" ? v.split(",") : [v])) : values;
    return items.map((item) => normalize(schema.items as TSchema, item, source));
  }
  if (Array.isArray(value)) return value;
  return scalar(schema, value);
}

function scalar(schema: TSchema, value: unknown): unknown {
  const text = typeof value === "string" ? value.trim() : undefined;
  switch (schema.type) {
    case "integer":
      return text !== undefined && INTEGER.test(text) ? Number(text) : value;
    case "number":
      return text !== undefined && NUMBER.test(text) ? Number(text) : value;
    case "boolean":
      if (text === undefined) return value;
      if (text.toLowerCase() === "true") return true;
      if (text.toLowerCase() === "false") return false;
      return value;
    case "string":
      if (schema.format === "date-time" && typeof value === "string") {
        // Handlers get one canonical UTC form, whatever offset the client used.
        return parseDateTime(value)?.toISOString() ?? value;
      }
      return typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  }
  // Enumerations of codes ("1", "2"...) also arrive as integers.
  const options = (schema.anyOf as TSchema[] | undefined) ?? [];
  if (typeof value === "number" && options.some((o) => typeof o.const === "string")) return String(value);
  if (typeof value === "string" && options.some((o) => typeof o.const === "number") && NUMBER.test(value)) {
    return Number(value);
  }
  return value;
}

/** Each object schema's property names by their lower case, made once per schema. */
const lowerNames = new WeakMap<TObject, ReadonlyMap<string, string>>();

function lowerNamesOf(schema: TObject): ReadonlyMap<string, string> {
  let names = lowerNames.get(schema);
  if (!names) {
    names = new Map(Object.keys(schema.properties).map((name) => [name.toLowerCase(), name]));
    lowerNames.set(schema, names);
  }
  return names;
}

function isObjectSchema(schema: TSchema): schema is TObject {
  return schema.type === "object" && typeof schema.properties === "object";
}

/** One entry per faulty field, in the API's terms. */
function describe(errors: Iterable<ValueError>): ErrorEntry[] {
  const byField = new Map<string, ErrorEntry>();
  for (const error of errors) {
    const field = fieldName(error);
    if (byField.has(field)) continue;
    byField.set(field, entryFor(error, field));
  }
  return [...byField.values()];
}

function fieldName(error: ValueError): string {
  const segments = error.path.split("/").filter((s) => s !== "");
  return segments.reduce((name, s) => (/^\d+$/.test(s) ? `${name}[${s}]` : name ? `${name}.${s}` : s), "");
}

function entryFor(error: ValueError, field: string): ErrorEntry {
  const schema = error.schema as TSchema;
  const label = field || "The request";
  const custom = schema.errorMessage as string | undefined;
  if (error.type === ValueErrorType.ObjectRequiredProperty) {
    return { name: "MissingValue", field, message: `${label} is required` };
  }
  if (custom) return { name: "InvalidValue", field, message: custom };
  const message = ((): string => {
    switch (error.type) {
      case ValueErrorType.StringMaxLength:
        return `${label} must be at most ${schema.maxLength} characters`;
      case ValueErrorType.StringMinLength:
        return `${label} must be at least ${schema.minLength} characters`;
      case ValueErrorType.StringPattern:
        if (schema.pattern === SINGLE_LINE) return `${label} must not contain control characters`;
        if (schema.pattern === MULTI_LINE)
          return `${label} must not contain control characters but tabs and line breaks`;
        return `${label} is not in the expected format`;
      case ValueErrorType.StringFormat:
        return `${label} is not in the expected format`;
      case ValueErrorType.IntegerMaximum:
      case ValueErrorType.NumberMaximum:
        return `${label} must be at most ${schema.maximum}`;
      case ValueErrorType.IntegerMinimum:
      case ValueErrorType.NumberMinimum:
        return `${label} must be at least ${schema.minimum}`;
      case ValueErrorType.NumberExclusiveMinimum:
      case ValueErrorType.IntegerExclusiveMinimum:
        return `${label} must be greater than ${schema.exclusiveMinimum}`;
      case ValueErrorType.ArrayMaxItems:
        return `${label} takes at most ${schema.maxItems} values`;
      case ValueErrorType.ArrayMinItems:
        return `${label} takes at least ${schema.minItems} values`;
      case ValueErrorType.Integer:
        return `${label} must be an integer`;
      case ValueErrorType.Number:
        return `${label} must be a number`;
      case ValueErrorType.Boolean:
        return `${label} must be true or false`;
      case ValueErrorType.String:
        return `${label} must be a string`;
      case ValueErrorType.Array:
        return `${label} must be a list`;
      case ValueErrorType.Object:
        return `${label} must be an object`;
      case ValueErrorType.Union:
        return `${label} must be ${unionChoices(schema)}`;
      default:
        return `${label}: ${error.message}`;
    }
  })();
  return { name: "InvalidValue", field, message };
}

function unionChoices(schema: TSchema): string {
  const options = (schema.anyOf as TSchema[] | undefined) ?? [];
  // A union of types (an amount: a number or numeric text) is named by its types.
  if (options.some((o) => o.const === undefined)) return options.map((o) => `a ${o.type}`).join(" or ");
  return `one of ${options.map((o) => JSON.stringify(o.const)).join(", ")}`;
}
