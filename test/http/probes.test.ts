import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { V4_SERVERS } from "../../src/http/v4/operation.js";
import { BACKENDS, populate, setClock, startTestService, type TestService } from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/** GET /healthz, /readyz and /metrics on the three v4 servers: no key, no rate limit, not API operations. */

/** The value of one series in a Prometheus text exposition, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

for (const backend of BACKENDS) {
  describe(`health, readiness and metrics (${backend})`, () => {
    let service: TestService;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      key = (await populate(service)).keys.personA;
    });
    after(() => service.close());

    const metrics = async (server: "WL" | "GEN" | "GEO" = "GEN") => {
      const r = await service.call(server, "GET", "/metrics", { key: null });
      assert.equal(r.status, 200, r.text);
      assert.match(String(r.headers["content-type"]), /^text\/plain; version=0\.0\.4/);
      return r.text;
    };

    test("healthz and readyz answer on every v4 server without a key, outside the rate limit", async () => {
      for (const server of V4_SERVERS) {
        const health = await service.call(server, "GET", "/healthz", { key: null });
        assert.equal(health.status, 200, health.text);
        assert.deepEqual(health.json, { status: "ok" });
        assert.equal(health.headers["x-limit-remaining"], undefined, "not counted against the rate limit");
        const ready = await service.call(server, "GET", "/readyz", { key: null });
        assert.equal(ready.status, 200, ready.text);
        assert.deepEqual(ready.json, {
          status: "ready",
          checks: { storage: "ok", migrations: "ok", journal: "ok", fillLoop: "ok" },
        });
        const document = await service.call(server, "GET", "/openapi.json", { key: null });
        for (const path of ["/healthz", "/readyz", "/metrics"]) {
          assert.equal(document.json.paths[path], undefined, `${path} is no API operation`);
        }
      }
    });

    test("requests are counted by server, operation and status, never by raw URL", async () => {
      const before = await metrics("WL");
      const hello = 'http_requests_total{server="WL",operation="Hello",status="200"}';
      for (let i = 0; i < 3; i++) {
        const r = await service.call("WL", "POST", `/General/Hello?attempt=${i}`, { body: { Name: "Bob" } });
        assert.equal(r.status, 200, r.text);
      }
      await service.call("WL", "POST", "/General/Hello", { key: "no-such-key-0123456789abcdef", body: { Name: "B" } });
      await service.call("WL", "GET", "/No/Such/Operation/42", { key: null });
      const after = await metrics("WL");
      assert.equal(sample(after, hello) - sample(before, hello), 3);
      assert.equal(
        sample(after, 'http_requests_total{server="WL",operation="Hello",status="401"}') -
          sample(before, 'http_requests_total{server="WL",operation="Hello",status="401"}'),
        1,
      );
      assert.ok(sample(after, 'http_requests_total{server="WL",operation="unknown",status="404"}') >= 1);
      assert.equal(
        sample(after, 'http_request_duration_seconds_count{server="WL",operation="Hello",status="200"}'),
        sample(after, hello),
      );
      assert.equal(
        sample(after, 'http_request_duration_seconds_bucket{server="WL",operation="Hello",status="200",le="+Inf"}'),
        sample(after, hello),
      );
      assert.doesNotMatch(after, /attempt=|No\/Such/, "no raw URL in a label");
      assert.doesNotMatch(after, /operation="(Healthz|\/healthz|\/metrics|\/readyz)"/, "probes are not counted");
    });

    test("an order moves the orders, fills, commit latency and fill-loop metrics", async () => {
      await setClock(service, MARKET_OPEN);
      const before = await metrics();
      await setQuote(service, "AAPL", 200, 200.05);
      const strategyId = await newStrategy(service, key);
      await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 10));
      const after = await metrics();
      assert.equal(sample(after, "orders_placed_total") - sample(before, "orders_placed_total"), 1);
      assert.equal(sample(after, "fills_total") - sample(before, "fills_total"), 1);
      assert.ok(
        sample(after, "storage_commit_duration_seconds_count") >
          sample(before, "storage_commit_duration_seconds_count"),
      );
      assert.ok(sample(after, "fill_loop_quotes_processed_total") > sample(before, "fill_loop_quotes_processed_total"));
      assert.ok(sample(after, "fill_loop_lag_seconds") >= 0);
      assert.match(after, /^outbox_lag_events\{consumer="records"\} \d+$/m);
      assert.match(
        after,
        /^http_requests_total\{server="GEN",operation="NewStrategyOrder",status="200"\} 1$/m,
        "the order counted under its operation",
      );
    });

    test("readyz answers 503 naming the check that failed: migrations not at the latest, a fill loop stopped", async () => {
      const [latest] = (
        await sql<{ name: string }>`select name from kysely_migration order by name desc limit 1`.execute(
          service.storage.db,
        )
      ).rows as [{ name: string }];
      await sql`delete from kysely_migration where name = ${latest.name}`.execute(service.storage.db);
      try {
        const r = await service.call("GEO", "GET", "/readyz", { key: null });
        assert.equal(r.status, 503, r.text);
        assert.deepEqual(r.json, {
          status: "not ready",
          checks: { storage: "ok", migrations: `pending: ${latest.name}`, journal: "ok", fillLoop: "ok" },
        });
      } finally {
        await sql`insert into kysely_migration (name, timestamp) values (${latest.name}, ${new Date().toISOString()})`.execute(
          service.storage.db,
        );
      }
      assert.equal((await service.call("GEO", "GET", "/readyz", { key: null })).status, 200);

      await service.app.fillLoop.stop();
      const stopped = await service.call("WL", "GET", "/readyz", { key: null });
      assert.equal(stopped.status, 503, stopped.text);
      assert.equal(stopped.json.checks.fillLoop, "not running");
      assert.equal((await service.call("WL", "GET", "/healthz", { key: null })).status, 200, "still alive");
    });
  });

  describe(`a fill loop that stops catching up (${backend})`, () => {
    test("readyz answers 503 once the loop has not caught up for 10 ticks of machine time", async () => {
      // An hour's tick never fires during the test; the machine's time is moved instead.
      let offsetMs = 0;
      const service = await startTestService(backend, {
        fillLoopTickMs: 3_600_000,
        systemNow: () => Date.now() + offsetMs,
      });
      try {
        assert.equal((await service.call("WL", "GET", "/readyz", { key: null })).status, 200);
        offsetMs = 10 * 3_600_000 + 60_000;
        const stale = await service.call("WL", "GET", "/readyz", { key: null });
        assert.equal(stale.status, 503, stale.text);
        assert.match(stale.json.checks.fillLoop, /^last caught up 3606\d s ago \(limit 36000 s\)$/);
        const scraped = await service.call("WL", "GET", "/metrics", { key: null });
        assert.ok(sample(scraped.text, "fill_loop_lag_seconds") >= 36_060);
        // A catch-up (here one a sandbox clock move drives) makes it ready again.
        await service.call("WL", "POST", "/Sandbox/AdvanceClock", { body: { Seconds: 1 } });
        assert.equal((await service.call("WL", "GET", "/readyz", { key: null })).status, 200);
      } finally {
        await service.close();
      }
    });
  });

  describe(`readiness without storage (${backend})`, () => {
    test("readyz answers 503 when storage does not answer; healthz and metrics still answer", async () => {
      const service = await startTestService(backend, { rateLimit: { max: 1, windowSeconds: 60 } });
      try {
        for (let i = 0; i < 3; i++) {
          assert.equal((await service.call("GEN", "GET", "/healthz", { key: null })).status, 200, "never rate limited");
        }
        await service.storage.close();
        const r = await service.call("GEN", "GET", "/readyz", { key: null });
        assert.equal(r.status, 503, r.text);
        assert.equal(r.json.status, "not ready");
        assert.match(r.json.checks.storage, /^no answer/);
        assert.equal(r.json.checks.migrations, "not checked: storage does not answer");
        assert.equal(r.json.checks.journal, "not checked: storage does not answer");
        assert.equal((await service.call("GEN", "GET", "/healthz", { key: null })).status, 200);
        const scraped = await service.call("GEN", "GET", "/metrics", { key: null });
        assert.equal(scraped.status, 200, scraped.text);
        assert.doesNotMatch(scraped.text, /^outbox_lag_events\{/m, "no lag to tell without storage");
      } finally {
        await service.close();
      }
    });
  });
}
