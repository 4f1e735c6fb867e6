/**
 * `npm run bench:http`: requests/s and latency of `POST /General/Hello` on the
 * real service (WL server, as `npm start` runs it, logging included) next to a
 * bare Fastify hello-world, so the cost of the service's own request pipeline
 * (key lookup, rate limiting, envelope, logging) shows as a ratio.
 *
 * Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 10); DATABASE_URL
 * is passed through to the service. Only 127.0.0.1 is ever contacted.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { Result } from "autocannon";
import autocannon from "autocannon";
import {
  ADMIN_KEY,
  exited,
  figures,
  freePorts,
  HOST,
  JSON_HEADERS,
  logStats,
  positiveIntFromEnv,
  printFiguresTable,
  printLogTail,
  progress,
  runBench,
  startBareFastify,
  startService,
  storageBackend,
  tempDir,
  waitUntilAnswering,
} from "./support.js";

const PATH = "/General/Hello";
const BODY = JSON.stringify({ Name: "Bob" });
const EXPECTED_GREETING = "Hello, Bob!";
const WARMUP_SECONDS = 1;

interface Settings {
  readonly seconds: number;
  readonly connections: number;
}

/** A bare Fastify hello-world answering the same route with the same envelope. */
const BARE_ROUTES = `app.post(${JSON.stringify(PATH)}, async (request) => ({
  Results: [request.body?.Name === undefined ? "Hello!" : \`Hello, \${request.body.Name}!\`],
  ResponseStatus: { ErrorCode: "200", Message: "OK", Errors: [] },
}));`;

/** Waits until the server answers the benchmark request correctly. */
function waitUntilGreeting(name: string, child: ChildProcess, port: number): Promise<void> {
  return waitUntilAnswering(
    name,
    child,
    `http://${HOST}:${port}${PATH}`,
    { method: "POST", headers: JSON_HEADERS, body: BODY },
    (status, text) =>
      status === 200 && (JSON.parse(text) as { Results?: unknown[] }).Results?.[0] === EXPECTED_GREETING,
  );
}

/** One autocannon run with the settings shared by every target, so the two are comparable. */
function cannon(port: number, seconds: number, connections: number): Promise<Result> {
  return autocannon({
    url: `http://${HOST}:${port}${PATH}`,
    method: "POST",
    headers: JSON_HEADERS,
    body: BODY,
    connections,
    pipelining: 1,
    duration: seconds,
  });
}

function ratio(service: number, bare: number): number | null {
  return bare > 0 ? Number((service / bare).toFixed(3)) : null;
}

async function main(): Promise<void> {
  const settings: Settings = {
    seconds: positiveIntFromEnv("BENCH_SECONDS", 10),
    connections: positiveIntFromEnv("BENCH_CONNECTIONS", 10),
  };
  const dir = await tempDir("strategy-hub-bench-");
  const serviceLog = join(dir, "service.log");
  const bareLog = join(dir, "bare.log");
  try {
    const ports = await freePorts(5);
    const barePort = ports[4] ?? 0;
    const wlPort = ports[0] ?? 0;
    // DATABASE_URL (and PGOPTIONS) pass through: the Hello bench measures whichever storage the caller names.
    const service = startService(ports, join(dir, "data"), ADMIN_KEY, serviceLog, {
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      ...(process.env.PGOPTIONS ? { PGOPTIONS: process.env.PGOPTIONS } : {}),
    });
    const bare = await startBareFastify(barePort, dir, bareLog, BARE_ROUTES);
    progress(`waiting for the service (WL :${wlPort}) and the bare server (:${barePort})`);
    await Promise.all([waitUntilGreeting("service", service, wlPort), waitUntilGreeting("bare", bare, barePort)]);

    progress(`warming up for ${WARMUP_SECONDS} s each`);
    await cannon(wlPort, WARMUP_SECONDS, settings.connections);
    await cannon(barePort, WARMUP_SECONDS, settings.connections);
    // Read after the warm-up: WL answers before the other servers listen and the "started" line is logged.
    const storage = await storageBackend(serviceLog);

    progress(`service (WL) for ${settings.seconds} s, ${settings.connections} connections`);
    const serviceResult = await cannon(wlPort, settings.seconds, settings.connections);
    if (serviceResult.non2xx > 0 || serviceResult.errors > 0 || exited(service)) {
      throw new Error(
        `service run was not clean: ${serviceResult.non2xx} non-2xx, ${serviceResult.errors} errors, ` +
          `status codes ${JSON.stringify(serviceResult.statusCodeStats ?? {})}, child exited: ${exited(service)}`,
      );
    }
    progress(`bare fastify for ${settings.seconds} s, ${settings.connections} connections`);
    const bareResult = await cannon(barePort, settings.seconds, settings.connections);
    if (bareResult.non2xx > 0 || bareResult.errors > 0) {
      throw new Error(`bare run was not clean: ${bareResult.non2xx} non-2xx, ${bareResult.errors} errors`);
    }

    const log = await logStats(serviceLog);
    const s = figures(serviceResult);
    const b = figures(bareResult);
    const ratios = {
      requestsPerSec: ratio(s.requestsPerSec, b.requestsPerSec),
      latencyP99: ratio(s.latencyP99Ms, b.latencyP99Ms),
    };

    console.log(`POST ${PATH}, ${settings.seconds} s each, ${settings.connections} connections, pipelining 1`);
    console.log(
      `service: storage ${storage}${process.env.DATABASE_URL ? " (DATABASE_URL)" : " (fresh temp DATA_DIR)"}, ` +
        `default LOG_LEVEL (info): one pino JSON line per request is written to a file and included in the measurement ` +
        `(log of the whole run, warm-up included: ${log.lines} lines, ${log.megabytes.toFixed(1)} MB)`,
    );
    console.log("bare: fastify() with no logging and no auth, same route and envelope");
    console.log("");
    printFiguresTable([
      ["service (WL)", s],
      ["bare fastify", b],
    ]);
    console.log("");
    console.log(
      `service/bare: req/s ${ratios.requestsPerSec ?? "n/a"}, p99 ${ratios.latencyP99 ?? "n/a (bare p99 is 0 ms)"}`,
    );
    console.log(
      `RESULT ${JSON.stringify({ ...settings, pipelining: 1, storage, logLevel: "info", service: s, bare: b, ratio: ratios })}`,
    );
  } catch (error) {
    await printLogTail("service", serviceLog);
    await printLogTail("bare", bareLog);
    throw error;
  }
}

await runBench(main);
