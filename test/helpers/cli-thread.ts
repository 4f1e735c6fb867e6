import { parentPort } from "node:worker_threads";
import { runCli } from "../../src/cli/run.js";

/**
 * Runs operator CLI commands on a thread of the test process (test/helpers/cli.ts):
 * an event loop of its own, as the CLI's process has, so a command waiting on
 * SQLite's write lock (synchronously, as better-sqlite3 waits) never stops the
 * service in the test's loop from finishing the transaction that holds it.
 */
export interface CliThreadRequest {
  readonly id: number;
  readonly env: NodeJS.ProcessEnv;
  readonly args: readonly string[];
}

export interface CliThreadReply {
  readonly id: number;
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

// One command at a time, as one operator's shell runs them.
let tail: Promise<void> = Promise.resolve();

parentPort?.on("message", ({ id, env, args }: CliThreadRequest) => {
  tail = tail.then(async () => {
    let stdout = "";
    let stderr = "";
    const code = await runCli(args, {
      env,
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
    });
    parentPort?.postMessage({ id, code, stdout, stderr } satisfies CliThreadReply);
  });
});
