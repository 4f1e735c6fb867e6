import { randomUUID } from "node:crypto";
import { type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import {
  type FastifyBaseLogger,
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import type { ErrorEntry } from "../core/errors.js";
import { accessLog } from "../log.js";

/** Fastify settings and hooks shared by the v4 and legacy servers. */

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;
const BODY_LIMIT = 1024 * 1024;

/** How long a client may take over each part of an exchange; every server of the process applies them. */
export interface HttpTimeouts {
  /** From the start of a request (or of the connection) to the end of its headers. */
  readonly headersMs: number;
  /** From the start of a request to the end of its body. */
  readonly requestMs: number;
  /** How long a kept-alive connection waits for its next request. */
  readonly keepAliveMs: number;
  /** A connection with no traffic either way for this long is closed (a client that stopped reading). */
  readonly idleMs: number;
}

export const HTTP_TIMEOUTS: HttpTimeouts = {
  headersMs: 10_000,
  requestMs: 30_000,
  // Above the 60 s idle timeout of common load balancers, so they close first and never reuse a closed one.
  keepAliveMs: 72_000,
  idleMs: 120_000,
};

/**
 * How long a client is told to wait (Retry-After) when storage cannot take a
 * request (unavailable.ts): long enough not to add load to a struggling
 * database, short enough that a lock or a reconnect has passed.
 */
export const STORAGE_RETRY_AFTER_SECONDS = 5;

/** A failure answered to a connection before or outside any request (a timeout, a request Node cannot parse), as body text. */
export type ClientFailure = (status: number, entry: ErrorEntry) => string;

export function serverOptions(
  logger: Logger,
  timeouts: HttpTimeouts,
  clientFailure: ClientFailure,
): FastifyHttpOptions<Server, FastifyBaseLogger> {
  return {
    loggerInstance: logger as FastifyBaseLogger,
    // One log line per request, written by logEachRequest below.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    bodyLimit: BODY_LIMIT,
    // Idle keep-alive connections are closed at shutdown; in-flight requests finish.
    forceCloseConnections: "idle",
    return503OnClosing: true,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionTimeout: timeouts.idleMs,
    http: {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      // Node looks for late requests every so often (30 s by default): often enough that each waits about its timeout.
      connectionsCheckingInterval: Math.min(1000, Math.ceil(Math.min(timeouts.headersMs, timeouts.requestMs) / 10)),
    },
    clientErrorHandler: (error, socket) => answerClientError(logger, clientFailure, error, socket),
  };
}

/**
 * What Node answers itself, before a request reaches Fastify or when it does not arrive in
 * time, in the server's own error shape: 408 for a request not received within its timeout,
 * 431 for a URL and headers over Node's 16 KiB, 400 for anything else it cannot parse. The
 * connection closes after. Nothing is written once an answer has started.
 */
function answerClientError(
  logger: Logger,
  clientFailure: ClientFailure,
  error: Error & { code?: string },
  socket: Socket,
): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, entry]: [number, ErrorEntry] =
    error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? [408, { name: "RequestTimeout" }]
      : error.code === "HPE_HEADER_OVERFLOW"
        ? [431, { name: "InvalidValue", message: "The request's URL and headers are too large: 16 KiB at most" }]
        : [400, { name: "InvalidValue", message: "The request could not be read as HTTP" }];
  // The error's raw packet may hold the request's key: only its code is logged.
  logger.info({ code: error.code, status }, "client error");
  const answering = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (socket.writable && !answering?.headersSent) {
    const body = clientFailure(status, entry);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** Hooks in callback style, so they cost no promise per request. */
export function logEachRequest(app: FastifyInstance): void {
  const access = accessLog(app.log as Logger);
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("X-Request-Id", request.id);
    done();
  });
  app.addHook("onResponse", (request, reply, done) => {
    access({
      reqId: request.id,
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
    });
    done();
  });
}

/** Every body is read as text and parsed as JSON by the handler, whatever its Content-Type says. */
export function acceptAnyBody(app: FastifyInstance): void {
  const asText = (_request: FastifyRequest, body: string, done: (error: null, body: string) => void) =>
    done(null, body);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, asText);
  // Named too: Fastify remembers the parser of a type it has a name for, and matches "*" anew each request.
  app.addContentTypeParser("application/json", { parseAs: "string" }, asText);
}

export type ParsedBody = { readonly ok: true; readonly value: unknown } | { readonly ok: false };

export function parseJsonBody(body: unknown): ParsedBody {
  if (body === undefined || body === null) return { ok: true, value: undefined };
  if (typeof body !== "string") return { ok: true, value: body };
  if (body.trim() === "") return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
  }
}

/**
 * The body of a GET request. Fastify parses bodies only for methods that
 * usually carry one, but legacy clients send their JSON with GET too.
 */
export async function readGetBody(request: FastifyRequest): Promise<string | undefined> {
  const declared = request.headers["content-length"];
  if (request.method !== "GET" || (declared === undefined && request.headers["transfer-encoding"] === undefined)) {
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw Object.assign(new Error("body too large"), { statusCode: 413 });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
