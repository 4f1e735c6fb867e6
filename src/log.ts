import pino, { type DestinationStream, type Logger, type LoggerOptions } from "pino";
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

/**
 * The service's logger: every line passes through redaction (./redaction.ts),
 * whoever writes it (the service, Fastify, a library's error): the fields of
 * the logged object, errors (the `err` field and any other), a request's URL
 * and the message with its arguments. No key, token or password is written.
 */
export function serviceLogger(level: string, destination?: DestinationStream): Logger {
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
        const given = first instanceof Error && rest.length === 0 ? [{ err: first }, first.message] : args;
        method.apply(
          this,
          given.map((arg) => (typeof arg === "string" ? redactText(arg) : arg)) as Parameters<typeof method>,
        );
      },
    },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
