import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { ERRORS, Refusal } from "../../core/errors.js";
import { asPlatformId } from "../../core/ids.js";
import { isWellFormedKey } from "../../core/keys.js";
import type { KeySessions } from "../../services/key-sessions.js";
import { authenticate } from "../../services/keys.js";
import type { TradingRuntime } from "../../services/trading.js";
import { isStorageUnavailable } from "../../store/unavailable.js";
import type { RateDecision, RateLimiter } from "../rate-limit.js";
import {
  acceptAnyBody,
  HTTP_TIMEOUTS,
  type HttpTimeouts,
  logEachRequest,
  parseJsonBody,
  readGetBody,
  STORAGE_RETRY_AFTER_SECONDS,
  serverOptions,
} from "../transport.js";
import { type LegacyCommand, type LegacyContext, LegacyFailure } from "./command.js";
import { legacyInput } from "./input.js";
import { legacyOpenApiDocument } from "./openapi.js";
import { LEGACY_TITLES, type LegacyFailureName } from "./titles.js";

export interface LegacyDependencies {
  readonly runtime: TradingRuntime;
  readonly logger: Logger;
  readonly commands: readonly LegacyCommand[];
  readonly sessions: KeySessions;
  /** The legacy server's own budget (LEGACY_RATE_LIMIT_MAX), counted per presented key. */
  readonly limiter: RateLimiter;
  /** HTTP_TIMEOUTS unless given. */
  readonly timeouts?: HttpTimeouts;
}

/**
 * The legacy v3 command server: /world/apiv3/<command> and
 * /platform/apiv3/<platform_id>/<command>, GET or POST, the key in the body as
 * `apikey`. Command-level failures answer HTTP 200 with ok 0; a command's
 * input is read against its schema, and a service's refusal is answered,
 * here, in one place, with its legacy title.
 */
