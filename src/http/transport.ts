import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import {
  type FastifyBaseLogger,
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";

/** Fastify settings and hooks shared by the v4 and legacy servers. */

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;
const BODY_LIMIT = 1024 * 1024;

export function serverOptions(logger: Logger): FastifyHttpOptions<Server, FastifyBaseLogger> {
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
  };
}

/** Hooks in callback style, so they cost no promise per request. */
export function logEachRequest(app: FastifyInstance): void {
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("X-Request-Id", request.id);
    done();
  });
  app.addHook("onResponse", (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        // Secret query parameters (a legacy GET client's apikey) are redacted by the logger.
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      "request",
    );
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
