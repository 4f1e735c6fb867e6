import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { ensureBuilt, ROOT } from "../helpers/built.js";
import { baseEnv, cleanUpProcesses, freePorts, HOST, send, tempDataDir, withinTimeout } from "../helpers/process.js";

/** `npm start` as operators run it: compiled JavaScript, stopped by a signal to npm itself. */

const KEY = "npm-start-admin-key-0123456789abcdef";

after(cleanUpProcesses);

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The command lines of the processes whose parent is `pid`, where Linux's /proc tells (else none). */
function childCommands(pid: number): string[] {
  if (!existsSync("/proc/self/stat")) return [];
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return parent === pid ? [readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ")] : [];
      } catch {
        // Gone meanwhile.
        return [];
      }
    });
}

describe("npm start", () => {
  before(() => {
    // What `npm install` builds (prepare), built again unless the run has, so the test runs the code under test.
    ensureBuilt();
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`runs the compiled service, and ${signal} to npm stops it and frees its ports`, async () => {
      const [wl, gen, geo, legacy] = (await freePorts(4)) as [number, number, number, number];
      const npm = spawn("npm", ["start"], {
        cwd: ROOT,
        env: {
          ...baseEnv(),
          HOST,
          WL_PORT: String(wl),
          GEN_PORT: String(gen),
          GEO_PORT: String(geo),
          LEGACY_PORT: String(legacy),
          DATA_DIR: tempDataDir(),
          BOOTSTRAP_ADMIN_KEY: KEY,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      npm.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
      });
      npm.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
      });
      const exited = new Promise<void>((resolve) => npm.on("close", () => resolve()));
      try {
        for (const port of [wl, gen, geo, legacy] as number[]) {
          const deadline = Date.now() + 30_000;
          while (!(await listening(port))) {
            assert.ok(Date.now() < deadline, `port ${port} never listened:\n${output}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
        const hello = await send(gen as number, "POST", "/General/Hello", { key: KEY, body: { Name: "Bob" } });
        assert.equal(hello.status, 200, hello.text);
        const commands = childCommands(npm.pid as number);
        if (commands.length > 0) {
          assert.ok(
            commands.some((command) => command.includes("dist/main.js") && !command.includes("tsx")),
            `npm's child runs the compiled service: ${JSON.stringify(commands)}`,
          );
        }
        npm.kill(signal);
        await withinTimeout(exited, 10_000, `npm start to exit after ${signal}`);
        for (const port of [wl, gen, geo, legacy] as number[]) {
          assert.equal(await listening(port), false, `port ${port} still listens after ${signal}:\n${output}`);
        }
      } finally {
        if (npm.exitCode === null && npm.signalCode === null) npm.kill("SIGKILL");
      }
    });
  }
});
