import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { Refusal } from "../../core/errors.js";
import { asPlatformId } from "../../core/ids.js";
import type { KeySessions } from "../../services/key-sessions.js";
import { authenticate } from "../../services/keys.js";
import type { TradingRuntime } from "../../services/trading.js";
import { acceptAnyBody, logEachRequest, parseJsonBody, readGetBody, serverOptions } from "../transport.js";
import { type LegacyCommand, type LegacyContext, LegacyFailure } from "./command.js";
import { legacyOpenApiDocument } from "./openapi.js";
import { LEGACY_TITLES } from "./titles.js";

export interface LegacyDependencies {
  readonly runtime: TradingRuntime;
  readonly logger: Logger;
  readonly commands: readonly LegacyCommand[];
  readonly sessions: KeySessions;
}

/**
 * The legacy v3 command server: /world/apiv3/<command> and
 * /platform/apiv3/<platform_id>/<command>, GET or POST, the key in the body as
 * `apikey`. Command-level failures answer HTTP 200 with ok 0; a service's
 * refusal is answered here, in one place, with its legacy title.
 */
export async function buildLegacyServer(deps: LegacyDependencies): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(deps.logger.child({ server: "LEGACY" })));
  acceptAnyBody(app);
  logEachRequest(app);
  const commands = new Map(deps.commands.map((c) => [c.name.toLowerCase(), c]));

  const answer = async (request: FastifyRequest, reply: FastifyReply, context: LegacyContext) => {
    let command: LegacyCommand | undefined;
    const params = request.params as { command: string; platformId?: string };
    try {
      const fields = readFields(request, request.method === "GET" ? await readGetBody(request) : request.body);
      const apikey = fields.apikey;
      if (typeof apikey !== "string" || apikey.trim() === "") {
        throw new LegacyFailure("KeyRequired", "Send your API key as apikey in the JSON body");
      }
      const authentication = await authenticate(deps.runtime, apikey.trim(), request.raw.socket);
      if (!authentication.ok) {
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
      command = commands.get(params.command.toLowerCase());
      if (!command) throw new LegacyFailure("UnknownOperation", `There is no command ${params.command}`);
      if (!command.contexts.includes(context)) {
        throw new LegacyFailure("NotAvailable", `${command.name} is not available in ${context} context`);
      }
      const result = await command.handler(
        // The spread last, as in the v4 server: properties after a spread are slow to write in Node 20.
        { caller, context, platformId, ...deps.runtime },
        fields,
      );
      return send(reply, { ok: 1, ...result });
    } catch (error) {
      const failure = error instanceof Refusal ? refused(error, command) : error;
      if (failure instanceof LegacyFailure) {
        return send(reply, { ok: 0, ...failure.extra, error: { title: failure.title, message: failure.message } });
      }
      throw error;
    }
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
    reply.code(404).send({
      ok: 0,
      error: {
        title: LEGACY_TITLES.UnknownAddress,
        message: `Use /world/apiv3/<command> or /platform/apiv3/<platform_id>/<command>, not ${request.url.split("?")[0]}`,
      },
    }),
  );
  app.setErrorHandler((error, request, reply) => {
    request.log.error({ err: error }, "legacy command failed");
    const status = (error as { statusCode?: number }).statusCode;
    const clientError = status !== undefined && status >= 400 && status < 500;
    return reply.code(clientError ? status : 500).send({
      ok: 0,
      error: clientError
        ? { title: LEGACY_TITLES.UnreadableRequest, message: "The request could not be read" }
        : { title: LEGACY_TITLES.Internal, message: "The command failed; it has been logged" },
    });
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

/** A service's refusal as a legacy failure: the title of its first entry (the command's own, if it has one), and the refusal's message. */
function refused(refusal: Refusal, command: LegacyCommand | undefined): LegacyFailure {
  const name = refusal.entries[0]?.name ?? "WrongState";
  return new LegacyFailure(command?.refusals?.[name] ?? name, refusal.message);
}

function send(reply: FastifyReply, body: Record<string, unknown>): FastifyReply {
  return reply.code(200).type("application/json").send(JSON.stringify(body));
}
