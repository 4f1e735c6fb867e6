import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  BACKENDS,
  type Population,
  populate,
  startTestService,
  statementsDuring,
  type TestService,
} from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`legacy v3 throttle (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let machineTime = Date.parse("2026-03-02T15:00:00Z");
    before(async () => {
      service = await startTestService(backend, {
        rateLimit: { max: 2, windowSeconds: 60 },
        legacyRateLimit: { max: 3, windowSeconds: 60 },
        systemNow: () => machineTime,
      });
      population = await populate(service);
    });
    after(() => service.close());

    const legacy = (body: Record<string, unknown>, query?: Record<string, string>) =>
      service.call("LEGACY", "POST", "/world/apiv3/listAllSystems", { key: null, body, ...(query ? { query } : {}) });
    const titles = async (times: number, body: Record<string, unknown>) => {
      const seen: string[] = [];
      for (let i = 0; i < times; i++) {
        const r = await legacy(body);
        seen.push(r.json.ok === 1 ? "ok" : r.json.error.title);
      }
      return seen;
    };

    test("past its budget a key is answered 429, ok 0, 'Too many requests' and Retry-After", async () => {
      const apikey = population.keys.personA;
      assert.deepEqual(await titles(3, { apikey }), ["ok", "ok", "ok"]);
      machineTime += 45_000;
      const limited = await legacy({ apikey });
      assert.equal(limited.status, 429);
      assert.equal(limited.headers["retry-after"], "15");
      assert.match(String(limited.headers["content-type"]), /application\/json/);
      assert.deepEqual(limited.json, {
        ok: 0,
        error: {
          title: "Too many requests",
          message: "At most 3 requests a window per apikey; retry in 15 seconds",
        },
      });
      assert.deepEqual(await titles(1, { apikey: population.keys.personB }), ["ok"], "another key has its own budget");
      machineTime += 15_000;
      assert.deepEqual(await titles(1, { apikey }), ["ok"], "the next window");
    });

    test("the legacy budget is the legacy server's own: a key exhausted on v4 still answers on v3, and back", async () => {
      const apikey = population.keys.wlAdminA;
      for (const expected of [200, 200, 429]) {
        const r = await service.call("WL", "POST", "/General/Hello", { key: apikey, body: {} });
        assert.equal(r.status, expected);
      }
      assert.deepEqual(await titles(4, { apikey }), ["ok", "ok", "ok", "Too many requests"]);
      machineTime += 60_000;
      assert.deepEqual(await titles(4, { apikey }), ["ok", "ok", "ok", "Too many requests"]);
      const v4 = await service.call("WL", "POST", "/General/Hello", { key: apikey, body: {} });
      assert.equal(v4.status, 200, "v4 counts apart");
    });

    test("the limit comes before the key is looked up: unknown keys are counted, missing and malformed ones by address", async () => {
      machineTime += 60_000;
      const unknown = "a-key-nobody-was-ever-given-0000";
      assert.deepEqual(await titles(4, { apikey: unknown }), [
        "Invalid apikey",
        "Invalid apikey",
        "Invalid apikey",
        "Too many requests",
      ]);
      assert.deepEqual(await titles(2, {}), ["Missing apikey", "Missing apikey"]);
      assert.deepEqual(await titles(2, { apikey: "short" }), ["Invalid apikey", "Too many requests"]);
      const inQuery = await legacy({}, { apikey: population.keys.personB });
      assert.equal(inQuery.json.ok, 1, "a key in the query string has a budget of its own");
    });

    test("made-up keys, one per request, are throttled per address before any storage read; a known key keeps its own budget", async () => {
      machineTime += 60_000;
      const madeUp = () => `made-up-key-${randomBytes(16).toString("hex")}`;
      // Keys that fail spend the address's budget for failing keys (the legacy budget, 3 here).
      for (let i = 0; i < 3; i++) assert.equal((await legacy({ apikey: madeUp() })).json.error.title, "Invalid apikey");
      const reads = await statementsDuring(service, async () => {
        for (let i = 0; i < 4; i++) {
          const r = await legacy({ apikey: madeUp() });
          assert.deepEqual([r.status, r.json.ok, r.json.error.title], [429, 0, "Too many requests"]);
          assert.ok(Number(r.headers["retry-after"]) > 0);
        }
      });
      assert.equal(reads, 0, "no key was read from storage for the throttled requests");
      assert.equal((await legacy({ apikey: population.keys.personA })).json.ok, 1);
    });
  });
}
