import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import pg from "pg";
import { BUILT_ENV, buildDist } from "./helpers/built.js";

/**
 * `npm test`: every test/**\/*.test.ts, two files at a time, on SQLite and on
 * PostgreSQL too when there is one. With DATABASE_URL set, that database is
 * used. Without it, when this machine's PostgreSQL answers at 127.0.0.1:5432,
 * the run gets a fresh database (as .ci/run makes one), dropped when the run
 * ends, passed or failed. The first and the last line say which backends ran.
 * Arguments go to `node --test` (e.g. --test-name-pattern). The service is
 * built first: the children tests start run it compiled (./helpers/built.ts).
 */

const HOST = "127.0.0.1";
const PORT = 5432;
const ADMIN_URL = `postgres://postgres@${HOST}:${PORT}/postgres`;

interface Backends {
  readonly env: NodeJS.ProcessEnv;
  readonly line: string;
  /** Drops what the run made; never throws. */
  readonly cleanUp: () => Promise<void>;
}

function testFiles(): string[] {
  return readdirSync("test", { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".test.ts"))
    .map((file) => join("test", file))
    .sort();
}

function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(2_000, () => socket.destroy(new Error("timeout")));
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function onAdmin(statement: string): Promise<void> {
  const client = new pg.Client(ADMIN_URL);
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

async function backends(): Promise<Backends> {
  const nothing = async () => {};
  const given = process.env.DATABASE_URL;
  if (given) {
    const url = new URL(given);
    // Named without its credentials: the line is printed.
    const line = `backends: sqlite, postgres (database ${url.pathname.slice(1)} at ${url.host}, from DATABASE_URL)`;
    return { env: process.env, line, cleanUp: nothing };
  }
  const sqliteOnly = (why: string) => ({ env: process.env, line: `backends: sqlite only: ${why}`, cleanUp: nothing });
  if (!(await answers(HOST, PORT))) return sqliteOnly(`PostgreSQL not reachable at ${HOST}:${PORT}`);
  const database = `strategy_hub_test_${Math.floor(Date.now() / 1000)}_${process.pid}`;
  try {
    await onAdmin(`create database ${database}`);
  } catch (error) {
    return sqliteOnly(`PostgreSQL at ${HOST}:${PORT} made no test database (${(error as Error).message})`);
  }
  return {
    env: { ...process.env, DATABASE_URL: `postgres://postgres@${HOST}:${PORT}/${database}` },
    line: `backends: sqlite, postgres (database ${database} at ${HOST}:${PORT}, dropped after the run)`,
    cleanUp: async () => {
      try {
        await onAdmin(`drop database if exists ${database} with (force)`);
      } catch (error) {
        console.error(`could not drop test database ${database}: ${(error as Error).message}`);
      }
    },
  };
}

function runSuite(env: NodeJS.ProcessEnv): Promise<number> {
  const args = ["--import", "tsx", "--test", "--test-concurrency=2", ...process.argv.slice(2), ...testFiles()];
  const child = spawn(process.execPath, args, { env, stdio: "inherit" });
  // A stop asked of the runner stops the suite; the database is dropped once it has ended.
  const stop = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return new Promise((resolve) => {
    child.on("error", (error) => {
      console.error(error);
      resolve(1);
    });
    child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const chosen = await backends();
console.log(chosen.line);
let code = 1;
try {
  buildDist();
  code = await runSuite({ ...chosen.env, [BUILT_ENV]: "1" });
} finally {
  await chosen.cleanUp();
  console.log(chosen.line);
}
process.exit(code);
