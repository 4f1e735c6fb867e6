import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import type { TObject } from "@sinclair/typebox";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { permits } from "../../core/access.js";
import { type ErrorEntry, Refusal, refuse } from "../../core/errors.js";
import type { ApprovalScheduler } from "../../engine/approvals.js";
import type { AutoSync } from "../../engine/autotrade/auto-sync.js";
import type { AutotradeDesk } from "../../engine/autotrade/desk.js";
import type { Biller } from "../../engine/biller.js";
import type { BrokerRegistry } from "../../engine/brokers/registry.js";
import type { FillLoop } from "../../engine/fill-loop.js";
import type { SnapshotScheduler } from "../../engine/snapshots.js";
import type { WebhookDeliverer } from "../../engine/webhooks/deliverer.js";
import type { KeySessions } from "../../services/key-sessions.js";
import { type Authentication, authenticate } from "../../services/keys.js";
import type { PaymentProvider } from "../../services/payments.js";
import type { TradingRuntime } from "../../services/trading.js";
import { MAX_PAGE_SIZE, type PageRequest } from "../../store/page.js";
import { isStorageUnavailable } from "../../store/unavailable.js";
import type { CursorCodec } from "../cursor.js";
import { queryBinding } from "../cursor.js";
import { compileInput } from "../input.js";
import { PROBE_PATHS, type Probes, registerProbes } from "../probes.js";
import type { RateDecision, RateLimiter } from "../rate-limit.js";
import {
  acceptAnyBody,
  HTTP_TIMEOUTS,
  type HttpTimeouts,
  logEachRequest,
  parseJsonBody,
  STORAGE_RETRY_AFTER_SECONDS,
  serverOptions,
} from "../transport.js";
import { failureBody, successBody, successPayload } from "./envelope.js";
import { answerOnce, idempotencyKeyOf, REPLAYED_HEADER } from "./idempotency.js";
import { openApiDocument } from "./openapi.js";
import { inputSource, type Operation, type OperationContext, pathOf, type V4Server } from "./operation.js";
import { PAGINATION_INPUT, paginationInput } from "./pagination.js";
import type { PollGate } from "./poll-gate.js";

export interface V4Dependencies {
  readonly runtime: TradingRuntime;
  readonly limiter: RateLimiter;
  readonly cursors: CursorCodec;
  readonly sandbox: boolean;
  readonly logger: Logger;
  readonly operations: readonly Operation[];
  readonly sessions: KeySessions;
  readonly fillLoop: FillLoop;
  /** HTTP_TIMEOUTS unless given. */
  readonly timeouts?: HttpTimeouts;
  readonly probes: Probes;
  readonly payments: PaymentProvider;
  readonly checkoutPolls: PollGate;
  readonly biller: Biller;
  readonly approvals: ApprovalScheduler;
  readonly snapshots: SnapshotScheduler;
  readonly webhooks: WebhookDeliverer;
  readonly brokers: BrokerRegistry;
  readonly desk: AutotradeDesk;
  readonly sync: AutoSync;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The outcome of reading the Authorization header; null when there was none. */
    authentication: Authentication | null;
    presentedKey: string;
  }
}

/** What Fastify says of the JSON it serializes itself; bytes sent as they are say the same. */
const JSON_TYPE = "application/json; charset=utf-8";

/** The operations a server exposes: those listing it, and sandbox ones only while the sandbox is on. */
export const operationsOf = (server: V4Server, operations: readonly Operation[], sandbox: boolean) =>
  operations.filter((op) => op.servers.includes(server) && (sandbox || !op.sandbox));

