import type { TObject, TSchema } from "@sinclair/typebox";
import { ERRORS } from "../../core/errors.js";
import { IDEMPOTENCY_HEADER } from "./idempotency.js";
import { inputSource, type Operation, pathOf, type V4Server } from "./operation.js";
import { paginationInput } from "./pagination.js";

const SERVER_TITLES: Readonly<Record<V4Server, string>> = {
  WL: "white-label",
  GEN: "general",
  GEO: "geo-site",
};

/** The OpenAPI 3 document of one v4 server, generated from the operation table. */
export function openApiDocument(server: V4Server, operations: readonly Operation[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    const path = pathOf(operation, server);
    const methods = paths[path] ?? {};
    methods[operation.method.toLowerCase()] = describeOperation(server, operation);
    paths[path] = methods;
  }
  return {
    openapi: "3.0.3",
    info: {
      title: `strategy-hub v4 API: ${SERVER_TITLES[server]} server`,
      version: "4",
      description:
        "Every response is the envelope {Results, Pagination (paginated operations only), ResponseStatus}. " +
        "Errors carry service codes: " +
        Object.values(ERRORS)
          .map((e) => `${e.code} ${e.message}`)
          .join("; "),
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: {
        ResponseStatus: {
          type: "object",
          required: ["ErrorCode", "Message", "Errors"],
          properties: {
            ErrorCode: { type: "string", description: 'The HTTP status as a string; "200" on success' },
            Message: { type: "string" },
            Errors: {
              type: "array",
              items: {
                type: "object",
                properties: {
                  ErrorCode: { type: "string", description: "Service error code" },
                  FieldName: { type: "string" },
                  Message: { type: "string" },
                  Meta: { type: "object", additionalProperties: true },
                },
              },
            },
            Meta: { type: "object", additionalProperties: true },
          },
        },
        Pagination: {
          type: "object",
          properties: {
            prev_cursor: { type: "string", nullable: true },
            next_cursor: { type: "string", nullable: true, description: "null or empty: no more results" },
          },
        },
      },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

function describeOperation(server: V4Server, operation: Operation) {
  const base = operation.inputOn?.[server] ?? operation.input;
  const input = operation.paginated ? paginationInput(base) : base;
  const hidden = Object.entries(operation.fieldServers ?? {})
    .filter(([, servers]) => !servers.includes(server))
    .map(([field]) => field);
  const bare = operation.bareBooleanOn?.includes(server) ?? false;
  const success = bare
    ? { type: "boolean" }
    : {
        type: "object",
        properties: {
          Results: { type: "array", items: toOpenApi(withoutFields(operation.result, hidden)) },
          ...(operation.paginated ? { Pagination: { $ref: "#/components/schemas/Pagination" } } : {}),
          ResponseStatus: { $ref: "#/components/schemas/ResponseStatus" },
        },
      };
  const failure = { description: "Error", content: { "application/json": { schema: failureSchema } } };
  return {
    operationId: operation.id,
    summary: operation.summary,
    tags: [operation.path.split("/").filter((s) => s !== "" && s !== "v2")[0] ?? "General"],
    ...(inputSource(operation) === "query"
      ? { parameters: [...queryParameters(input), ...idempotencyParameters(operation)] }
      : {
          ...(operation.idempotent ? { parameters: idempotencyParameters(operation) } : {}),
          requestBody: { required: true, content: { "application/json": { schema: toOpenApi(input) } } },
        }),
    responses: {
      "200": { description: "OK", content: { "application/json": { schema: success } } },
      "400": failure,
      "401": failure,
      "403": failure,
      "404": failure,
      "429": failure,
      "500": failure,
      ...(operation.notAvailableOn?.includes(server) ? { "501": failure } : {}),
    },
  };
}

const failureSchema = {
  type: "object",
  properties: {
    Results: { nullable: true },
    ResponseStatus: { $ref: "#/components/schemas/ResponseStatus" },
  },
};

function idempotencyParameters(operation: Operation) {
  if (!operation.idempotent) return [];
  return [
    {
      name: IDEMPOTENCY_HEADER,
      in: "header",
      required: false,
      description:
        "Sent again with the same body within 24 hours, the request answers as the first did (header Idempotent-Replayed: true) and makes nothing; with another body it is refused (409, 1203).",
      schema: { type: "string", minLength: 1, maxLength: 255 },
    },
  ];
}

function queryParameters(input: TObject) {
  const required = new Set(input.required ?? []);
  return Object.entries(input.properties).map(([name, schema]) => ({
    name,
    in: "query",
    required: required.has(name),
    ...(schema.type === "array" ? { style: "form", explode: true } : {}),
    schema: toOpenApi(schema),
  }));
}

function withoutFields(schema: TSchema, fields: readonly string[]): TSchema {
  if (fields.length === 0 || schema.type !== "object") return schema;
  const properties = { ...(schema.properties as Record<string, TSchema>) };
  for (const field of fields) delete properties[field];
  return {
    ...schema,
    properties,
    required: (schema.required as string[] | undefined)?.filter((r) => !fields.includes(r)),
  };
}

/** JSON Schema (TypeBox) to the OpenAPI 3.0 dialect: nullable instead of null unions. */
function toOpenApi(schema: TSchema): Record<string, unknown> {
  const anyOf = schema.anyOf as TSchema[] | undefined;
  if (anyOf) {
    const nonNull = anyOf.filter((s) => s.type !== "null");
    if (nonNull.length === 1 && nonNull.length < anyOf.length) {
      return { ...toOpenApi(nonNull[0] as TSchema), nullable: true };
    }
    if (nonNull.every((s) => s.const !== undefined)) {
      return { type: typeof nonNull[0]?.const === "number" ? "number" : "string", enum: nonNull.map((s) => s.const) };
    }
    return { anyOf: nonNull.map(toOpenApi), ...(schema.description ? { description: schema.description } : {}) };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, TSchema>).map(([name, s]) => [name, toOpenApi(s)]),
      );
    } else if (key === "items") {
      out.items = toOpenApi(value as TSchema);
    } else if (key === "const") {
      out.enum = [value];
    } else if (key === "required") {
      if ((value as string[]).length > 0) out.required = value;
    } else if ((key === "exclusiveMinimum" || key === "exclusiveMaximum") && typeof value === "number") {
      // OpenAPI 3.0 spells exclusive bounds as a bound plus a boolean flag.
      out[key === "exclusiveMinimum" ? "minimum" : "maximum"] = value;
      out[key] = true;
    } else if (key !== "title" && key !== "errorMessage") {
      out[key] = value;
    }
  }
  return out;
}
