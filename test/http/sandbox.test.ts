import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { createApp } from "../../src/app.js";
import { createKey } from "../../src/services/keys.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`sandbox clock (${backend})`, () => {
    let service: TestService;
    let population: Population;
    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
    });
    after(() => service.close());

    test("SetClock stands the service clock still at Now; AdvanceClock moves it", async () => {
      const set = await service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: "2026-03-02T14:30:00Z" } });
      assert.equal(set.status, 200);
      assert.deepEqual(set.json.Results, [{ Now: "2026-03-02T14:30:00.000Z" }]);
      assert.equal(service.app.runtime.clock.now().toISOString(), "2026-03-02T14:30:00.000Z");
      const advanced = await service.call("GEO", "POST", "/Sandbox/AdvanceClock", { body: { Seconds: "90.5" } });
      assert.equal(advanced.status, 200);
      assert.deepEqual(advanced.json.Results, [{ Now: "2026-03-02T14:31:30.500Z" }]);
      const withOffset = await service.call("GEN", "POST", "/Sandbox/SetClock", {
        body: { now: "2026-03-02T09:30:00-05:00" },
      });
      assert.deepEqual(withOffset.json.Results, [{ Now: "2026-03-02T14:30:00.000Z" }]);
    });

    test("domain time follows the clock: a key expires when the clock passes its expiry", async () => {
      await service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: "2026-05-01T00:00:00Z" } });
      const key = await createKey(service.app.runtime, {
        personId: population.people.personA,
        expiresAt: new Date("2026-05-01T01:00:00Z"),
      });
      const created = await service.call("WL", "GET", "/General/GetAccessKey", { key: key.accessKey });
      assert.equal(created.json.Results[0].CreateDate, "2026-05-01T00:00:00.000Z");
      await service.call("WL", "POST", "/Sandbox/AdvanceClock", { body: { Seconds: 3599 } });
      assert.equal((await service.call("WL", "GET", "/General/GetAccessKey", { key: key.accessKey })).status, 200);
      await service.call("WL", "POST", "/Sandbox/AdvanceClock", { body: { Seconds: 1 } });
      const expired = await service.call("WL", "GET", "/General/GetAccessKey", { key: key.accessKey });
      assert.equal(expired.status, 401);
      assert.equal(expired.json.ResponseStatus.Errors[0].ErrorCode, "2016");
    });

    test("only service admins may use the sandbox", async () => {
      for (const who of ["wlAdminA", "geoAdmin", "personA"] as const) {
        for (const server of ["WL", "GEN", "GEO"] as const) {
          const r = await service.call(server, "POST", "/Sandbox/SetClock", {
            key: population.keys[who],
            body: { Now: "2030-01-01T00:00:00Z" },
          });
          assert.equal(r.status, 403, `${who} on ${server}`);
        }
      }
      assert.notEqual(service.app.runtime.clock.now().getUTCFullYear(), 2030);
    });

    test("bad clock input is a 400 and changes nothing", async () => {
      const before = service.app.runtime.clock.nowMs();
      for (const body of [{ Now: "yesterday" }, { Now: "2026-13-45T00:00:00Z" }, { Now: 5 }, { Now: "" }]) {
        const r = await service.call("WL", "POST", "/Sandbox/SetClock", { body });
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(r.json.ResponseStatus.Errors[0].FieldName, "Now");
      }
      for (const body of [{ Seconds: -1 }, { Seconds: "soon" }, {}]) {
        const r = await service.call("WL", "POST", "/Sandbox/AdvanceClock", { body });
        assert.equal(r.status, 400, JSON.stringify(body));
      }
      assert.equal(service.app.runtime.clock.nowMs(), before);
    });

    test("SetQuote sets a symbol's quote by hand, in its canonical symbol", async () => {
      await service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: "2026-03-02T15:00:00Z" } });
      const r = await service.call("GEN", "POST", "/Sandbox/SetQuote", {
        body: { Symbol: "esm26", Bid: "4500.25", Ask: 4500.5, Last: 4500.25, AskSize: 3 },
      });
      assert.equal(r.status, 400, "without @ a futures symbol is not recognised");
      const ok = await service.call("GEN", "POST", "/Sandbox/SetQuote", {
        body: { Symbol: "@esm26", Bid: "4500.25", Ask: 4500.5, Last: 4500.25, AskSize: 3 },
      });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.json.Results, [
        {
          Symbol: "@ESM26",
          Bid: 4500.25,
          Ask: 4500.5,
          Last: 4500.25,
          BidSize: null,
          AskSize: 3,
          Time: "2026-03-02T15:00:00.000Z",
        },
      ]);
      const { fromServiceSymbol } = await import("../../src/core/symbols/instrument.js");
      const quote = service.app.market.quote(fromServiceSymbol("@ESM26") as never);
      assert.equal(quote?.askSize, 300_000_000n);
    });

    test("SetQuote refuses unknown symbols and crossed quotes", async () => {
      const unknown = await service.call("WL", "POST", "/Sandbox/SetQuote", {
        body: { Symbol: "NOTASYMBOL1", Bid: 1, Ask: 2, Last: 1 },
      });
      assert.equal(unknown.status, 400);
      assert.deepEqual(
        [unknown.json.ResponseStatus.Errors[0].ErrorCode, unknown.json.ResponseStatus.Errors[0].FieldName],
        ["1121", "Symbol"],
      );
      const crossed = await service.call("WL", "POST", "/Sandbox/SetQuote", {
        body: { Symbol: "AAPL", Bid: 2, Ask: 1, Last: 1 },
      });
      assert.equal(crossed.status, 400);
      assert.equal(crossed.json.ResponseStatus.Errors[0].FieldName, "Ask");
      for (const body of [
        { Symbol: "AAPL", Bid: 0, Ask: 1, Last: 1 },
        { Symbol: "AAPL", Bid: 1, Ask: 1 },
        { Symbol: "AAPL", Bid: 1, Ask: 1, Last: 1, BidSize: -5 },
      ]) {
        const r = await service.call("WL", "POST", "/Sandbox/SetQuote", { body });
        assert.equal(r.status, 400, JSON.stringify(body));
      }
    });

    test("SetClock with Now null returns the clock to real time, and so it stays across a restart", async () => {
      const set = await service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: "2027-07-07T07:07:07Z" } });
      assert.equal(set.status, 200, set.text);
      const before = Date.now();
      const real = await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: null } });
      assert.equal(real.status, 200, real.text);
      const answered = Date.parse(real.json.Results[0].Now);
      assert.ok(answered >= before && answered <= Date.now(), `real time answered: ${real.json.Results[0].Now}`);
      assert.deepEqual(service.app.runtime.clock.setting, { kind: "system" });

      const restarted = await service.restart();
      try {
        assert.deepEqual(restarted.app.runtime.clock.setting, { kind: "system" });
        const from = Date.now();
        const now = restarted.app.runtime.clock.nowMs();
        assert.ok(now >= from && now <= Date.now(), "the clock follows the machine");
        // Omitted is the same as null (WIRE: null means "not given").
        await restarted.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: "2027-07-07T07:07:07Z" } });
        const omitted = await restarted.call("GEO", "POST", "/Sandbox/SetClock", { body: {} });
        assert.equal(omitted.status, 200, omitted.text);
        assert.deepEqual(restarted.app.runtime.clock.setting, { kind: "system" });
      } finally {
        service = restarted;
      }
    });

    test("the clock setting survives a restart", async () => {
      await service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: "2027-07-07T07:07:07Z" } });
      const restarted = await createApp({
        storage: service.storage,
        logger: pino({ level: "silent" }),
        systemNow: Date.now,
        sandbox: true,
        rateLimit: { max: 1000, windowSeconds: 60 },
        legacyRateLimit: { max: 1000, windowSeconds: 60 },
        bootstrapAdminKey: ADMIN_KEY,
      });
      try {
        assert.equal(restarted.runtime.clock.now().toISOString(), "2027-07-07T07:07:07.000Z");
      } finally {
        await restarted.close();
      }
    });
  });

  describe(`production mode has no sandbox (${backend})`, () => {
    let service: TestService;
    before(async () => {
      service = await startTestService(backend, { sandbox: false });
    });
    after(() => service.close());

    test("sandbox operations are absent on every server, even for admins", async () => {
      for (const server of ["WL", "GEN", "GEO"] as const) {
        for (const path of ["/Sandbox/SetClock", "/Sandbox/AdvanceClock", "/Sandbox/SetQuote"]) {
          const r = await service.call(server, "POST", path, { body: { Now: "2030-01-01T00:00:00Z", Seconds: 1 } });
          assert.equal(r.status, 404, `${server} ${path}`);
          assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1004");
        }
        const doc = await service.call(server, "GET", "/openapi.json");
        assert.equal(
          Object.keys(doc.json.paths).some((p) => p.startsWith("/Sandbox")),
          false,
        );
      }
    });
  });
}
