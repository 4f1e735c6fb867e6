import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { keyCacheOf } from "../../src/services/key-cache.js";
import {
  BACKENDS,
  type Population,
  populate,
  startTestService,
  statementsDuring,
  type TestService,
  until,
} from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`rate limits (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let machineTime = Date.parse("2026-03-02T15:00:00Z");
    before(async () => {
      service = await startTestService(backend, {
        rateLimit: { max: 3, windowSeconds: 60 },
        systemNow: () => machineTime,
      });
      population = await populate(service);
    });
    after(() => service.close());

    test("every response carries the X-Limit headers, and past the limit comes 429 with Retry-After", async () => {
      const key = population.keys.personA;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await service.call("WL", "POST", "/General/Hello", { key, body: { Name: "x" } });
        statuses.push(r.status);
        assert.equal(r.headers["x-limit-limit"], "3");
        assert.equal(r.headers["x-limit-type"], "key");
        assert.equal(r.headers["x-limit-remaining"], String(Math.max(0, 2 - i)));
        assert.equal(r.headers["x-limit-reset"], "60");
        if (r.status === 429) {
          assert.equal(r.headers["retry-after"], "60");
          assert.equal(r.json.ResponseStatus.ErrorCode, "429");
          assert.equal(r.json.ResponseStatus.Message, "TooManyRequests");
          assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1003");
        }
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
    });

    test("the limit is per key and shared by the three servers", async () => {
      const key = population.keys.personB;
      assert.equal((await service.call("WL", "POST", "/General/Hello", { key, body: {} })).status, 200);
      assert.equal((await service.call("GEN", "POST", "/General/Hello", { key, body: {} })).status, 200);
      assert.equal((await service.call("GEO", "GET", "/General/GetAccessKey", { key })).status, 200);
      const fourth = await service.call("GEN", "GET", "/General/GetAccessKey", { key });
      assert.equal(fourth.status, 429);
      const other = await service.call("GEN", "GET", "/General/GetAccessKey", { key: population.keys.wlAdminA });
      assert.equal(other.status, 200, "another key has its own budget");
    });

    test("the window resets: Retry-After counts down and then requests pass again", async () => {
      const key = population.keys.wlAdminB;
      for (let i = 0; i < 3; i++) await service.call("WL", "POST", "/General/Hello", { key, body: {} });
      machineTime += 45_000;
      const limited = await service.call("WL", "POST", "/General/Hello", { key, body: {} });
      assert.equal(limited.status, 429);
      assert.equal(limited.headers["retry-after"], "15");
      machineTime += 15_000;
      const again = await service.call("WL", "POST", "/General/Hello", { key, body: {} });
      assert.equal(again.status, 200);
      assert.equal(again.headers["x-limit-remaining"], "2");
    });

    test("requests without a valid key are limited per address and still carry the headers", async () => {
      machineTime += 120_000;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await service.call("GEO", "GET", "/General/GetAccessKey", { key: null });
        statuses.push(r.status);
        assert.equal(r.headers["x-limit-type"], "ip");
        assert.ok(r.headers["x-limit-remaining"] !== undefined);
      }
      assert.deepEqual(statuses, [401, 401, 401, 429]);
      const unknownOperation = await service.call("GEO", "GET", "/General/Nothing", { key: population.keys.geoAdmin });
      assert.equal(unknownOperation.status, 404);
      assert.equal(unknownOperation.headers["x-limit-limit"], "3");
    });

    test("a flood of made-up keys is throttled per address before any storage read; a known key keeps its own budget", async () => {
      // A key is known without a read once the process's key cache keeps it: on PostgreSQL only
      // after its listener runs, which may come after the key was last used under a busy machine.
      await until(() => keyCacheOf(service.storage).keeping);
      await service.call("WL", "GET", "/General/GetAccessKey", { key: population.keys.personA });
      machineTime += 120_000;
      const madeUp = () => `made-up-key-${randomBytes(16).toString("hex")}`;
      for (let i = 0; i < 3; i++) {
        const r = await service.call("WL", "GET", "/General/GetAccessKey", { key: madeUp() });
        assert.equal(r.status, 401);
        assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "2015");
      }
      const reads = await statementsDuring(service, async () => {
        for (let i = 0; i < 5; i++) {
          const r = await service.call("WL", "GET", "/General/GetAccessKey", { key: madeUp() });
          assert.equal(r.status, 429);
          assert.equal(r.headers["x-limit-type"], "ip");
          assert.equal(r.headers["retry-after"], "60");
          assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1003");
        }
      });
      assert.equal(reads, 0, "no key was read from storage for the throttled requests");
      const known = await service.call("WL", "GET", "/General/GetAccessKey", { key: population.keys.personA });
      assert.equal(known.status, 200);
      assert.equal(known.headers["x-limit-type"], "key");
      assert.equal(known.headers["x-limit-remaining"], "2");
    });
  });
}