export async function buildV4Server(server: V4Server, deps: V4Dependencies): Promise<FastifyInstance> {
  const app = Fastify(
    serverOptions(deps.logger.child({ server }), deps.timeouts ?? HTTP_TIMEOUTS, (status, entry) =>
      JSON.stringify(failureBody(status, [entry])),
    ),
  );
  const exposed = operationsOf(server, deps.operations, deps.sandbox);
  app.decorateRequest("authentication", null);
  app.decorateRequest("presentedKey", "");
  acceptAnyBody(app);
  logEachRequest(app);
  // Callback-style: a request with a cached key, in a session under way, is admitted without a promise.
  app.addHook("onRequest", (request, reply, done) => {
    // Health, readiness and metrics need no key and are never rate limited.
    if (PROBE_PATHS.has(request.url)) return done();
    const admitting = admit(request, reply);
    if (admitting) admitting.then(() => done(), done);
    else done();
  });

  /**
   * Who calls, their rate limit and their key's session; a promise only when one of them must wait.
   * No storage is read for a request over its limit: a key this process holds in memory is judged
   * there and counts against its own budget; one that must be read from storage is read only while
   * the address has budget left for keys that fail (so a flood of made-up keys stops at the limit).
   */
  function admit(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    const presented = bearerKey(request);
    if (presented === undefined) return limitRate(request, reply);
    request.presentedKey = presented;
    const found = authenticate(deps.runtime, presented, request.raw.socket, () => mayReadKey(request, reply));
    if (found instanceof Promise) return found.then((authentication) => identified(request, reply, authentication));
    return identified(request, reply, found);
  }

  /** Refuses reading a key from storage for an address out of budget for failing keys. */
  function mayReadKey(request: FastifyRequest, reply: FastifyReply): void {
    const decision = deps.limiter.peek(failedKeysOf(request));
    if (decision.allowed) return;
    showLimit(reply, "ip", decision);
    throw limited(reply, decision);
  }

  function identified(request: FastifyRequest, reply: FastifyReply, authentication: Authentication) {
    request.authentication = authentication;
    if (!authentication.ok) deps.limiter.consume(failedKeysOf(request));
    limitRate(request, reply);
    if (reply.sent || !authentication.ok) return undefined;
    return deps.sessions.noteUse(deps.runtime, authentication.principal, server, request.ip);
  }

  /** Counts the request; over the limit it is answered here (the hooks after it see the reply sent). */
  function limitRate(request: FastifyRequest, reply: FastifyReply): undefined {
    const principal = request.authentication?.ok ? request.authentication.principal : null;
    const type = principal ? "key" : "ip";
    const decision = deps.limiter.consume(principal ? `key:${principal.keyId}` : `ip:${request.ip}`);
    showLimit(reply, type, decision);
    if (!decision.allowed) sendFailure(reply, limited(reply, decision));
    return undefined;
  }

  const operationIds = new Map(exposed.map((operation) => [pathOf(operation, server), operation.id]));
  registerProbes(app, server, deps.probes, (path) => operationIds.get(path));

  const document = openApiDocument(server, exposed);
  // The explorer serves a copy; our generated document is plain JSON the plugin's OpenAPI types do not describe.
  await app.register(fastifySwagger, {
    mode: "static",
    specification: { document: structuredClone(document) as never },
  });
  await app.register(fastifySwaggerUi, { routePrefix: "/docs" });
  app.get("/openapi.json", async () => document);

  for (const operation of exposed) {
    registerOperation(app, server, operation, deps);
  }

  app.setNotFoundHandler((request, reply) =>
    sendFailure(
      reply,
      refuse("UnknownOperation", {
        message: `No operation ${request.method} ${request.url.split("?")[0]} on this server`,
      }),
    ),
  );
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof Refusal) return sendFailure(reply, error);
    const status = (error as { statusCode?: number }).statusCode;
    if (status === 413) {
      return reply
        .code(413)
        .send(failureBody(413, [{ name: "InvalidValue", message: "The request body is too large" }]));
    }
    if (status !== undefined && status >= 400 && status < 500) {
      return sendFailure(reply, refuse("InvalidValue", { message: "The request could not be read" }));
    }
    if (isStorageUnavailable(error)) {
      request.log.error({ err: error }, "operation failed: storage is unavailable");
      return sendFailure(reply, refuse("Unavailable", { meta: { RetryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS } }));
    }
    request.log.error({ err: error }, "operation failed");
    return sendFailure(reply, refuse("Internal"));
  });
  return app;
}

