import type { TObject, TSchema } from "@sinclair/typebox";
import { DEFAULT_PORTS } from "../../config.js";
import { SchemaComponents } from "../openapi-schema.js";
import {
  EVERY_ANSWER,
  envelopeComponents,
  type FailureStatus,
  failureRef,
  headerRefs,
  Pagination,
  parameterRef,
  responseStatusOf,
} from "./openapi-envelope.js";
import { inputSource, type Operation, pathOf, type V4Server } from "./operation.js";
import { paginationInput } from "./pagination.js";

const SERVER_TITLES: Readonly<Record<V4Server, string>> = {
  WL: "white-label",
  GEN: "general",
  GEO: "geo-site",
};

/** The first segment of the operations' paths (a test holds every one of the table's described). */
const TAGS: Readonly<Record<string, string>> = {
  General: "The key, profiles, site directories, KYC, instrumentation, plan subscriptions and checkout",
  Strategies:
    "Strategies, their orders and positions, records and discovery; subscribers, revenue and white-label commerce",
  Autotrade:
    "AutoTrading: brokers, setups, the white-label approval flow, simulated subscriptions and AutoTrading plans",
  Admin: "Service administrators: compliance review and the leaderboard",
  Sandbox: "Driving the service clock and market by hand (only while the sandbox is on)",
  Webhooks: "A white-label site's webhook endpoints: where its events are posted, signed (docs/webhooks.md)",
};

/** The OpenAPI 3 document of one v4 server, generated from the operation table. */
export function openApiDocument(server: V4Server, operations: readonly Operation[]) {
  const schemas = new SchemaComponents();
  const envelope = envelopeComponents(schemas);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    const path = pathOf(operation, server);
    const methods = paths[path] ?? {};
    methods[operation.method.toLowerCase()] = describeOperation(server, operation, schemas);
    paths[path] = methods;
  }
  // Only what this server's operations use: a GEO document has no order entry, so no Idempotency-Key.
  const responses = referencedOnly(envelope.responses, "responses", [paths]);
  return {
    openapi: "3.0.3",
    info: {
      title: `strategy-hub v4 API: ${SERVER_TITLES[server]} server`,
      version: "4",
      description:
        "Every answer is the envelope {Results, Pagination (paginated operations only), ResponseStatus}; a refusal has Results null and says why in ResponseStatus.Errors, each with a service ErrorCode (docs/errors.md). " +
        "Every answer carries X-Request-Id and the rate limit's X-Limit-* headers; over the limit the answer is 429 with Retry-After.",
    },
    // Relative: the server this document is served by, wherever it listens.
    servers: [
      {
        url: "/",
        description: `The ${SERVER_TITLES[server]} server serving this document (npm start: http://127.0.0.1:${DEFAULT_PORTS[server]} unless HOST or ${server}_PORT say otherwise)`,
      },
    ],
    tags: [...new Set(operations.map(tagOf))].sort().map((name) => ({ name, description: TAGS[name] })),
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "The access key: Authorization: Bearer <key>" },
      },
      schemas: schemas.all(),
      headers: referencedOnly(envelope.headers, "headers", [paths, responses]),
      responses,
      parameters: referencedOnly(envelope.parameters, "parameters", [paths]),
    },
  };
}

function referencedOnly<T>(components: Readonly<Record<string, T>>, kind: string, from: readonly unknown[]) {
  const text = JSON.stringify(from);
  return Object.fromEntries(
    Object.entries(components).filter(([name]) => text.includes(`"#/components/${kind}/${name}"`)),
  );
}

const tagOf = (operation: Operation) => operation.path.split("/").filter((s) => s !== "" && s !== "v2")[0] ?? "General";

function describeOperation(server: V4Server, operation: Operation, schemas: SchemaComponents) {
  const base = operation.inputOn?.[server] ?? operation.input;
  const input = operation.paginated ? paginationInput(base) : base;
  // The example's fields this server reads: a server with a narrower input (inputOn) ignores the others.
  const example =
    operation.example &&
    Object.fromEntries(Object.entries(operation.example).filter(([name]) => name in input.properties));
  const hidden = Object.entries(operation.fieldServers ?? {})
    .filter(([, servers]) => !servers.includes(server))
    .map(([field]) => field);
  const bare = operation.bareBooleanOn?.includes(server) ?? false;
  const success = bare
    ? { type: "boolean" }
    : {
        type: "object",
        required: ["Results", ...(operation.paginated ? ["Pagination"] : []), "ResponseStatus"],
        properties: {
          Results: { type: "array", items: schemas.of(withoutFields(operation.result, hidden)) },
          ...(operation.paginated ? { Pagination: schemas.of(Pagination) } : {}),
          ResponseStatus: responseStatusOf(schemas),
        },
      };
  const headers = [parameterRef("RequestId"), ...(operation.idempotent ? [parameterRef("IdempotencyKey")] : [])];
  const fromQuery = inputSource(operation) === "query";
  const failures: FailureStatus[] = [
    400,
    401,
    403,
    404,
    // Changes can meet a state that refuses them (an order rejected, a name taken, an idempotency key reused).
    ...(operation.method === "GET" ? [] : [409 as const]),
    ...(fromQuery ? [] : [413 as const]),
    429,
    500,
    ...(operation.notAvailableOn?.includes(server) ? [501 as const] : []),
    // Every operation reads or writes storage, which may be full, locked or unreachable.
    503,
  ];
  return {
    operationId: operation.id,
    summary: operation.summary,
    tags: [tagOf(operation)],
    parameters: [...(fromQuery ? queryParameters(input, example, schemas) : []), ...headers],
    ...(fromQuery
      ? {}
      : {
          requestBody: {
            required: true,
            content: {
              "application/json": { schema: schemas.of(input), ...(example === undefined ? {} : { example }) },
            },
          },
        }),
    responses: {
      "200": {
        description: "OK",
        headers: {
          ...headerRefs(...EVERY_ANSWER, ...(operation.idempotent ? (["Idempotent-Replayed"] as const) : [])),
          ...(operation.cacheSeconds
            ? {
                "Cache-Control": {
                  description: "The answer changes rarely: the client may keep it this long",
                  schema: { type: "string", example: `private, max-age=${operation.cacheSeconds}` },
                },
              }
            : {}),
        },
        content: { "application/json": { schema: success } },
      },
      ...Object.fromEntries(failures.map((status) => [String(status), failureRef(status)])),
    },
  };
}

function queryParameters(input: TObject, example: Record<string, unknown> | undefined, schemas: SchemaComponents) {
  const required = new Set(input.required ?? []);
  return Object.entries(input.properties).map(([name, schema]) => ({
    name,
    in: "query",
    required: required.has(name),
    ...(schema.type === "array" ? { style: "form", explode: true } : {}),
    schema: schemas.of(schema),
    ...(example?.[name] === undefined ? {} : { example: example[name] }),
  }));
}

function withoutFields(schema: TSchema, fields: readonly string[]): TSchema {
  if (fields.length === 0 || schema.type !== "object") return schema;
  const properties = { ...(schema.properties as Record<string, TSchema>) };
  for (const field of fields) {
    // A nested record's field (`AutotradeSettings.BrokerAuthorizationStatus`): that record is documented without it.
    const [head = "", ...rest] = field.split(".");
    const nested = properties[head];
    if (rest.length === 0) delete properties[head];
    else if (nested) properties[head] = withoutFields(nested, [rest.join(".")]);
  }
  return {
    ...schema,
    properties,
    required: (schema.required as string[] | undefined)?.filter((r) => !fields.includes(r)),
  };
}
