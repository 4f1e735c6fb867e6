/**
 * What the benchmarks share: free ports, children started and stopped, waiting
 * for a server to answer, temp dirs and other cleanup that runs once on the
 * normal end, on an error and on SIGINT/SIGTERM, env settings, and printing
 * figures. Only 127.0.0.1 is ever contacted.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, fdatasyncSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { Result } from "autocannon";
import pg from "pg";
import type { MarketQuote } from "../src/core/market/quote.js";
import { simulatedQuote } from "../src/core/market/simulated.js";
import { fromServiceSymbol } from "../src/core/symbols/instrument.js";
import { parseMarketFeed } from "../src/engine/market-data.js";

export { freePorts } from "../test/helpers/ports.js";

export const HOST = "127.0.0.1";
export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

/** One autocannon run, reduced to what the benchmarks print. */
export interface Figures {
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
const tempDirs: string[] = [];
const hooks: { readonly name: string; readonly run: () => Promise<void> }[] = [];
let cleaning: Promise<void> | undefined;

export function positiveIntFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return Number(raw);
}

export function progress(message: string): void {
  // Progress goes to stderr so stdout holds only the results.
  process.stderr.write(`[bench] ${message}\n`);
}

/** A fresh temp dir, removed by cleanup. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/**
 * Work for cleanup (dropping a database schema, closing a connection): hooks run
 * after the children are stopped, newest first, each once; a failing hook is
 * reported and the others still run. The answered function runs the hook now
 * (once) and unregisters it, for a resource released before the end.
 */
export function onCleanup(name: string, run: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  const hook = { name, run: () => (done ??= run()) };
  hooks.push(hook);
  return () => {
    const at = hooks.indexOf(hook);
    if (at >= 0) hooks.splice(at, 1);
    return hook.run();
  };
}

/** Starts a Node child in the repo, its stdout and stderr to `output`, tracked for cleanup. */
function spawnTracked(name: string, args: string[], env: NodeJS.ProcessEnv, output: number | "inherit"): ChildProcess {
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ["ignore", output, output] });
  children.add(child);
  child.on("error", (error) => progress(`${name}: ${error.message}`));
  return child;
}

/** Starts a Node child in the repo with stdout and stderr appended to `logPath`, and tracks it for cleanup. */
export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, logPath: string): ChildProcess {
  const log = openSync(logPath, "a");
  try {
    return spawnTracked(name, args, env, log);
  } finally {
    closeSync(log); // the child holds its own copy of the descriptor
  }
}

let built = false;

/** Compiles the service as `npm install` does (once per run), so the benchmark runs the code of the tree. */
function buildOnce(): void {
  if (built) return;
  execFileSync("npm", ["run", "build"], { cwd: REPO_ROOT, stdio: "ignore" });
  built = true;
}

/**
 * Runs a Node child in the repo that shares this process's stdout and stderr
 * (its progress and figures print as they come), tracked for cleanup; resolves
 * once it exits 0.
 */
export async function runChild(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawnTracked(name, args, env, "inherit");
  try {
    const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
    if (code !== 0) throw new Error(`${name} exited with ${code ?? signal}`);
  } finally {
    children.delete(child);
  }
}

/**
 * Starts the service as `npm start` runs it (compiled), on our ports and data dir, with
 * `extra` settings, at the default log level: an inherited LOG_LEVEL (or DEMO,
 * or storage settings) would change what is measured.
 */
export function startService(
  ports: readonly number[],
  dataDir: string,
  adminKey: string,
  logPath: string,
  extra: Readonly<Record<string, string>> = {},
): ChildProcess {
  const [wl, gen, geo, legacy] = ports;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["LOG_LEVEL", "DEMO", "DATABASE_URL", "PGOPTIONS", "SANDBOX", "MARKET_FEED"]) delete env[name];
  Object.assign(env, {
    HOST,
    WL_PORT: String(wl),
    GEN_PORT: String(gen),
    GEO_PORT: String(geo),
    LEGACY_PORT: String(legacy),
    DATA_DIR: dataDir,
    BOOTSTRAP_ADMIN_KEY: adminKey,
    // High enough that no run is ever rate limited, yet the limiter still runs on every request.
    RATE_LIMIT_MAX: "100000000",
    LEGACY_RATE_LIMIT_MAX: "100000000",
    RATE_LIMIT_WINDOW_SECONDS: "60",
    ...extra,
  });
  buildOnce();
  return startChild("service", [...startOptions(), "dist/main.js"], env, logPath);
}

