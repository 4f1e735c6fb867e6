/**
 * `npm run bench:http`: requests/s and latency of `POST /General/Hello` on the
 * real service (WL server, as `npm start` runs it, logging included) next to a
 * bare Fastify hello-world, so the cost of the service's own request pipeline
 * (key lookup, rate limiting, envelope, logging) shows as a ratio.
 *
 * Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 10); DATABASE_URL
 * is passed through to the service. Only 127.0.0.1 is ever contacted.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Result } from "autocannon";
import autocannon from "autocannon";

const HOST = "127.0.0.1";
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Fixed, well-formed admin key (16-200 chars of [A-Za-z0-9._~+/=-]); the data dir is fresh, so it is always new. */
const ADMIN_KEY = "bench-admin-key-0123456789abcdefghijklmnopqrstuv";
const PATH = "/General/Hello";
const BODY = JSON.stringify({ Name: "Bob" });
const EXPECTED_GREETING = "Hello, Bob!";
const HEADERS = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
const WARMUP_SECONDS = 1;
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

interface Settings {
  readonly seconds: number;
  readonly connections: number;
}

interface Figures {
  readonly requestsPerSec: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly latencyAvgMs: number;
  readonly totalRequests: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
}

/** What cleanup must undo; module-level so the signal handlers can reach it too. */
const children = new Set<ChildProcess>();
let tempDir: string | undefined;
let cleaning: Promise<void> | undefined;

function positiveIntFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return Number(raw);
}

function progress(message: string): void {
  // Progress goes to stderr so stdout holds only the results.
  process.stderr.write(`[bench] ${message}\n`);
}

/**
 * Free ports, taken by listening on port 0. All listeners stay open until every
 * port is known so the OS cannot hand out the same port twice; a port can still
 * be taken by someone else before the child binds it, which the child then reports.
 */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      server.listen(0, HOST);
      await once(server, "listening");
    }
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === "string") throw new Error("no port for a TCP listener");
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** Starts a child with stdout and stderr appended to `logPath`, and tracks it for cleanup. */
function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, logPath: string): ChildProcess {
  const log = openSync(logPath, "a");
  try {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ["ignore", log, log] });
    children.add(child);
    child.on("error", (error) => progress(`${name}: ${error.message}`));
    return child;
  } finally {
    closeSync(log); // the child holds its own copy of the descriptor
  }
}

/** The service as `npm start` runs it, but on our ports and data dir, at the default log level. */
function startService(ports: readonly number[], dataDir: string, logPath: string): ChildProcess {
  const [wl, gen, geo, legacy] = ports;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    WL_PORT: String(wl),
    GEN_PORT: String(gen),
    GEO_PORT: String(geo),
    LEGACY_PORT: String(legacy),
    DATA_DIR: dataDir,
    BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
    // High enough that no run is ever rate limited, yet the limiter still runs on every request.
    RATE_LIMIT_MAX: "100000000",
    RATE_LIMIT_WINDOW_SECONDS: "60",
  };
  // An inherited LOG_LEVEL would change what is measured; the default (info) logs one line per request.
  delete env.LOG_LEVEL;
  return startChild("service", ["--import", "tsx", "src/main.ts"], env, logPath);
}

/**
 * A bare Fastify hello-world answering the same route with the same envelope,
 * no logging, no auth: the ceiling the service is compared against. It imports
 * the repo's own fastify so both run the same version.
 */
async function startBare(port: number, dir: string, logPath: string): Promise<ChildProcess> {
  const fastifyUrl = pathToFileURL(createRequire(import.meta.url).resolve("fastify")).href;
  const script = `import Fastify from ${JSON.stringify(fastifyUrl)};
const app = Fastify({ logger: false });
app.post(${JSON.stringify(PATH)}, async (request) => ({
  Results: [request.body?.Name === undefined ? "Hello!" : \`Hello, \${request.body.Name}!\`],
  ResponseStatus: { ErrorCode: "200", Message: "OK", Errors: [] },
}));
process.on("SIGTERM", () => app.close().then(() => process.exit(0)));
await app.listen({ host: ${JSON.stringify(HOST)}, port: ${port} });
`;
  const scriptPath = join(dir, "bare.mjs");
  await writeFile(scriptPath, script);
  return startChild("bare", [scriptPath], { ...process.env }, logPath);
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Polls until the server answers the benchmark request correctly. A refused
 * connection means "not yet"; a wrong answer or a dead child fails at once,
 * because waiting longer would not fix either.
 */
async function waitUntilAnswering(name: string, child: ChildProcess, port: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited(child)) throw new Error(`${name} exited before answering (code ${child.exitCode}, ${child.signalCode})`);
    let response: Response | undefined;
    try {
      response = await fetch(`http://${HOST}:${port}${PATH}`, {
        method: "POST",
        headers: HEADERS,
        body: BODY,
        signal: AbortSignal.timeout(2_000),
      });
    } catch {
      // not listening yet
    }
    if (response !== undefined) {
      const text = await response.text();
      const greeting = response.ok ? (JSON.parse(text) as { Results?: unknown[] }).Results?.[0] : undefined;
      if (greeting !== EXPECTED_GREETING) throw new Error(`${name} answered ${response.status} ${text}`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`${name} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** One autocannon run with the settings shared by every target, so the two are comparable. */
function cannon(port: number, seconds: number, connections: number): Promise<Result> {
  return autocannon({
    url: `http://${HOST}:${port}${PATH}`,
    method: "POST",
    headers: HEADERS,
    body: BODY,
    connections,
    pipelining: 1,
    duration: seconds,
  });
}

