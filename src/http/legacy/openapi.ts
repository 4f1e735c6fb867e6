import { Type } from "@sinclair/typebox";
import { DEFAULT_PORTS } from "../../config.js";
import { SchemaComponents } from "../openapi-schema.js";
import type { LegacyCommand, LegacyContext } from "./command.js";
import { LEGACY_TITLES } from "./titles.js";

/**
 * The OpenAPI 3 document of the legacy v3 server, generated from the command
 * table: each command under /world/apiv3/ and /platform/apiv3/{platform_id}/
 * as its contexts allow, its request (apikey beside the command's input), its
 * answer (ok 1 beside the command's answer) or the failure (ok 0 and a title).
 */
export function legacyOpenApiDocument(commands: readonly LegacyCommand[]) {
  const schemas = new SchemaComponents();
  const failure = schemas.of(LegacyFailureShape);
  const paths: Record<string, unknown> = {};
  for (const command of commands) {
    for (const context of command.contexts) {
      paths[pathOf(context, command.name)] = { post: describeCommand(command, context, schemas, failure) };
    }
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "strategy-hub legacy v3 command API",
      version: "3",
      description:
        "JSON commands, each under /world/apiv3/<command> (World context: the key's own account) and, where allowed, /platform/apiv3/<platform_id>/<command> (Private Platform context: a platform key acting for the people of its site). " +
        "The key travels in the body as apikey; GET with the same JSON body (or query parameters) is answered as POST. " +
        "A command answers HTTP 200 with ok 1 and its fields, or ok 0 and error {title, message}; numbers are written as text, times as New York YYYY-MM-DD HH:MM:SS beside unix seconds.",
    },
    servers: [
      {
        url: "/",
        description: `The legacy server serving this document (npm start: http://127.0.0.1:${DEFAULT_PORTS.LEGACY} unless HOST or LEGACY_PORT say otherwise)`,
      },
    ],
    tags: [
      { name: "World", description: "The key's own account" },
      { name: "Private Platform", description: "A platform key, acting for the people of its site" },
    ],
    // The key is a body field (apikey), which no OpenAPI security scheme describes.
    security: [],
    paths,
    components: {
      schemas: schemas.all(),
      headers: {
        "X-Request-Id": {
          description: "The request's id, as the service log names it",
          schema: { type: "string" },
        },
      },
    },
  };
}

const pathOf = (context: LegacyContext, name: string) =>
  context === "world" ? `/world/apiv3/${name}` : `/platform/apiv3/{platform_id}/${name}`;

const LegacyFailureShape = Type.Object(
  {
    ok: Type.Literal(0),
    error: Type.Object({
      title: Type.Union(
        [...new Set(Object.values(LEGACY_TITLES))].sort().map((title) => Type.Literal(title)),
        { description: "What failed (docs/errors.md, Legacy v3)" },
      ),
      message: Type.String({ description: "What was wrong, in words" }),
    }),
  },
  {
    title: "LegacyFailure",
    additionalProperties: true,
    description: "A failed command; cancelSignal of a traded signal also carries signal, signalid and elapsed_time",
  },
);

function describeCommand(
  command: LegacyCommand,
  context: LegacyContext,
  schemas: SchemaComponents,
  failure: Record<string, unknown>,
) {
  const request = schemas.of(
    Type.Object(
      {
        apikey: Type.String({
          minLength: 1,
          description: "The key: a World key, or a key of the platform in the path",
        }),
        ...command.input.properties,
      },
      { title: `${command.name}Request` },
    ),
  );
  const answer = schemas.of(
    Type.Object({ ok: Type.Literal(1), ...command.answer.properties }, { title: `${command.name}Answer` }),
  );
  const headers = { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };
  const failed = (description: string) => ({
    description,
    headers,
    content: { "application/json": { schema: failure } },
  });
  return {
    operationId: context === "world" ? command.name : `platform_${command.name}`,
    summary: command.summary,
    tags: [context === "world" ? "World" : "Private Platform"],
    ...(context === "platform"
      ? {
          parameters: [
            {
              name: "platform_id",
              in: "path",
              required: true,
              description: "The platform the key belongs to",
              schema: { type: "integer", minimum: 1 },
            },
          ],
        }
      : {}),
    requestBody: { required: true, content: { "application/json": { schema: request } } },
    responses: {
      "200": {
        description: "The command's answer (ok 1) or its failure (ok 0)",
        headers,
        content: { "application/json": { schema: { oneOf: [answer, failure] } } },
      },
      "400": failed("The request could not be read (Bad request)"),
      "413": failed("The body is larger than 1 MiB (Bad request)"),
      "500": failed("An unexpected failure, logged under the request id (Internal error)"),
      "503": failed(
        "Storage cannot take the command now; send it again after Retry-After seconds (Service unavailable)",
      ),
    },
  };
}
