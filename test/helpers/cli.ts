import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { builtArgs, ROOT } from "./built.js";

/** The operator CLI as operators run it (`npm run cli`: dist/cli/main.js): a separate process on the same storage as the service. */

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

export function runCli(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<CliRun> {
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

export function assertSucceeded(run: CliRun): void {
  assert.equal(run.code, 0, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
}

export function assertPositiveInt(value: unknown, what: string): asserts value is number {
  assert.ok(Number.isInteger(value) && (value as number) > 0, `${what} is not a positive integer: ${value}`);
}