function figures(result: Result): Figures {
  return {
    requestsPerSec: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyAvgMs: result.latency.average,
    totalRequests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  };
}

/** The backend the service reports in its "strategy-hub started" log line, rather than guessing from the env. */
async function storageBackend(logPath: string): Promise<string> {
  for (const line of (await readFile(logPath, "utf8")).split("\n")) {
    if (!line.includes("strategy-hub started")) continue;
    try {
      return String((JSON.parse(line) as { storage?: unknown }).storage);
    } catch {
      // not a JSON line
    }
  }
  return "unknown";
}

async function logStats(logPath: string): Promise<{ lines: number; megabytes: number }> {
  const text = await readFile(logPath, "utf8");
  return { lines: text.split("\n").filter((line) => line !== "").length, megabytes: Buffer.byteLength(text) / 1e6 };
}

function ratio(service: number, bare: number): number | null {
  return bare > 0 ? Number((service / bare).toFixed(3)) : null;
}

function printTable(rows: readonly [string, Figures][]): void {
  const header = ["", "req/s avg", "p50 ms", "p99 ms", "avg ms", "requests", "errors", "non-2xx"];
  const lines = [
    header,
    ...rows.map(([name, f]) => [
      name,
      f.requestsPerSec.toFixed(0),
      String(f.latencyP50Ms),
      String(f.latencyP99Ms),
      f.latencyAvgMs.toFixed(2),
      String(f.totalRequests),
      String(f.errors),
      String(f.non2xx),
    ]),
  ];
  const widths = header.map((_, i) => Math.max(...lines.map((line) => (line[i] ?? "").length)));
  for (const line of lines) {
    console.log(
      line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  "),
    );
  }
}

/** Prints the end of a log to stderr so a failure can be understood after the temp dir is gone. */
async function printLogTail(name: string, logPath: string, lines = 20): Promise<void> {
  try {
    const tail = (await readFile(logPath, "utf8")).trimEnd().split("\n").slice(-lines).join("\n");
    process.stderr.write(`--- last ${lines} lines of the ${name} log ---\n${tail}\n---\n`);
  } catch {
    // no log yet
  }
}

/** SIGTERM (the service shuts down gracefully on it), then SIGKILL if it does not go in time. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (!exited(child)) {
    const gone = once(child, "exit");
    child.kill("SIGTERM");
    const timer = new Promise((resolve) => setTimeout(resolve, STOP_TIMEOUT_MS).unref());
    await Promise.race([gone, timer]);
    if (!exited(child)) {
      child.kill("SIGKILL");
      await gone;
    }
  }
  children.delete(child);
}

/** Idempotent: runs once whether reached by the normal end, an error or a signal. */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...children].map(stopChild));
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
  })();
  return cleaning;
}

for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const) {
  // `on`, not `once`: a second signal (a second Ctrl-C, or tsx relaying the one the whole
  // process group got) must not find no listener, since tsx then exits the process mid-cleanup.
  process.on(signal, () => {
    if (cleaning !== undefined) return;
    progress(`${signal}: stopping the servers and removing the temp dir`);
    void cleanup().finally(() => process.exit(code));
  });
}

async function main(): Promise<void> {
  const settings: Settings = {
    seconds: positiveIntFromEnv("BENCH_SECONDS", 10),
    connections: positiveIntFromEnv("BENCH_CONNECTIONS", 10),
  };
  tempDir = await mkdtemp(join(tmpdir(), "strategy-hub-bench-"));
  const serviceLog = join(tempDir, "service.log");
  const bareLog = join(tempDir, "bare.log");
  try {
    const ports = await freePorts(5);
    const barePort = ports[4] ?? 0;
    const wlPort = ports[0] ?? 0;
    const service = startService(ports, join(tempDir, "data"), serviceLog);
    const bare = await startBare(barePort, tempDir, bareLog);
    progress(`waiting for the service (WL :${wlPort}) and the bare server (:${barePort})`);
    await Promise.all([waitUntilAnswering("service", service, wlPort), waitUntilAnswering("bare", bare, barePort)]);

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
    printTable([
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

try {
  await main();
  await cleanup();
  process.exit(0);
} catch (error) {
  process.stderr.write(`[bench] FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
  await cleanup();
  process.exit(1);
}