/**
 * The options `npm start` gives node (package.json's start script): the
 * service runs as it does, and a bare server beside it on the same runtime
 * settings (the young generation's size among them).
 */
export function startOptions(): string[] {
  const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: { start: string } })
    .scripts;
  const words = scripts.start.trim().split(/\s+/);
  const node = words.indexOf("node");
  const main = words.indexOf("dist/main.js");
  if (node < 0 || main < node)
    throw new Error(`package.json's start script is not node ... dist/main.js: ${scripts.start}`);
  return words.slice(node + 1, main);
}

export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Polls `url` until the server answers and `accept` takes the answer. A refused
 * connection means "not yet"; an answer `accept` refuses or a dead child fails
 * at once, because waiting longer would not fix either.
 */
export async function waitUntilAnswering(
  name: string,
  child: ChildProcess,
  url: string,
  init: RequestInit,
  accept: (status: number, text: string) => boolean,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited(child)) throw new Error(`${name} exited before answering (code ${child.exitCode}, ${child.signalCode})`);
    let response: Response | undefined;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(2_000) });
    } catch {
      // not listening yet
    }
    if (response !== undefined) {
      const text = await response.text();
      if (!accept(response.status, text)) throw new Error(`${name} answered ${response.status} ${text}`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`${name} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The value at percentile `p` of ascending `sorted` values (0 when there are none). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** What the disk under a directory takes to make a small write durable. */
export interface SyncFigures {
  readonly samples: number;
  readonly bytesPerWrite: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const PROBE_WRITE_BYTES = 4096;

/**
 * Appends 4 KiB (a page, as a WAL frame does) to a file in `dir` and
 * fdatasyncs it, `samples` times or until `maxMs` have passed; the file is
 * removed after. Synchronous: it runs while nothing else is measured.
 */
export function fdatasyncProbe(dir: string, samples = 200, maxMs = 3_000): SyncFigures {
  const path = join(dir, "fdatasync-probe");
  const block = Buffer.alloc(PROBE_WRITE_BYTES, 0x5a);
  const durations: number[] = [];
  const fd = openSync(path, "w");
  try {
    const started = performance.now();
    while (durations.length < samples && performance.now() - started < maxMs) {
      const t0 = performance.now();
      writeSync(fd, block, 0, block.length, durations.length * block.length);
      fdatasyncSync(fd);
      durations.push(performance.now() - t0);
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  durations.sort((a, b) => a - b);
  const ms = (value: number) => Number(value.toFixed(3));
  return {
    samples: durations.length,
    bytesPerWrite: PROBE_WRITE_BYTES,
    p50Ms: ms(percentile(durations, 50)),
    p99Ms: ms(percentile(durations, 99)),
  };
}

export function figures(result: Result): Figures {
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

/** A table with the first column left-aligned and the others right-aligned. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const lines = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...lines.map((line) => (line[i] ?? "").length)));
  for (const line of lines) {
    console.log(
      line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  "),
    );
  }
}

export function printFiguresTable(rows: readonly [string, Figures][]): void {
  printTable(
    ["", "req/s avg", "p50 ms", "p99 ms", "avg ms", "requests", "errors", "non-2xx"],
    rows.map(([name, f]) => [
      name,
      f.requestsPerSec.toFixed(0),
      String(f.latencyP50Ms),
      String(f.latencyP99Ms),
      f.latencyAvgMs.toFixed(2),
      String(f.totalRequests),
      String(f.errors),
      String(f.non2xx),
    ]),
  );
}

/** The backend the service reports in its "strategy-hub started" log line, rather than guessing from the env. */
export async function storageBackend(logPath: string): Promise<string> {
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

export async function logStats(logPath: string): Promise<{ lines: number; megabytes: number }> {
  const text = await readFile(logPath, "utf8");
  return { lines: text.split("\n").filter((line) => line !== "").length, megabytes: Buffer.byteLength(text) / 1e6 };
}

/** Prints the end of a log to stderr so a failure can be understood after the temp dir is gone. */
export async function printLogTail(name: string, logPath: string, lines = 20): Promise<void> {
  try {
    const tail = (await readFile(logPath, "utf8")).trimEnd().split("\n").slice(-lines).join("\n");
    process.stderr.write(`--- last ${lines} lines of the ${name} log ---\n${tail}\n---\n`);
  } catch {
    // no log yet
  }
}

/** SIGTERM (the service shuts down gracefully on it), then SIGKILL if it does not go in time. */
export async function stopChild(child: ChildProcess): Promise<void> {
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

/** Runs `work` on a connection of its own to a PostgreSQL server (DATABASE_URL). */
export async function withPg<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Registers a PostgreSQL schema to be dropped (with cascade) at cleanup, whatever
 * happens next, and answers a function that drops it now. `create` makes it
 * first; otherwise whoever uses it creates it (openStorage does).
 */
export async function schemaOfOurOwn(url: string, name: string, create: boolean): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid schema name ${name}`);
  const drop = onCleanup(`drop schema ${name}`, async () => {
    await withPg(url, (client) => client.query(`drop schema if exists ${name} cascade`));
    progress(`dropped schema ${name}`);
  });
  if (create) await withPg(url, (client) => client.query(`create schema ${name}`));
  return drop;
}

