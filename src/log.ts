import pino from "pino";

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
