import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtArgs, ROOT } from "./built.js";
import { freePorts } from "./ports.js";

export { freePorts };

/**
 * The real service (`npm start`) as a child process over real sockets: started
 * on free ports, spoken to with plain HTTP, stopped by a signal. Test files call
 * `cleanUpProcesses` in `after`, so a failing test leaves no child or directory.
 */

export const HOST = "127.0.0.1";
const READY_TIMEOUT_MS = 30_000;
export const EXIT_TIMEOUT_MS = 5_000;
export const SERVERS = ["WL", "GEN", "GEO", "LEGACY"] as const;
export type ServerName = (typeof SERVERS)[number];

// Every process and directory made here, so cleanup can find them even when a test fails.
const children = new Set<ChildProcessWithoutNullStreams>();
const directories = new Set<string>();

export function cleanUpProcesses(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
}

export function tempDataDir(): string {
  const directory = mkdtempSync(join(tmpdir(), "strategy-hub-process-"));
  directories.add(directory);
  return directory;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(10);
  }
}

/** The environment of the test process without anything that would change how the server starts. */
export function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    "DATABASE_URL",
    "PGOPTIONS",
    "DATA_DIR",
    "BOOTSTRAP_ADMIN_KEY",
    "NODE_ENV",
    "SANDBOX",
    "LOG_LEVEL",
    "RATE_LIMIT_MAX",
    "LEGACY_RATE_LIMIT_MAX",
    "RATE_LIMIT_WINDOW_SECONDS",
    "MARKET_FEED",
    "DEMO",
    "NODE_TEST_CONTEXT",
  ]) {
    delete env[name];
  }
  return env;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface Server {
  readonly ports: Readonly<Record<ServerName, number>>;
  readonly dataDir: string;
  /** Everything printed on stdout so far. */
  stdout(): string;
  /** Everything printed on stderr so far. */
  stderr(): string;
  readonly exited: Promise<Exit>;
  /** Sends the signal and waits (bounded) for the process to exit. */
  stop(signal: NodeJS.Signals): Promise<Exit>;
}

/** Runs a module of src/ compiled (`main`, `store/migrate-cli`: see ./built.ts) as a child process. */
export function spawnBuilt(module: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, builtArgs(module), { cwd: ROOT, env });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<Exit>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

export function withinTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Starts the service (`npm start`'s dist/main.js) on free ports and waits until all four servers accept connections. */
export async function startServer(options: { dataDir?: string; env?: Record<string, string> } = {}): Promise<Server> {
  const dataDir = options.dataDir ?? tempDataDir();
  const [wl, gen, geo, legacy] = (await freePorts(4)) as [number, number, number, number];
  const ports = { WL: wl, GEN: gen, GEO: geo, LEGACY: legacy };
  const proc = spawnBuilt("main", {
    ...baseEnv(),
    HOST,
    WL_PORT: String(wl),
    GEN_PORT: String(gen),
    GEO_PORT: String(geo),
    LEGACY_PORT: String(legacy),
    DATA_DIR: dataDir,
    ...options.env,
  });
  let exit: Exit | undefined;
  void proc.exited.then((e) => {
    exit = e;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (const port of Object.values(ports)) {
    while (!(await accepts(port))) {
      if (exit) {
        throw new Error(`the server exited (${exit.code ?? exit.signal}) before listening:\n${proc.stderr()}`);
      }
      if (Date.now() > deadline) {
        proc.child.kill("SIGKILL");
        throw new Error(`the server did not listen within ${READY_TIMEOUT_MS} ms:\n${proc.stderr()}`);
      }
      await pause(50);
    }
  }
  return {
    ports,
    dataDir,
    stdout: proc.stdout,
    stderr: proc.stderr,
    exited: proc.exited,
    stop(signal) {
      proc.child.kill(signal);
      return withinTimeout(proc.exited, EXIT_TIMEOUT_MS, `exit after ${signal}`);
    },
  };
}

export interface Response {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  readonly json: any;
}

export interface RequestOptions {
  readonly key?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly agent?: http.Agent;
}

function readResponse(response: http.IncomingMessage): Promise<Response> {
  return new Promise((resolve, reject) => {
    let text = "";
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => {
      text += chunk;
    });
    response.on("error", reject);
    response.on("end", () => {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
    });
  });
}

/** Opens a request; the caller writes (part of) the body and waits on `response`. */
export function openRequest(port: number, method: string, path: string, options: RequestOptions & { length?: number }) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.length !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = String(options.length);
  }
  const request = http.request({ host: HOST, port, method, path, headers, agent: options.agent ?? false });
  const response = new Promise<Response>((resolve, reject) => {
    request.once("error", reject);
    request.once("response", (res) => resolve(readResponse(res)));
  });
  return { request, response };
}

export function send(port: number, method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const { request, response } = openRequest(port, method, path, {
    ...options,
    ...(payload === undefined ? {} : { length: Buffer.byteLength(payload) }),
  });
  request.end(payload);
  return response;
}
