import pino, { type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { OutageLines } from "./outage-lines.js";
import { redacted, redactText } from "./redaction.js";

const FLUSH_EVERY_MS = 20;
const FLUSH_AT_LINES = 256;

/**
 * Standard output for the service's log, written in batches: every 20 ms or
 * every 256 lines, whichever comes first, instead of a write on the event
 * loop per line (a line per request, for the access log). Stopping writes what
 * is left; a crash can lose the lines of its last 20 ms.
 */
export function batchedStdout(): pino.DestinationStream & { flush(): void } {
  // Sonic-boom writes synchronously and copes with partial writes and a full pipe.
  const stdout = pino.destination({ dest: 1, sync: true });
  let lines: string[] = [];
  const flush = () => {
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    stdout.write(text);
  };
  setInterval(flush, FLUSH_EVERY_MS).unref();
  process.on("exit", flush);
  return {
    write(line: string) {
      lines.push(line);
      if (lines.length >= FLUSH_AT_LINES) flush();
    },
    flush,
  };
}

/** What the access log says of one request. */
export interface AccessEntry {
  readonly reqId: string;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly ms: number;
}

/**
 * The access log's line for each request, written to `logger`'s destination
 * as `logger.child({ reqId }).info({ method, url, status, ms }, "request")`
 * writes it (a test holds the two alike), but directly: pino's general path
 * (the call's hook, the redaction walk over every field, the line's assembly)
 * cost about 10 µs of a Hello's 110–145 on the event loop (6 alternated pairs,
 * 2026-11-29). Only the URL can hold a secret (a legacy GET client's apikey,
 * a page's token): it is redacted as every line's text is. The request id is
 * one the service made or one matching its pattern (transport.ts).
 */
export function accessLog(logger: Logger): (entry: AccessEntry) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as DestinationStream;
  // The bindings of the logger and its parents, as pino writes them: `,"pid":...,"server":"GEN"`.
  const bindings = internals[pino.symbols.chindingsSym] as string;
  const level = logger.levels.values.info;
  return (entry) => {
    if (!logger.isLevelEnabled("info")) return;
    stream.write(
      `{"level":${level},"time":${Date.now()}${bindings},"reqId":${JSON.stringify(entry.reqId)},` +
        `"method":${JSON.stringify(entry.method)},"url":${JSON.stringify(redactText(entry.url))},` +
        `"status":${entry.status},"ms":${entry.ms},"msg":"request"}\n`,
    );
  };
}

/**
 * The service's logger: every line passes through redaction (./redaction.ts),
 * whoever writes it (the service, Fastify, a library's error): the fields of
 * the logged object, errors (the `err` field and any other), a request's URL
 * and the message with its arguments. No key, token or password is written.
 * A failure of storage being unavailable, repeated, is logged once a minute
 * (./outage-lines.ts).
 */
export function serviceLogger(
  level: string,
  destination?: DestinationStream,
  outage: OutageLines = new OutageLines(),
): Logger {
  const options: LoggerOptions = {
    level,
    formatters: { log: (object) => redacted(object) as Record<string, unknown> },
    serializers: {
      err: (error: unknown) => redacted(error),
      req: (request: { method?: string; url?: string; id?: string }) => ({
        method: request.method,
        url: redactText(request.url ?? ""),
        id: request.id,
      }),
    },
    hooks: {
      logMethod(args, method) {
        const [first, ...rest] = args as unknown[];
        // An error logged alone becomes {err} and its message the line's: both are redacted.
        let given: unknown[] = first instanceof Error && rest.length === 0 ? [{ err: first }, first.message] : args;
        const [fields, message] = given as [unknown, unknown];
        if (typeof fields === "object" && fields !== null && "err" in fields) {
          const leftOut = outage.admit(fields.err, typeof message === "string" ? message : "");
          if (leftOut === null) return;
          if (leftOut > 0) given = [{ ...fields, suppressed: leftOut }, ...given.slice(1)];
        }
        method.apply(
          this,
          given.map((arg) => (typeof arg === "string" ? redactText(arg) : arg)) as Parameters<typeof method>,
        );
      },
    },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
