/**
 * `npm run bench:http`: requests/s and latency of `POST /General/Hello` on the
 * real service (WL server, as `npm start` runs it, logging included) next to a
 * bare Fastify server answering the same route with the service's recorded
 * answer (bench/bare.ts), so the cost of the service's own request pipeline
 * (key lookup, rate limiting, envelope, logging) shows as a ratio.
 *
 * The machine is shared, so the two are measured in alternating rounds
 * (bench/comparison.ts compareWithBare: the rounds last whole seconds; a
 * change of load falls on both), and beside requests/s the CPU time each
 * server process spent per request is printed (Linux): that figure depends
 * little on what else runs.
 *
 * Env: BENCH_SECONDS (default 10, per target, split over the rounds),
 * BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 10); DATABASE_URL is
 * passed through to the service. Only 127.0.0.1 is ever contacted.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { compareWithBare, type Route, type Run, secondsPerRound } from "./comparison.js";
import {
  ADMIN_KEY,
  exited,
  freePorts,
  HOST,
  JSON_HEADERS,
  logStats,
  positiveIntFromEnv,
  printFiguresTable,
  printLogTail,
  progress,
  runBench,
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
  readonly rounds: number;
  readonly connections: number;
}

/** The bare server answers the route with the service's recorded answer. */
const ROUTE: Route = { method: "POST", path: PATH, request: () => ({ path: PATH, body: BODY }) };

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

function ratio(service: number | null, bare: number | null): number | null {
  return service !== null && bare !== null && bare > 0 ? Number((service / bare).toFixed(3)) : null;
}

async function main(): Promise<void> {
  const settings: Settings = {
    seconds: positiveIntFromEnv("BENCH_SECONDS", 10),
    rounds: positiveIntFromEnv("BENCH_ROUNDS", 3),
    connections: positiveIntFromEnv("BENCH_CONNECTIONS", 10),
  };
  const dir = await tempDir("strategy-hub-bench-");
  const serviceLog = join(dir, "service.log");
  try {
    const ports = await freePorts(4);
    const wlPort = ports[0] ?? 0;
    // DATABASE_URL (and PGOPTIONS) pass through: the Hello bench measures whichever storage the caller names.
    const service = startService(ports, join(dir, "data"), ADMIN_KEY, serviceLog, {
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      ...(process.env.PGOPTIONS ? { PGOPTIONS: process.env.PGOPTIONS } : {}),
    });
    progress(`waiting for the service (WL :${wlPort})`);
    await waitUntilGreeting("service", service, wlPort);

    const roundSeconds = secondsPerRound(settings.seconds, settings.rounds);
    progress(
      `service (WL), then bare fastify, in ${settings.rounds} rounds of ${roundSeconds} s, ` +
        `${settings.connections} connections, after ${WARMUP_SECONDS} s of warm-up each`,
    );
    const comparison = await compareWithBare(
      "Hello",
      wlPort,
      ROUTE,
      {
        seconds: settings.seconds,
        warmupSeconds: WARMUP_SECONDS,
        connections: settings.connections,
        rounds: settings.rounds,
      },
      dir,
      service.pid,
    );
    if (exited(service)) throw new Error("the service exited during the runs");
    // Read after the runs: WL answers before the other servers listen and the "started" line is logged.
    const storage = await storageBackend(serviceLog);
    const log = await logStats(serviceLog);
    const s = comparison.service;
    const b = comparison.bare;
    const ratios = {
      requestsPerSec: comparison.ratio,
      latencyP99: ratio(s.figures.latencyP99Ms, b.figures.latencyP99Ms),
      // Bare over service: what the service answers per CPU second, as a share of bare's.
      requestsPerCpuSecond: ratio(b.cpuUsPerRequest, s.cpuUsPerRequest),
    };
    const cpuText = (run: Run) => (run.cpuUsPerRequest === null ? "n/a" : `${run.cpuUsPerRequest} µs`);

    console.log(
      `POST ${PATH}, ${settings.rounds} alternating rounds of ${roundSeconds} s each, ` +
        `${settings.connections} connections, pipelining 1`,
    );
    console.log(
      `service: storage ${storage}${process.env.DATABASE_URL ? " (DATABASE_URL)" : " (fresh temp DATA_DIR)"}, ` +
        `default LOG_LEVEL (info): one pino JSON line per request is written to a file and included in the measurement ` +
        `(log of the whole run, warm-up included: ${log.lines} lines, ${log.megabytes.toFixed(1)} MB)`,
    );
    console.log(
      "bare: fastify() answering the same route with the service's recorded answer, reading the body as the service does; no logging, no auth",
    );
    console.log("");
    printFiguresTable([
      ["service (WL)", s.figures],
      ["bare fastify", b.figures],
    ]);
    console.log(
      `CPU per request: service ${cpuText(s)}, bare ${cpuText(b)} (the process's own time, all its threads, user and system)`,
    );
    console.log("");
    console.log(
      `service/bare: req/s ${ratios.requestsPerSec ?? "n/a"}, p99 ${ratios.latencyP99 ?? "n/a (bare p99 is 0 ms)"}, ` +
        `requests per CPU second ${ratios.requestsPerCpuSecond ?? "n/a"}`,
    );
    console.log(
      `RESULT ${JSON.stringify({
        ...settings,
        pipelining: 1,
        storage,
        logLevel: "info",
        service: { ...s.figures, cpuMicrosPerRequest: s.cpuUsPerRequest },
        bare: { ...b.figures, cpuMicrosPerRequest: b.cpuUsPerRequest },
        ratio: ratios,
      })}`,
    );
  } catch (error) {
    await printLogTail("service", serviceLog);
    throw error;
  }
}

await runBench(main);