/** Idempotent: runs once whether reached by the normal end, an error or a signal. */
export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...children].map(stopChild));
    for (const hook of hooks.splice(0).reverse()) {
      try {
        await hook.run();
      } catch (error) {
        progress(`cleanup (${hook.name}) failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
  })();
  return cleaning;
}

/**
 * Runs a benchmark: cleanup on SIGINT/SIGTERM, on the normal end and on an
 * error; exits 0, 1 on an error, 130/143 on a signal.
 */
export async function runBench(main: () => Promise<void>): Promise<never> {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    // `on`, not `once`: a second signal (a second Ctrl-C, or tsx relaying the one the whole
    // process group got) must not find no listener, since tsx then exits the process mid-cleanup.
    process.on(signal, () => {
      if (cleaning !== undefined) return;
      progress(`${signal}: stopping the servers and cleaning up`);
      void cleanup().finally(() => process.exit(code));
    });
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
}

/** The admin key every benchmark's service starts with; each database is fresh, so it is always new. */
export const ADMIN_KEY = "bench-admin-key-0123456789abcdefghijklmnopqrstuv";
export const AUTH = { authorization: `Bearer ${ADMIN_KEY}` };
export const JSON_HEADERS = { ...AUTH, "content-type": "application/json" };

/** The clock the trading benchmarks set: a Tuesday, 10:00 in New York, when US stocks trade. */
export const MARKET_OPEN_ISO = "2026-03-10T14:00:00Z";
export const MARKET_OPEN_MS = Date.parse(MARKET_OPEN_ISO);

/** One v4 call as the admin that must answer 200: its Results and the body's size in bytes. */
export async function apiCall(
  port: number,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<{ results: unknown[]; bytes: number }> {
  const response = await fetch(`http://${HOST}:${port}${path}`, {
    method,
    headers: body === undefined ? AUTH : JSON_HEADERS,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status} ${text.slice(0, 500)}`);
  return { results: (JSON.parse(text) as { Results: unknown[] }).Results, bytes: Buffer.byteLength(text) };
}

/** Creates `count` strategies of 10,000,000 owned by the admin; answers their ids. */
export async function createStrategies(port: number, count: number, namePrefix: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 1; i <= count; i++) {
    const [created] = (
      await apiCall(port, "POST", "/Strategies/AddStrategy", {
        StrategyName: `${namePrefix} ${i}`,
        StartingCapital: 10_000_000,
      })
    ).results as { StrategyId: number }[];
    if (created === undefined) throw new Error("AddStrategy answered no StrategyId");
    ids.push(created.StrategyId);
  }
  return ids;
}

/** The signed sum of the strategies' open positions. */
export async function sharesHeld(port: number, strategyIds: readonly number[]): Promise<number> {
  const { results } = await apiCall(
    port,
    "GET",
    `/Strategies/GetStrategyOpenPositions?StrategyIds=${strategyIds.join(",")}`,
  );
  return (results as { Quantity: number }[]).reduce((sum, position) => sum + position.Quantity, 0);
}

/** The simulated AAPL quote at the benchmarks' clock, as the service computes it (to set it by hand without sizes). */
export function simulatedAapl(): MarketQuote {
  const feed = parseMarketFeed("simulated");
  const instrument = fromServiceSymbol("AAPL");
  if (feed.kind !== "simulated" || !instrument) throw new Error("no simulated AAPL");
  return simulatedQuote(feed.seed, instrument, MARKET_OPEN_MS);
}
