import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { sql } from "kysely";
import { assertSucceeded, childEnv, onlyJson, spawnCli } from "../helpers/cli.js";
import {
  baseEnv,
  cleanUpProcesses,
  EXIT_TIMEOUT_MS,
  openRequest,
  type Response,
  type Server,
  type ServerName,
  send,
  spawnBuilt,
  startServer,
  tempDataDir,
  waitFor,
  withinTimeout,
} from "../helpers/process.js";
import { freshStorage } from "../helpers/service.js";

/** The real server process (`npm start`) over real sockets, on embedded SQLite. */

const V4_SERVERS = ["WL", "GEN", "GEO"] as const;
type V4Server = (typeof V4_SERVERS)[number];
const CHOSEN_KEY = "chosen-admin-key-0123456789abcd";
/** How many migrations a fresh database holds after the first start. */
const MIGRATIONS = readdirSync(new URL("../../src/store/migrations", import.meta.url)).filter((f) =>
  /^\d{4}_/.test(f),
).length;

after(cleanUpProcesses);

const hello = (server: Server, name: V4Server, key: string) =>
  send(server.ports[name], "POST", "/General/Hello", { key, body: { Name: "Bob" } });

const HELLO_BOB = { Results: ["Hello, Bob!"], ResponseStatus: { ErrorCode: "200", Message: "OK", Errors: [] } };

/** The administrator key the first start prints on stderr, if it printed one. */
function printedKey(stderr: string): string | undefined {
  return /Its access key, shown only now:\s*\n\s*\n\s+(\S+)\s*\n/.exec(stderr)?.[1];
}

// biome-ignore lint/suspicious/noExplicitAny: log lines are arbitrary JSON
function jsonLines(stdout: string): any[] {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}

function readPersons(dataDir: string): { email: string; role: string }[] {
  const database = new SqliteDatabase(join(dataDir, "strategy-hub.sqlite"), { fileMustExist: true });
  try {
    assert.equal(database.pragma("integrity_check", { simple: true }), "ok");
    return database.prepare("select email, role from persons order by id").all() as { email: string; role: string }[];
  } finally {
    database.close();
  }
}

