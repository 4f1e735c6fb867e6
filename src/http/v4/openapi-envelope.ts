import { Type } from "@sinclair/typebox";
import { ERRORS } from "../../core/errors.js";
import type { SchemaComponents } from "../openapi-schema.js";
import { STATUS_MESSAGES } from "./envelope.js";
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER } from "./idempotency.js";

/**
 * What every v4 document shares: the envelope and its error shape, the
 * error codes of src/core/errors.ts, the headers every answer carries and the
 * failure answers by HTTP status.
 */

const ErrorCode = Type.Union(
  Object.values(ERRORS).map((e) => Type.Literal(e.code)),
  {
    title: "ErrorCode",
    description: `The service's error code (docs/errors.md):\n${Object.entries(ERRORS)
      .map(([name, e]) => `- \`${e.code}\` (HTTP ${e.status}) ${name}: ${e.message}`)
      .join("\n")}`,
  },
);

const ErrorEntry = Type.Object(
  {
    ErrorCode,
    FieldName: Type.String({
      description: "The request field at fault (Order.Side, Positions[0]...), or the header; empty when none",
    }),
    Message: Type.String(),
    Meta: Type.Object({}, { additionalProperties: true, description: "Machine-readable detail" }),
  },
  { title: "Error" },
);

const ResponseStatus = Type.Object(
  {
    ErrorCode: Type.String({ description: 'The HTTP status as a string; "200" on success' }),
    Message: Type.String({ description: "OK, or the status's name: BadRequest, Unauthorized, ..." }),
    Errors: Type.Array(ErrorEntry, { description: "Empty on success" }),
    Meta: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { title: "ResponseStatus" },
);

export const Pagination = Type.Object(
  {
    prev_cursor: Type.Union([Type.String(), Type.Null()], { description: "Cursor of the page before; null: none" }),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Cursor of the next page; null or empty: no more results",
    }),
  },
  { title: "Pagination" },
);

export const Failure = Type.Object(
  {
    Results: Type.Null({ description: "Always null" }),
    ResponseStatus,
  },
  { title: "Failure" },
);

/** The reference to ResponseStatus, for the success envelopes. */
export const responseStatusOf = (schemas: SchemaComponents) => schemas.of(ResponseStatus);

const integer = { type: "integer" };

const HEADERS = {
  "X-Request-Id": {
    description:
      "The request's id, as the service log names it: the client's X-Request-Id when that is 1 to 100 characters of A-Z a-z 0-9 . _ : -, otherwise a new UUID",
    schema: { type: "string" },
  },
  "X-Limit-Limit": { description: "Requests allowed per window", schema: integer },
  "X-Limit-Type": {
    description: "What the limit counts: requests with this key, or from this address when no key was sent",
    schema: { type: "string", enum: ["key", "ip"] },
  },
  "X-Limit-Remaining": { description: "Requests left in the window", schema: integer },
  "X-Limit-Reset": { description: "Seconds until the window starts again", schema: integer },
  "Retry-After": { description: "Seconds to wait before sending again", schema: integer },
  [REPLAYED_HEADER]: {
    description: `true: this is the answer to the first request sent with this ${IDEMPOTENCY_HEADER}, sent again; nothing was done now`,
    schema: { type: "string", enum: ["true"] },
  },
} as const;

type HeaderName = keyof typeof HEADERS;

/** Response headers by reference. */
export const headerRefs = (...names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** The headers on every answer: the request id and the rate limit's. */
export const EVERY_ANSWER: readonly HeaderName[] = [
  "X-Request-Id",
  "X-Limit-Limit",
  "X-Limit-Type",
  "X-Limit-Remaining",
  "X-Limit-Reset",
];

/** The HTTP statuses refusals answer with; 413 is a body over 1 MiB (1101). */
export const FAILURE_STATUSES = [400, 401, 403, 404, 409, 413, 429, 500, 501, 503] as const;
export type FailureStatus = (typeof FAILURE_STATUSES)[number];

/** The failure answer of a status, by reference. */
export const failureRef = (status: FailureStatus) => ({ $ref: `#/components/responses/${STATUS_MESSAGES[status]}` });

function failureResponse(status: FailureStatus, failure: unknown) {
  const codes = Object.values(ERRORS)
    .filter((e) => e.status === status)
    .map((e) => `${e.code} ${e.message}`);
  if (status === 413) codes.push(`${ERRORS.InvalidValue.code} The request body is larger than 1 MiB`);
  return {
    description: `${STATUS_MESSAGES[status]}: ${codes.join("; ")}`,
    headers: headerRefs(...EVERY_ANSWER, ...(status === 429 || status === 503 ? (["Retry-After"] as const) : [])),
    content: { "application/json": { schema: failure } },
  };
}

/** The request headers operations take, by reference. */
export const parameterRef = (name: "RequestId" | "IdempotencyKey") => ({ $ref: `#/components/parameters/${name}` });

/** components.headers, components.responses and components.parameters, registering the envelope's schemas. */
export function envelopeComponents(schemas: SchemaComponents) {
  const failure = schemas.of(Failure);
  return {
    headers: HEADERS,
    responses: Object.fromEntries(
      FAILURE_STATUSES.map((status) => [STATUS_MESSAGES[status], failureResponse(status, failure)]),
    ),
    parameters: {
      RequestId: {
        name: "X-Request-Id",
        in: "header",
        required: false,
        description: "An id of the client's for this request (1 to 100 of A-Z a-z 0-9 . _ : -), echoed and logged",
        schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,100}$" },
      },
      IdempotencyKey: {
        name: IDEMPOTENCY_HEADER,
        in: "header",
        required: false,
        description: `Sent again with the same body within 24 hours, the request answers as the first did (header ${REPLAYED_HEADER}: true) and makes nothing; with another body it is refused (409, 1203).`,
        schema: { type: "string", minLength: 1, maxLength: 255 },
      },
    },
  };
}
