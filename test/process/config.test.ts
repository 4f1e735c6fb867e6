import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import {
  baseEnv,
  cleanUpProcesses,
  freePorts,
  HOST,
  spawnBuilt,
  tempDataDir,
  withinTimeout,
} from "../helpers/process.js";

/**
 * A bad setting stops the real process (`npm start`) with exactly one line on
 * stderr naming the variable and what is wrong: no stack trace, nothing on
 * stdout, a non-zero exit, and no administrator key made.
 */

after(cleanUpProcesses);

async function startWith(env: Record<string, string>) {
  const dataDir = tempDataDir();
  const [wl, gen, geo, legacy] = (await freePorts(4)) as [number, number, number, number];
  const proc = spawnBuilt("main", {
    ...baseEnv(),
    HOST,
    WL_PORT: String(wl),
    GEN_PORT: String(gen),
    GEO_PORT: String(geo),
    LEGACY_PORT: String(legacy),
    DATA_DIR: dataDir,
    ...env,
  });
  const exit = await withinTimeout(proc.exited, 30_000, "a start that must fail");
  return { exit, stdout: proc.stdout(), stderr: proc.stderr(), dataDir };
}

async function assertStopsWith(env: Record<string, string>, line: RegExp) {
  const run = await startWith(env);
  assert.notEqual(run.exit.code, 0, `${JSON.stringify(env)}: exit ${run.exit.code}\n${run.stderr}`);
  assert.equal(run.exit.code, 1);
  const lines = run.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `one line on stderr for ${JSON.stringify(env)}, got:\n${run.stderr}`);
  assert.match(lines[0] as string, line);
  assert.doesNotMatch(run.stderr, /\n\s+at /, "no stack trace");
  assert.equal(run.stdout, "", "nothing on stdout");
  assert.ok(!existsSync(join(run.dataDir, "strategy-hub.sqlite")), "nothing stored");
  return lines[0] as string;
}

describe("a bad setting stops the start with one line naming it", () => {
  test("LOG_LEVEL", async () => {
    await assertStopsWith(
      { LOG_LEVEL: "loud" },
      /^strategy-hub: LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got loud$/,
    );
  });

  test("ports: out of range, not a number, two servers on one port", async () => {
    await assertStopsWith({ WL_PORT: "70000" }, /^strategy-hub: WL_PORT must be a port number from 1 to 65535/);
    await assertStopsWith({ GEO_PORT: "http" }, /^strategy-hub: GEO_PORT must be a positive integer, got http$/);
    await assertStopsWith(
      { WL_PORT: "18181", LEGACY_PORT: "18181" },
      /^strategy-hub: LEGACY_PORT must differ from WL_PORT, both are 18181$/,
    );
  });

  test("a BOOTSTRAP_ADMIN_KEY no key could be, without echoing it", async () => {
    const line = await assertStopsWith(
      { BOOTSTRAP_ADMIN_KEY: "short secret!" },
      /^strategy-hub: BOOTSTRAP_ADMIN_KEY must be 16 to 200 characters of letters, digits and \._~\+\/=-$/,
    );
    assert.ok(!line.includes("short secret"));
  });

  test("a DATABASE_URL that is not postgres://, without echoing its password", async () => {
    const line = await assertStopsWith(
      { DATABASE_URL: "mysql://ann:s3cret@db.example/trading" },
      /^strategy-hub: DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL .*got a mysql:\/\/ URL$/,
    );
    assert.ok(!line.includes("s3cret"));
    await assertStopsWith({ DATABASE_URL: "not a url" }, /^strategy-hub: DATABASE_URL is not a URL/);
  });

  test("a PostgreSQL server that does not answer", async () => {
    await assertStopsWith(
      { DATABASE_URL: "postgres://ann:s3cret@127.0.0.1:1/trading" },
      /^strategy-hub: DATABASE_URL points at 127\.0\.0\.1:1, where no PostgreSQL server answers \(ECONNREFUSED\)$/,
    );
  });

  test("a MARKET_FEED replay file that does not exist", async () => {
    await assertStopsWith(
      { MARKET_FEED: "replay:/no/such/quotes.csv" },
      /^strategy-hub: MARKET_FEED names a replay file that does not exist: \/no\/such\/quotes\.csv$/,
    );
  });

  test("a port another process holds, found before anything is stored", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, HOST, resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      await assertStopsWith(
        { GEN_PORT: String(port) },
        new RegExp(`^strategy-hub: GEN_PORT ${port} is in use on ${HOST} by another process$`),
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  test("a replay file that cannot be read as quotes: named, and no administrator key is made", async () => {
    const dir = tempDataDir();
    const file = join(dir, "quotes.csv");
    writeFileSync(file, "time,symbol,bid,ask,last\n2026-03-02T14:30:00Z,AAPL,2,1,1\n");
    const run = await startWith({ MARKET_FEED: `replay:${file}` });
    assert.equal(run.exit.code, 1);
    assert.equal(
      run.stderr,
      `strategy-hub: MARKET_FEED replay file ${file}: line 2: a quote needs bid <= ask and a last price\n`,
    );
    assert.doesNotMatch(run.stderr + run.stdout, /access key/);
    const database = new SqliteDatabase(join(run.dataDir, "strategy-hub.sqlite"), { fileMustExist: true });
    try {
      assert.deepEqual(database.prepare("select id from persons").all(), [], "no administrator was made");
    } finally {
      database.close();
    }
  });

  if (process.env.DATABASE_URL) {
    test("a PostgreSQL database that does not exist: how to create it", async () => {
      const url = new URL(process.env.DATABASE_URL as string);
      url.pathname = `/no_such_db_${process.pid}`;
      await assertStopsWith(
        { DATABASE_URL: url.toString() },
        new RegExp(
          `^strategy-hub: DATABASE_URL names database "no_such_db_${process.pid}", which does not exist on .*: create it first \\(createdb .* no_such_db_${process.pid}, or in psql: create database "no_such_db_${process.pid}";\\)$`,
        ),
      );
    });
  }
});