describe("first start on an empty data directory", () => {
  let server: Server;
  let key: string;
  const requests: { id: string; server: ServerName; method: string; url: string; status: number }[] = [];
  /** Remembers a request so the log test can find its line. */
  const track = (response: Response, server: ServerName, method: string, url: string): Response => {
    requests.push({ id: String(response.headers["x-request-id"]), server, method, url, status: response.status });
    return response;
  };

  test("prints a new administrator key on stderr, as a banner, that works on every v4 server; the legacy server answers", async () => {
    server = await startServer();
    const printed = printedKey(server.stderr());
    assert.ok(printed, `no key printed:\n${server.stderr()}`);
    key = printed;
    assert.equal(server.stderr().split(key).length - 1, 1, "the key is printed exactly once");
    assert.ok(!server.stdout().includes(key), "the key is not in the JSON log");
    assert.match(server.stderr(), /={20,}\n {2}A service administrator was created \(person 1\)/);

    for (const name of V4_SERVERS) {
      const response = track(await hello(server, name, key), name, "POST", "/General/Hello");
      assert.equal(response.status, 200, `${name}: ${response.text}`);
      assert.deepEqual(response.json, HELLO_BOB);
    }
    const legacy = track(
      await send(server.ports.LEGACY, "POST", "/world/apiv3/anything", { body: { apikey: key } }),
      "LEGACY",
      "POST",
      "/world/apiv3/anything",
    );
    assert.equal(legacy.status, 200);
    assert.equal(legacy.json.ok, 0);
    assert.equal(legacy.json.error.title, "Unknown command");
  });

  test("the sandbox is on by default: an administrator may set the clock", async () => {
    const response = track(
      await send(server.ports.GEN, "POST", "/Sandbox/SetClock", { key, body: { Now: "2030-01-02T03:04:05Z" } }),
      "GEN",
      "POST",
      "/Sandbox/SetClock",
    );
    assert.equal(response.status, 200, response.text);
    assert.equal(new Date(response.json.Results[0].Now).toISOString(), "2030-01-02T03:04:05.000Z");
  });

  test("SIGTERM lets a request in flight finish, closes idle keep-alive connections and exits 0", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // A completed request leaves an idle keep-alive connection open.
      const first = track(
        await send(server.ports.WL, "POST", "/General/Hello", { key, body: { Name: "Bob" }, agent }),
        "WL",
        "POST",
        "/General/Hello",
      );
      assert.equal(first.status, 200);
      assert.equal(first.headers.connection, "keep-alive");

      // A second request is in flight: the server has read its headers (it answered 100 Continue)
      // but not yet its body when the signal arrives.
      const body = JSON.stringify({ Name: "Late Bob" });
      const inFlight = openRequest(server.ports.GEO, "POST", "/General/Hello", {
        key,
        length: body.length,
        headers: { expect: "100-continue" },
      });
      const headersRead = new Promise((resolve) => inFlight.request.once("continue", resolve));
      inFlight.request.flushHeaders();
      await headersRead;
      server.stop("SIGTERM").catch(() => undefined);
      await waitFor(() => server.stdout().includes("shutting down"), "the shutdown to begin");
      inFlight.request.end(body);
      const finished = track(await inFlight.response, "GEO", "POST", "/General/Hello");
      assert.equal(finished.status, 200, finished.text);
      assert.deepEqual(finished.json.Results, ["Hello, Late Bob!"]);

      const exit = await withinTimeout(server.exited, EXIT_TIMEOUT_MS, "exit after SIGTERM");
      assert.deepEqual(exit, { code: 0, signal: null });
    } finally {
      agent.destroy();
    }
    const logs = jsonLines(server.stdout());
    assert.ok(logs.some((line) => line.msg?.startsWith("shutting down") && line.signal === "SIGTERM"));
    assert.equal(logs.at(-1).msg, "stopped");
    assert.deepEqual(readPersons(server.dataDir), [{ email: "admin@strategy-hub.invalid", role: "admin" }]);
  });

  test("every stdout line is pino JSON, with exactly one line per request", () => {
    const lines = server
      .stdout()
      .split("\n")
      .filter((line) => line.trim() !== "");
    // biome-ignore lint/suspicious/noExplicitAny: log lines are arbitrary JSON
    const logs: any[] = lines.map((line) => {
      assert.doesNotThrow(() => JSON.parse(line), `not JSON: ${line}`);
      return JSON.parse(line);
    });
    for (const log of logs) {
      assert.equal(typeof log.level, "number");
      assert.equal(typeof log.time, "number");
      assert.equal(typeof log.msg, "string");
    }
    const started = logs.find((log) => log.msg === "strategy-hub started");
    assert.ok(started, "a start line is logged");
    assert.deepEqual(
      { storage: started.storage, sandbox: started.sandbox, ports: started.ports },
      { storage: "sqlite", sandbox: true, ports: server.ports },
    );
    assert.deepEqual(started.location, { file: join(server.dataDir, "strategy-hub.sqlite") });
    assert.equal(started.migrations.applied, MIGRATIONS);
    assert.match(started.migrations.latest, /^\d{4}_\w+$/);
    assert.equal(started.marketFeed, "simulated");
    assert.deepEqual(started.clock, { frozen: false });

    assert.equal(requests.length, 7);
    assert.equal(new Set(requests.map((r) => r.id)).size, requests.length, "request ids are unique");
    for (const expected of requests) {
      const matching = logs.filter((log) => log.reqId === expected.id);
      assert.equal(matching.length, 1, `log lines for request ${expected.id}`);
      const { server: name, method, url, status } = matching[0];
      assert.deepEqual(
        { server: name, method, url, status },
        { server: expected.server, method: expected.method, url: expected.url, status: expected.status },
      );
    }
    assert.equal(logs.filter((log) => log.reqId !== undefined).length, requests.length, "no other request lines");

    // The request answered during shutdown was logged after the shutdown began.
    const shutdownAt = logs.findIndex((log) => log.msg.startsWith("shutting down"));
    const lateAt = logs.findIndex((log) => log.reqId === requests.at(-1)?.id);
    assert.ok(shutdownAt >= 0 && lateAt > shutdownAt, "the in-flight request finished after SIGTERM");
  });

  test("a second start on the same data prints no key, keeps the first key working, and exits 0 on SIGINT", async () => {
    const again = await startServer({ dataDir: server.dataDir });
    const response = await hello(again, "WL", key);
    assert.equal(response.status, 200, response.text);
    const exit = await again.stop("SIGINT");
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.equal(printedKey(again.stderr()), undefined);
    assert.doesNotMatch(again.stderr(), /administrator was created/);
    const logs = jsonLines(again.stdout());
    assert.ok(logs.some((line) => line.signal === "SIGINT"));
    assert.equal(logs.at(-1).msg, "stopped");
    assert.equal(readPersons(again.dataDir).length, 1);
  });
});