function registerOperation(app: FastifyInstance, server: V4Server, operation: Operation, deps: V4Dependencies): void {
  const source = inputSource(operation);
  const schema: TObject = operation.inputOn?.[server] ?? operation.input;
  const reader = compileInput<Record<string, unknown>>(operation.paginated ? paginationInput(schema) : schema, source);
  const bareBoolean = operation.bareBooleanOn?.includes(server) ?? false;
  const notAvailable = operation.notAvailableOn?.includes(server) ?? false;
  const hiddenFields = Object.entries(operation.fieldServers ?? {})
    .filter(([, servers]) => !servers.includes(server))
    .map(([field]) => field);

  app.route({
    method: operation.method,
    url: pathOf(operation, server),
    handler: async (request, reply) => {
      const authentication = request.authentication;
      if (!authentication) return sendFailure(reply, refuse("KeyRequired"));
      if (!authentication.ok) return sendFailure(reply, refuse(authentication.error));
      const caller = authentication.principal;
      if (notAvailable) {
        return sendFailure(
          reply,
          refuse("NotAvailable", { message: `${operation.id} is not available on the ${server} server` }),
        );
      }
      if (!permits(operation.permission, caller)) {
        return sendFailure(reply, refuse("Forbidden", { message: `${operation.id} is not allowed for this key` }));
      }
      let raw: unknown = request.query;
      if (source === "body") {
        const parsed = parseJsonBody(request.body);
        if (!parsed.ok) return sendFailure(reply, refuse("MalformedBody"));
        raw = parsed.value;
      }
      const input = reader.read(raw);
      if (!input.ok) return sendFailure(reply, new Refusal(input.errors));
      // The spread goes last: in Node 20's V8, properties written after a spread take a slow path
      // that costs microseconds per object, every request.
      const ctx: OperationContext = {
        fillLoop: deps.fillLoop,
        caller,
        presentedKey: request.presentedKey,
        server,
        payments: deps.payments,
        checkoutPolls: deps.checkoutPolls,
        biller: deps.biller,
        approvals: deps.approvals,
        snapshots: deps.snapshots,
        webhooks: deps.webhooks,
        sandbox: deps.sandbox,
        brokers: deps.brokers,
        desk: deps.desk,
        sync: deps.sync,
        ...deps.runtime,
      };
      // Private: answers are per key (site scoping), so shared caches must not keep them.
      if (operation.cacheSeconds) reply.header("Cache-Control", `private, max-age=${operation.cacheSeconds}`);
      try {
        if (!operation.paginated) {
          const key = operation.idempotent ? idempotencyKeyOf(request.headers["idempotency-key"]) : undefined;
          if (key !== undefined) {
            const handler = operation.handler;
            const { body, replayed } = await answerOnce(ctx, operation.id, key, input.value, async (keyed) =>
              JSON.stringify(successBody(strip(await handler(keyed, input.value), hiddenFields))),
            );
            if (replayed) reply.header(REPLAYED_HEADER, "true");
            return reply.type(JSON_TYPE).send(body);
          }
          const results = await operation.handler(ctx, input.value);
          if (bareBoolean) return reply.type("application/json").send(JSON.stringify(results[0] ?? true));
          if (operation.preSerialized) {
            return reply.type(JSON_TYPE).send(successPayload(strip(results, hiddenFields)));
          }
          return reply.send(successBody(strip(results, hiddenFields), undefined, operation.successMessage?.(results)));
        }
        const { Cursor, Limit, AscendingOrder, ...filters } = input.value;
        const binding = queryBinding(operation.id, filters);
        const page = pageRequest(
          deps.cursors,
          binding,
          Cursor as string | undefined,
          Limit as number | undefined,
          AscendingOrder as boolean | undefined,
        );
        const result = await operation.handler(ctx, filters, page);
        return reply.send(
          successBody(strip(result.items, hiddenFields), {
            prev_cursor:
              result.prevKey &&
              deps.cursors.encode(binding, page.ascending, { direction: "before", key: result.prevKey }),
            next_cursor:
              result.nextKey &&
              deps.cursors.encode(binding, page.ascending, { direction: "after", key: result.nextKey }),
          }),
        );
      } catch (error) {
        if (error instanceof Refusal) return sendFailure(reply, error);
        throw error;
      }
    },
  });
}

function pageRequest(
  cursors: CursorCodec,
  binding: string,
  cursor: string | undefined,
  limit: number | undefined,
  ascending: boolean | undefined,
): PageRequest {
  const order = ascending ?? true;
  const size = limit ?? MAX_PAGE_SIZE;
  if (cursor === undefined || cursor === "") return { limit: size, ascending: order, position: null };
  const position = cursors.decode(binding, order, cursor);
  if (!position) {
    throw refuse("InvalidCursor", {
      field: PAGINATION_INPUT.cursor,
      message: "The cursor is malformed, altered, or belongs to another query or order",
    });
  }
  return { limit: size, ascending: order, position };
}

function strip(results: readonly unknown[], hiddenFields: readonly string[]): readonly unknown[] {
  if (hiddenFields.length === 0) return results;
  return results.map((item) => {
    if (typeof item !== "object" || item === null) return item;
    const copy = { ...(item as Record<string, unknown>) };
    for (const field of hiddenFields) delete copy[field];
    return copy;
  });
}

function bearerKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^\s*bearer\s+(.*?)\s*$/i.exec(header);
  // A header in another scheme, a bare key among them, presents no key: it fails as a malformed one.
  return match ? (match[1] ?? "") : "";
}

/** The bucket counting an address's requests whose key failed (unknown, expired, revoked or malformed). */
const failedKeysOf = (request: FastifyRequest) => `failed-key:${request.ip}`;

function showLimit(reply: FastifyReply, type: "key" | "ip", decision: RateDecision): void {
  reply.header("X-Limit-Limit", decision.limit);
  reply.header("X-Limit-Type", type);
  reply.header("X-Limit-Remaining", decision.remaining);
  reply.header("X-Limit-Reset", decision.resetSeconds);
}

/** The refusal of a request over its limit, saying when to come back. */
function limited(reply: FastifyReply, decision: RateDecision): Refusal {
  reply.header("Retry-After", decision.resetSeconds);
  return refuse("RateLimited", { meta: { RetryAfterSeconds: decision.resetSeconds } });
}

function sendFailure(reply: FastifyReply, refusal: Refusal): FastifyReply {
  const entries: readonly ErrorEntry[] = refusal.entries;
  // A refusal saying when to come back says it in the header too (a checkout polled too often).
  const retryAfter = entries[0]?.meta?.RetryAfterSeconds;
  if (typeof retryAfter === "number") reply.header("Retry-After", retryAfter);
  return reply.code(refusal.status).send(failureBody(refusal.status, entries));
}
