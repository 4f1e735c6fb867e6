import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { Worker } from "node:worker_threads";
import { startThread } from "../../src/store/journal/journal-thread.js";
import { builtArgs, ROOT } from "./built.js";
import type { CliThreadReply, CliThreadRequest } from "./cli-thread.js";

/**
 * The operator CLI, on the same storage as the service: run on a thread of
 * this process (its commands, options, answers and exit codes, without a
 * process start per command: test/helpers/cli-thread.ts), or as operators run
 * it (`npm run cli`: dist/cli/main.js), a separate process, where the process
 * is what a test is about.
 */

/** A hung CLI fails the test; generous, since `demo` runs for seconds and CI machines are busy. */
const CLI_TIMEOUT_MS = 120_000;

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of the test process, pointed at the given storage and nothing else. */
export function childEnv(storageEnv: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["DATABASE_URL", "PGOPTIONS", "DATA_DIR", "BOOTSTRAP_ADMIN_KEY", "NODE_TEST_CONTEXT"]) {
    delete env[name];
  }
  return { ...env, ...storageEnv };
}

let thread: Worker | null = null;
const waiting = new Map<number, { resolve: (run: CliRun) => void; reject: (error: Error) => void }>();
let nextId = 1;

/** The CLI run on the test process's CLI thread, reading `env` as its environment. */
export function runCli(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<CliRun> {
  if (thread === null) {
    const started = startThread(new URL("./cli-thread.ts", import.meta.url), null);
    started.on("message", ({ id, ...run }: CliThreadReply) => {
      waiting.get(id)?.resolve(run);
      waiting.delete(id);
      // An idle thread does not keep the test process alive.
      if (waiting.size === 0) started.unref();
    });
    started.on("error", (error) => {
      thread = null;
      for (const { reject } of waiting.values()) reject(error);
      waiting.clear();
    });
    thread = started;
  }
  const id = nextId++;
  thread.ref();
  thread.postMessage({ id, env, args } satisfies CliThreadRequest);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error(`cli ${args.join(" ")} did not finish within ${CLI_TIMEOUT_MS} ms`));
    }, CLI_TIMEOUT_MS);
    waiting.set(id, {
      resolve: (run) => {
        clearTimeout(timer);
        resolve(run);
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    });
  });
}

/** The CLI as a process of its own (compiled, as `npm run cli` runs it). */
export function spawnCli(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...builtArgs("cli/main"), ...args], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`cli ${args.join(" ")} did not finish within ${CLI_TIMEOUT_MS} ms`));
    }, CLI_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The single JSON object a --json run prints on stdout (asserting it is exactly one line). */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
export function onlyJson(run: CliRun): any {
  const lines = run.stdout.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 1, `expected one line of JSON on stdout, got: ${run.stdout}\nstderr: ${run.stderr}`);
  const value = JSON.parse(lines[0] as string);
  assert.equal(typeof value, "object");
  assert.notEqual(value, null);
  assert.ok(!Array.isArray(value));
  return value;
}

/** A refused command: exit 1 and one JSON error naming the field, its message matching. */
export function assertCliRefused(run: CliRun, field: string, message: RegExp): void {
  assert.equal(run.code, 1, `${run.stdout}${run.stderr}`);
  const { Error: error } = onlyJson(run);
  assert.equal(error.Field, field, run.stdout);
  assert.match(error.Message, message);
}

export function assertSucceeded(run: CliRun): void {
  assert.equal(run.code, 0, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
}

export function assertPositiveInt(value: unknown, what: string): asserts value is number {
  assert.ok(Number.isInteger(value) && (value as number) > 0, `${what} is not a positive integer: ${value}`);
}