describe("BOOTSTRAP_ADMIN_KEY", () => {
  test("the chosen key works on every v4 server, and no key is printed", async () => {
    const server = await startServer({ env: { BOOTSTRAP_ADMIN_KEY: CHOSEN_KEY } });
    for (const name of V4_SERVERS) {
      const response = await hello(server, name, CHOSEN_KEY);
      assert.equal(response.status, 200, `${name}: ${response.text}`);
      assert.deepEqual(response.json, HELLO_BOB);
    }
    const other = await hello(server, "WL", "some-other-key-0123456789abcdef");
    assert.equal(other.status, 401);
    assert.deepEqual(await server.stop("SIGTERM"), { code: 0, signal: null });
    assert.equal(printedKey(server.stderr()), undefined);
    assert.doesNotMatch(server.stderr(), /administrator was created/);
    assert.ok(
      !server.stdout().includes(CHOSEN_KEY) && !server.stderr().includes(CHOSEN_KEY),
      "the chosen key is not echoed",
    );
  });
});

describe("keys changed by the CLI while the server runs", () => {
  test("a key the CLI makes works at once; once the CLI revokes it, the next request is refused, under load", async () => {
    const server = await startServer({ env: { BOOTSTRAP_ADMIN_KEY: CHOSEN_KEY, RATE_LIMIT_MAX: "1000000" } });
    const cli = async (...args: string[]) => {
      const run = await spawnCli(childEnv({ DATA_DIR: server.dataDir }), [...args, "--json"]);
      assertSucceeded(run);
      return onlyJson(run);
    };
    const { PersonId } = await cli("person", "create", "--email", "bot@example.com", "--first", "Bo", "--last", "T");
    const { Id, AccessKey } = await cli("key", "create", "--person", String(PersonId));
    for (const name of V4_SERVERS) assert.equal((await hello(server, name, AccessKey)).status, 200);
    // One connection, two keys in turn: each request is its own key's.
    const oneConnection = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const personOf = async (key: string) =>
      (await send(server.ports.GEN, "GET", "/General/GetAccessKey", { key, agent: oneConnection })).json.Results[0]
        .PersonId;
    for (let i = 0; i < 3; i++) {
      assert.equal(await personOf(AccessKey), PersonId);
      assert.notEqual(await personOf(CHOSEN_KEY), PersonId);
    }

    // Other clients keep the server busy meanwhile, so the revocation lands among requests being answered.
    let busy = true;
    const answered: number[] = [];
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const others = Array.from({ length: 8 }, async () => {
      while (busy)
        answered.push((await send(server.ports.WL, "POST", "/General/Hello", { key: CHOSEN_KEY, agent })).status);
    });
    try {
      await cli("key", "revoke", "--id", String(Id));
      const again = await send(server.ports.GEN, "GET", "/General/GetAccessKey", {
        key: AccessKey,
        agent: oneConnection,
      });
      assert.equal(again.status, 401, "refused on the connection it was used on");
      for (const name of V4_SERVERS) {
        const refused = await hello(server, name, AccessKey);
        assert.equal(refused.status, 401, `${name}: ${refused.text}`);
        assert.equal(refused.json.ResponseStatus.Errors[0].ErrorCode, "2017");
      }
      const legacy = await send(server.ports.LEGACY, "POST", "/world/apiv3/anything", { body: { apikey: AccessKey } });
      assert.equal(legacy.json.error.title, "Revoked apikey");
    } finally {
      busy = false;
      await Promise.all(others);
      agent.destroy();
      oneConnection.destroy();
    }
    assert.ok(answered.length > 0);
    assert.deepEqual(new Set(answered), new Set([200]));
    assert.deepEqual(await server.stop("SIGTERM"), { code: 0, signal: null });
    assert.ok(!server.stdout().includes(AccessKey), "the key is not logged");
  });
});

describe("NODE_ENV=production", () => {
  test("the sandbox is off: SetClock is an unknown operation", async () => {
    const server = await startServer({ env: { BOOTSTRAP_ADMIN_KEY: CHOSEN_KEY, NODE_ENV: "production" } });
    const hidden = await send(server.ports.WL, "POST", "/Sandbox/SetClock", {
      key: CHOSEN_KEY,
      body: { Now: "2030-01-02T03:04:05Z" },
    });
    assert.equal(hidden.status, 404, hidden.text);
    assert.equal(hidden.json.Results, null);
    assert.equal(hidden.json.ResponseStatus.ErrorCode, "404");
    assert.equal(hidden.json.ResponseStatus.Message, "NotFound");
    assert.equal(hidden.json.ResponseStatus.Errors[0].ErrorCode, "1004");
    const greeting = await hello(server, "WL", CHOSEN_KEY);
    assert.equal(greeting.status, 200);
    assert.deepEqual(await server.stop("SIGTERM"), { code: 0, signal: null });
    assert.equal(jsonLines(server.stdout()).find((log) => log.msg === "strategy-hub started")?.sandbox, false);
  });
});

