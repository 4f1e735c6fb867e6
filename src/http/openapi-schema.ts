import { isDeepStrictEqual } from "node:util";
import type { TSchema } from "@sinclair/typebox";

export type OpenApiSchema = Record<string, unknown>;

/** Keywords only our input reader uses (its messages, a legacy field's refusal title), and the title that names a component. */
const READER_KEYWORDS: ReadonlySet<string> = new Set(["title", "errorMessage", "failure"]);

/**
 * The schemas of one OpenAPI 3.0 document, made from TypeBox (JSON Schema):
 * a schema with a title is written once under components.schemas by that
 * name and referenced wherever it is used, so clients generated from the
 * document get one named type per record.
 */
export class SchemaComponents {
  private readonly named = new Map<string, OpenApiSchema>();

  /** The schema in the OpenAPI 3.0 dialect; a titled one as a reference to its component. */
  of(schema: TSchema): OpenApiSchema {
    const converted = this.converted(schema);
    return typeof schema.title === "string" ? this.name(schema.title, converted) : converted;
  }

  /** Names a schema already in the OpenAPI dialect; answers the reference to it. */
  name(name: string, schema: OpenApiSchema): OpenApiSchema {
    const existing = this.named.get(name);
    // Two shapes under one name would leave one of them undocumented.
    if (existing !== undefined && !isDeepStrictEqual(existing, schema)) {
      throw new Error(`Two different schemas are named ${name}`);
    }
    this.named.set(name, schema);
    return { $ref: `#/components/schemas/${name}` };
  }

  /** components.schemas, by name. */
  all(): Record<string, OpenApiSchema> {
    // By code point, not locale: the documents, and the client generated from them, are the same on every machine.
    return Object.fromEntries([...this.named].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** JSON Schema to the OpenAPI 3.0 dialect: nullable instead of null unions, enums instead of consts. */
  private converted(schema: TSchema): OpenApiSchema {
    const description = typeof schema.description === "string" ? { description: schema.description } : {};
    // OpenAPI 3.0 has no null type: a value that can only be null.
    if (schema.type === "null") return { type: "object", nullable: true, enum: [null], ...description };
    const anyOf = schema.anyOf as TSchema[] | undefined;
    if (anyOf) {
      const nonNull = anyOf.filter((s) => s.type !== "null");
      if (nonNull.length === 1 && nonNull.length < anyOf.length) {
        return { ...this.of(nonNull[0] as TSchema), nullable: true, ...description };
      }
      if (nonNull.every((s) => s.const !== undefined)) {
        const values = nonNull.map((s) => s.const);
        const type = values.every((v) => typeof v === "number")
          ? values.every(Number.isInteger)
            ? "integer"
            : "number"
          : "string";
        return { type, enum: values, ...description };
      }
      return { anyOf: nonNull.map((s) => this.of(s)), ...description };
    }
    const out: OpenApiSchema = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === "properties") {
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, TSchema>).map(([name, s]) => [name, this.of(s)]),
        );
      } else if (key === "items" || (key === "additionalProperties" && typeof value === "object")) {
        out[key] = this.of(value as TSchema);
      } else if (key === "const") {
        out.enum = [value];
      } else if (key === "required") {
        if ((value as string[]).length > 0) out.required = value;
      } else if ((key === "exclusiveMinimum" || key === "exclusiveMaximum") && typeof value === "number") {
        // OpenAPI 3.0 spells exclusive bounds as a bound plus a boolean flag.
        out[key === "exclusiveMinimum" ? "minimum" : "maximum"] = value;
        out[key] = true;
      } else if (!READER_KEYWORDS.has(key)) {
        out[key] = value;
      }
    }
    return out;
  }
}
