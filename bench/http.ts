/**
 * `npm run bench:http`: requests/s and latency of `POST /General/Hello` on the
 * real service (WL server, as `npm start` runs it, logging included) next to a
 * bare Fastify server answering the same route with the service's recorded
 * answer (bench/bare.ts), so the cost of the service's own request pipeline
 * (key lookup, rate limiting, envelope, logging) shows as a ratio.
 *
 * The machine is shared, so the two are measured in alternating rounds (a
 * change of load falls on both), and beside requests/s the CPU time each
 * server process spent per request is printed (Linux): that figure depends
 * little on what else runs.
 *
 * Env: BENCH_SECONDS (default 10, per target, split over the rounds),
 * BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 10); DATABASE_URL is
 * passed through to the service. Only 127.0.0.1 is ever contacted.
 */
import type { ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Result } from "autocannon";
import autocannon from "autocannon";
import { type Route, recordAnswer, startBare } from "./comparison.js";
import {
  ADMIN_KEY,
  exited,
  type Figures,
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

/** CPU time (user and system) a process has used, in ms; null where /proc cannot tell (not Linux). */
async function cpuMs(pid: number | undefined): Promise<number | null> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]?.split(" ") ?? [];
    // utime and stime, fields 14 and 15 of stat (11 and 12 after the command), in ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** A target's rounds taken together: requests/s over all of them, their worst latencies, CPU per request. */
interface Measured {
  readonly figures: Figures;
  readonly cpuMicrosPerRequest: number | null;
}

function combined(runs: readonly Result[], cpu: number | null): Measured {
  const each = runs.map(figures);
  const total = (pick: (f: Figures) => number) => each.reduce((sum, f) => sum + pick(f), 0);
  const worst = (pick: (f: Figures) => number) => Math.max(...each.map(pick));
  const requests = total((f) => f.totalRequests);
  const seconds = runs.reduce((sum, run) => sum + run.duration, 0);
  return {
    figures: {
      requestsPerSec: Number((requests / seconds).toFixed(1)),
      latencyP50Ms: worst((f) => f.latencyP50Ms),
      latencyP99Ms: worst((f) => f.latencyP99Ms),
      latencyAvgMs: Number((total((f) => f.latencyAvgMs * f.totalRequests) / requests).toFixed(2)),
      totalRequests: requests,
      errors: total((f) => f.errors),
      timeouts: total((f) => f.timeouts),
      non2xx: total((f) => f.non2xx),
    },
    cpuMicrosPerRequest: cpu === null ? null : Number(((cpu * 1000) / requests).toFixed(1)),
  };
}

/** One round on one target, failing on any error; answers the run and the CPU time the target spent in it. */
async function round(name: string, child: ChildProcess, port: number, settings: Settings) {
  const before = await cpuMs(child.pid);
  const run = await cannon(port, settings.seconds / settings.rounds, settings.connections);
  const after = await cpuMs(child.pid);
  if (run.non2xx > 0 || run.errors > 0 || exited(child)) {
    throw new Error(
      `${name} run was not clean: ${run.non2xx} non-2xx, ${run.errors} errors, ` +
        `status codes ${JSON.stringify(run.statusCodeStats ?? {})}, child exited: ${exited(child)}`,
    );
  }
  return { run, cpu: before === null || after === null ? null : after - before };
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
  let bareLog: string | undefined;
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
    const bareServer = await startBare("bare", ROUTE, await recordAnswer("service", wlPort, ROUTE), dir);
    const { child: bare, port: barePort } = bareServer;
    bareLog = bareServer.logPath;

    progress(`warming up for ${WARMUP_SECONDS} s each`);
    await cannon(wlPort, WARMUP_SECONDS, settings.connections);
    await cannon(barePort, WARMUP_SECONDS, settings.connections);
    // Read after the warm-up: WL answers before the other servers listen and the "started" line is logged.
    const storage = await storageBackend(serviceLog);

    const runs = { service: [] as Result[], bare: [] as Result[] };
    const cpu: { service: number | null; bare: number | null } = { service: 0, bare: 0 };
    const perRound = `${(settings.seconds / settings.rounds).toFixed(1)} s, ${settings.connections} connections`;
    for (let n = 1; n <= settings.rounds; n++) {
      progress(`round ${n} of ${settings.rounds}: service (WL), then bare fastify, ${perRound} each`);
      for (const [name, child, port] of [
        ["service", service, wlPort],
        ["bare", bare, barePort],
      ] as const) {
        const measured = await round(name, child, port, settings);
        runs[name].push(measured.run);
        cpu[name] = cpu[name] === null || measured.cpu === null ? null : cpu[name] + measured.cpu;
      }
    }

    const log = await logStats(serviceLog);
    const s = combined(runs.service, cpu.service);
    const b = combined(runs.bare, cpu.bare);
    const ratios = {
      requestsPerSec: ratio(s.figures.requestsPerSec, b.figures.requestsPerSec),
      latencyP99: ratio(s.figures.latencyP99Ms, b.figures.latencyP99Ms),
      // Bare over service: what the service answers per CPU second, as a share of bare's.
      requestsPerCpuSecond: ratio(b.cpuMicrosPerRequest, s.cpuMicrosPerRequest),
    };
    const cpuText = (m: Measured) => (m.cpuMicrosPerRequest === null ? "n/a" : `${m.cpuMicrosPerRequest} µs`);

    console.log(
      `POST ${PATH}, ${settings.seconds} s each in ${settings.rounds} alternating rounds, ` +
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
    console.log(`CPU per request: service ${cpuText(s)}, bare ${cpuText(b)} (the process's own time, user and system)`);
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
        service: { ...s.figures, cpuMicrosPerRequest: s.cpuMicrosPerRequest },
        bare: { ...b.figures, cpuMicrosPerRequest: b.cpuMicrosPerRequest },
        ratio: ratios,
      })}`,
    );
  } catch (error) {
    await printLogTail("service", serviceLog);
    if (bareLog) await printLogTail("bare", bareLog);
    throw error;
  }
}

await runBench(main);