export async function buildLegacyServer(deps: LegacyDependencies): Promise<FastifyInstance> {
  const app = Fastify(
    serverOptions(deps.logger.child({ server: "LEGACY" }), deps.timeouts ?? HTTP_TIMEOUTS, (_status, entry) =>
      JSON.stringify({
        ok: 0,
        error: {
          title: LEGACY_TITLES[entry.name === "RequestTimeout" ? "RequestTimeout" : "UnreadableRequest"],
          message: entry.message ?? ERRORS[entry.name].message,
        },
      }),
    ),
  );
  acceptAnyBody(app);
  logEachRequest(app);
  const commands = new Map(
    deps.commands.map((c) => [
      c.name.toLowerCase(),
      { command: c, read: legacyInput<Record<string, unknown>>(c.input) },
    ]),
  );

  const answer = async (request: FastifyRequest, reply: FastifyReply, context: LegacyContext) => {
    let command: LegacyCommand | undefined;
    const params = request.params as { command: string; platformId?: string };
    try {
      const fields = readFields(request, request.method === "GET" ? await readGetBody(request) : request.body);
      const apikey = typeof fields.apikey === "string" ? fields.apikey.trim() : "";
      const limited = limitRate(request, reply, apikey);
      if (limited) return limited;
      if (apikey === "") throw new LegacyFailure("KeyRequired", "Send your API key as apikey in the JSON body");
      const authentication = await authenticate(deps.runtime, apikey, request.raw.socket, () => mayReadKey(request));
      if (!authentication.ok) {
        deps.limiter.consume(failedKeysOf(request));
        throw new LegacyFailure(authentication.error, "The apikey is not valid for this service");
      }
      const caller = authentication.principal;
      await deps.sessions.noteUse(deps.runtime, caller, "LEGACY", request.ip);
      let platformId = null;
      if (context === "platform") {
        if (!/^\d{1,15}$/.test(params.platformId ?? "") || caller.platformId !== Number(params.platformId)) {
          throw new LegacyFailure("WrongPlatform", "This apikey is not a key of that platform");
        }
        platformId = asPlatformId(Number(params.platformId));
      }
      const known = commands.get(params.command.toLowerCase());
      if (!known) throw new LegacyFailure("UnknownOperation", `There is no command ${params.command}`);
      command = known.command;
      if (!command.contexts.includes(context)) {
        throw new LegacyFailure("NotAvailable", `${command.name} is not available in ${context} context`);
      }
      const input = known.read(fields);
      const result = await command.handler(
        // The spread last, as in the v4 server: properties after a spread are slow to write in Node 20.
        { caller, context, platformId, ...deps.runtime },
        input,
      );
      return send(reply, { ok: 1, ...result });
    } catch (error) {
      if (error instanceof Throttled) return throttled(reply, error.decision);
      const failure = error instanceof Refusal ? refused(error, command) : error;
      if (failure instanceof LegacyFailure) {
        return send(reply, { ok: 0, ...failure.extra, error: { title: failure.title, message: failure.message } });
      }
      throw error;
    }
  };

  /**
   * Counts the request against its key's budget, before the key is looked up
   * (a malformed or missing key counts against the address); past the budget
   * it is answered here, with 429 and Retry-After.
   */
  const limitRate = (request: FastifyRequest, reply: FastifyReply, apikey: string) => {
    const decision = deps.limiter.consume(isWellFormedKey(apikey) ? `key:${apikey}` : `ip:${request.ip}`);
    return decision.allowed ? undefined : throttled(reply, decision);
  };

  const throttled = (reply: FastifyReply, decision: RateDecision) => {
    reply.header("Retry-After", decision.resetSeconds);
    const message = `At most ${decision.limit} requests a window per apikey; retry in ${decision.resetSeconds} seconds`;
    return send(reply, failureBody("RateLimited", message), 429);
  };

  /**
   * A key new to this process is read from storage only while its address has
   * budget left for keys that fail: a made-up key per request would otherwise
   * get a budget of its own each time and a storage read each time.
   */
  const mayReadKey = (request: FastifyRequest) => {
    const decision = deps.limiter.peek(failedKeysOf(request));
    if (!decision.allowed) throw new Throttled(decision);
  };

  const document = legacyOpenApiDocument(deps.commands);
  app.get("/openapi.json", async () => document);
  for (const method of ["GET", "POST"] as const) {
    app.route({ method, url: "/world/apiv3/:command", handler: (req, reply) => answer(req, reply, "world") });
    app.route({
      method,
      url: "/platform/apiv3/:platformId/:command",
      handler: (req, reply) => answer(req, reply, "platform"),
    });
  }
  app.setNotFoundHandler((request, reply) =>
    send(
      reply,
      failureBody(
        "UnknownAddress",
        `Use /world/apiv3/<command> or /platform/apiv3/<platform_id>/<command>, not ${request.url.split("?")[0]}`,
      ),
      404,
    ),
  );
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // The client's doing, answered with its status: worth a line, not an alarm.
      request.log.info({ code: (error as { code?: string }).code, status }, "legacy request could not be read");
      return status === 413
        ? send(reply, failureBody("BodyTooLarge", "The request body is larger than 1 MiB"), 413)
        : send(reply, failureBody("UnreadableRequest", "The request could not be read"), status);
    }
    if (isStorageUnavailable(error)) {
      request.log.error({ err: error }, "legacy command failed: storage is unavailable");
      reply.header("Retry-After", STORAGE_RETRY_AFTER_SECONDS);
      return send(
        reply,
        failureBody(
          "Unavailable",
          `Storage cannot take the command now (full, locked or unreachable): send it again in ${STORAGE_RETRY_AFTER_SECONDS} seconds`,
        ),
        503,
      );
    }
    request.log.error({ err: error }, "legacy command failed");
    return send(reply, failureBody("Internal", "The command failed; it has been logged"), 500);
  });
  return app;
}

/** The request's fields: the JSON body, with query-string values for GET clients that send no body. */
function readFields(request: FastifyRequest, rawBody: unknown): Record<string, unknown> {
  const parsed = parseJsonBody(rawBody);
  if (!parsed.ok) throw new LegacyFailure("MalformedBody", "The request body is not valid JSON");
  const body = parsed.value;
  if (body !== undefined && (typeof body !== "object" || body === null || Array.isArray(body))) {
    throw new LegacyFailure("MalformedBody", "The request body must be a JSON object");
  }
  return { ...(request.query as Record<string, unknown>), ...(body as Record<string, unknown> | undefined) };
}

/**
 * A service's refusal as a legacy failure: the title of its first entry (the
 * command's own, if it has one); its message says every entry, as a request
 * that cannot be read names every field.
 */
function refused(refusal: Refusal, command: LegacyCommand | undefined): LegacyFailure {
  const name = refusal.entries[0]?.name ?? "WrongState";
  const message = refusal.entries.map((entry) => entry.message ?? ERRORS[entry.name].message).join("; ");
  return new LegacyFailure(command?.refusals?.[name] ?? name, message || refusal.message);
}

const failureBody = (name: LegacyFailureName, message: string) => ({
  ok: 0,
  error: { title: LEGACY_TITLES[name], message },
});

function send(reply: FastifyReply, body: Record<string, unknown>, status = 200): FastifyReply {
  return reply.code(status).type("application/json").send(JSON.stringify(body));
}

/** Keys that failed, counted against the address that presented them. */
const failedKeysOf = (request: FastifyRequest) => `failed-key:${request.ip}`;

/** A key not read: its address sent too many keys that failed. */
class Throttled extends Error {
  constructor(readonly decision: RateDecision) {
    super("too many failing keys from this address");
  }
}