describe("the migrate command", () => {
  test("applies the migrations once, then nothing", async () => {
    const dataDir = tempDataDir();
    const migrate = async () => {
      const proc = spawnBuilt("store/migrate-cli", { ...baseEnv(), DATA_DIR: dataDir });
      const exit = await withinTimeout(proc.exited, 30_000, "migrate");
      assert.deepEqual(exit, { code: 0, signal: null }, proc.stderr());
      const lines = proc
        .stdout()
        .split("\n")
        .filter((line) => line !== "");
      assert.equal(lines.length, 1, proc.stdout());
      return JSON.parse(lines[0] as string);
    };
    const first = await migrate();
    assert.equal(first.storage, "sqlite");
    assert.ok(Array.isArray(first.applied) && first.applied.length > 0);
    assert.ok(first.applied.includes("0001_platform"));
    assert.deepEqual(await migrate(), { storage: "sqlite", applied: [] });
  });
});

describe("DEMO=1", () => {
  test("fills an empty database, logging its progress, and prints keys that work on stderr; a second start skips it", async () => {
    const server = await startServer({ env: { DEMO: "1" } });
    // The log is written in batches (every 20 ms): its last lines may follow the ports' opening.
    await waitFor(() => server.stdout().includes('"demo data: done"'), "the demo's last progress line");
    const out = server.stderr();
    assert.match(out, /Demo data created/);
    const progress = jsonLines(server.stdout())
      .map((log) => log.msg)
      .filter((msg) => msg.startsWith("demo data: "));
    assert.ok(progress.includes("demo data: sites and their administrators"), progress.join("\n"));
    assert.ok(
      progress.some((msg) => /^demo data: trading \d{4}-\d{2}$/.test(msg)),
      progress.join("\n"),
    );
    assert.equal(progress.at(-1), "demo data: done");
    const line = out.split("\n").find((l) => l.includes("admin@alpine.demo.example"));
    const key = line?.trim().split(/\s+/).at(-1) as string;
    const members = await send(server.ports.WL, "GET", "/General/GetWhiteLabelSiteUsers", { key });
    assert.equal(members.status, 200, members.text);
    assert.ok(members.json.Results.some((m: { Alias: string | null }) => m.Alias === "anna.m"));
    assert.deepEqual(await server.stop("SIGTERM"), { code: 0, signal: null });

    const again = await startServer({ dataDir: server.dataDir, env: { DEMO: "1" } });
    await waitFor(() => again.stdout().includes('"demo data skipped"'), "the demo's skipping line");
    assert.doesNotMatch(again.stderr(), /Demo data created/);
    assert.ok(jsonLines(again.stdout()).some((log) => log.msg === "demo data skipped"));
    assert.deepEqual(await again.stop("SIGTERM"), { code: 0, signal: null });
  });
});

if (process.env.DATABASE_URL) {
  describe("on PostgreSQL (DATABASE_URL)", () => {
    test("the service migrates a fresh schema, answers with the chosen key, and stops cleanly", async () => {
      const fresh = await freshStorage("postgres");
      try {
        const server = await startServer({ env: { ...fresh.env, BOOTSTRAP_ADMIN_KEY: CHOSEN_KEY } });
        for (const name of V4_SERVERS) {
          const response = await hello(server, name, CHOSEN_KEY);
          assert.equal(response.status, 200, `${name}: ${response.text}`);
          assert.deepEqual(response.json, HELLO_BOB);
        }
        assert.deepEqual(await server.stop("SIGTERM"), { code: 0, signal: null });
        const started = jsonLines(server.stdout()).find((log) => log.msg === "strategy-hub started");
        assert.equal(started?.storage, "postgres");
        const url = new URL(process.env.DATABASE_URL as string);
        const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(fresh.storage.db))
          .rows[0]?.schema;
        assert.deepEqual(started?.location, {
          host: url.hostname,
          port: url.port || "5432",
          database: url.pathname.slice(1),
          schema,
        });
        assert.ok(url.password === "" || !server.stdout().includes(url.password), "no password in the log");
        const admins = await fresh.storage.db.selectFrom("persons").select("role").execute();
        assert.deepEqual(admins, [{ role: "admin" }]);
      } finally {
        await fresh.dispose();
      }
    });
  });
}
