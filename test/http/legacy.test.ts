import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { type LegacyCommand, LegacyFailure } from "../../src/http/legacy/command.js";
import { buildLegacyServer } from "../../src/http/legacy/server.js";
import { RateLimiter } from "../../src/http/rate-limit.js";
import { serviceLogger } from "../../src/log.js";
import { KeySessions } from "../../src/services/key-sessions.js";
import { createKey, revokeKey } from "../../src/services/keys.js";
import { createPlatform } from "../../src/services/sites.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";

/** What the OpenAPI document says of a probe: nothing in particular. */
const undescribed = { summary: "A probe", input: Type.Object({}), answer: Type.Object({}) };

/** Commands that exist only in this test, to show the shapes real commands will answer in. */
const probeCommands: LegacyCommand[] = [
  {
    name: "whoAmI",
    ...undescribed,
    contexts: ["world", "platform"],
    input: Type.Object({}),
    handler: async (ctx) => ({
      response: { personid: String(ctx.caller.personId), context: ctx.context, platform: ctx.platformId },
    }),
  },
  {
    name: "worldOnly",
    ...undescribed,
    contexts: ["world"],
    input: Type.Object({}),
    handler: async () => ({ response: [] }),
  },
  {
    name: "refuse",
    ...undescribed,
    contexts: ["world"],
    input: Type.Object({}),
    handler: async () => {
      throw new LegacyFailure("SignalTraded", "Signal 5 could not be canceled", { signal: { signalid: "5" } });
    },
  },
];

for (const backend of BACKENDS) {
  describe(`legacy v3 server (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let probe: FastifyInstance;
    let platformId: number;
    let platformKey: string;
    const send = async (
      server: FastifyInstance,
      method: "GET" | "POST",
      url: string,
      payload?: string,
      headers: Record<string, string> = {},
    ) => {
      const r = await server.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
      assert.match(String(r.headers["content-type"]), /application\/json/);
      return { status: r.statusCode, body: r.json() };
    };
    const legacy = () => service.app.servers.LEGACY;

    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
      platformId = (
        await createPlatform(service.app.runtime, { name: "Broker platform", whiteLabelSiteId: population.siteA })
      ).id;
      platformKey = (await createKey(service.app.runtime, { personId: population.people.wlAdminA, platformId }))
        .accessKey;
      probe = await buildLegacyServer({
        runtime: service.app.runtime,
        logger: pino({ level: "silent" }),
        commands: probeCommands,
        sessions: new KeySessions(),
        limiter: new RateLimiter({ max: 100_000, windowSeconds: 60 }, Date.now),
      });
    });
    after(async () => {
      await probe.close();
      await service.close();
    });

    test("an unknown command answers the error shape with HTTP 200", async () => {
      const r = await send(
        legacy(),
        "POST",
        "/world/apiv3/noSuchCommand",
        JSON.stringify({ apikey: population.keys.personA }),
      );
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, {
        ok: 0,
        error: { title: "Unknown command", message: "There is no command noSuchCommand" },
      });
    });

    test("the apikey travels in the body and must be valid", async () => {
      const cases: [unknown, string][] = [
        [{}, "Missing apikey"],
        [{ apikey: "" }, "Missing apikey"],
        [{ apikey: 12 }, "Missing apikey"],
        [{ apikey: "no" }, "Invalid apikey"],
        [{ apikey: "a-key-nobody-was-ever-given-0000" }, "Invalid apikey"],
        [{ apikey: population.keys.expired }, "Expired apikey"],
      ];
      for (const [body, title] of cases) {
        const r = await send(legacy(), "POST", "/world/apiv3/getSystemRoster", JSON.stringify(body));
        assert.equal(r.status, 200);
        assert.equal(r.body.ok, 0);
        assert.equal(r.body.error.title, title, JSON.stringify(body));
      }
      const key = await createKey(service.app.runtime, { personId: population.people.personB });
      await revokeKey(service.app.runtime, key.id);
      const revoked = await send(legacy(), "POST", "/world/apiv3/x", JSON.stringify({ apikey: key.accessKey }));
      assert.equal(revoked.body.error.title, "Revoked apikey");
    });

    test("a person's v4 key works on the legacy API: success is ok 1 with the command's fields", async () => {
      const r = await send(probe, "POST", "/world/apiv3/whoAmI", JSON.stringify({ apikey: population.keys.personA }));
      assert.deepEqual(r.body, {
        ok: 1,
        response: { personid: String(population.people.personA), context: "world", platform: null },
      });
    });

    test("commands are matched without regard to case", async () => {
      const r = await send(probe, "POST", "/world/apiv3/WHOAMI", JSON.stringify({ apikey: population.keys.personA }));
      assert.equal(r.body.ok, 1);
    });

    test("GET or POST, any Content-Type, or none; GET may carry the key in the query", async () => {
      const body = JSON.stringify({ apikey: population.keys.personA });
      for (const contentType of ["application/json", "text/plain", "application/x-www-form-urlencoded", ""]) {
        const headers: Record<string, string> = contentType ? { "content-type": contentType } : {};
        assert.equal((await send(probe, "POST", "/world/apiv3/whoAmI", body, headers)).body.ok, 1, contentType);
        assert.equal((await send(probe, "GET", "/world/apiv3/whoAmI", body, headers)).body.ok, 1, `GET ${contentType}`);
      }
      const query = await send(
        probe,
        "GET",
        `/world/apiv3/whoAmI?apikey=${encodeURIComponent(population.keys.personA)}`,
      );
      assert.equal(query.body.ok, 1);
    });

    test("the access log line of a request with the key in its query holds no key", async () => {
      const lines: string[] = [];
      const logged = await buildLegacyServer({
        runtime: service.app.runtime,
        logger: serviceLogger("info", { write: (line: string) => lines.push(line) }),
        commands: probeCommands,
        sessions: new KeySessions(),
        limiter: new RateLimiter({ max: 100_000, windowSeconds: 60 }, Date.now),
      });
      try {
        const key = population.keys.personA;
        for (const query of [
          `apikey=${encodeURIComponent(key)}&systemid=7`,
          `systemid=7&APIKEY=${encodeURIComponent(key)}`,
          `api%6Bey=${encodeURIComponent(key)}`,
        ]) {
          const r = await logged.inject({ method: "GET", url: `/world/apiv3/whoAmI?${query}` });
          assert.equal(r.statusCode, 200);
        }
        const access = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === "request");
        assert.deepEqual(
          access.map((line) => line.url),
          [
            "/world/apiv3/whoAmI?apikey=[redacted]&systemid=7",
            "/world/apiv3/whoAmI?systemid=7&APIKEY=[redacted]",
            "/world/apiv3/whoAmI?api%6Bey=[redacted]",
          ],
        );
        assert.ok(!lines.join("").includes(key), "no line holds the key");
      } finally {
        await logged.close();
      }
    });

    test("malformed JSON is a command-level failure, never a crash", async () => {
      for (const payload of ["{nope", "[1,2]", '"text"', "null"]) {
        const r = await send(probe, "POST", "/world/apiv3/whoAmI", payload, { "content-type": "application/json" });
        assert.equal(r.status, 200, payload);
        assert.equal(r.body.ok, 0);
        assert.ok(["Malformed request", "Missing apikey"].includes(r.body.error.title), payload);
      }
    });

    test("a body over 1 MiB answers 413 in the legacy shape and is not logged as an error", async () => {
      const lines: string[] = [];
      const logged = await buildLegacyServer({
        runtime: service.app.runtime,
        logger: serviceLogger("info", { write: (line: string) => lines.push(line) }),
        commands: probeCommands,
        sessions: new KeySessions(),
        limiter: new RateLimiter({ max: 100_000, windowSeconds: 60 }, Date.now),
      });
      try {
        const payload = JSON.stringify({ apikey: population.keys.personA, pad: "x".repeat(1024 * 1024) });
        for (const method of ["POST", "GET"] as const) {
          const r = await send(logged, method, "/world/apiv3/whoAmI", payload);
          assert.equal(r.status, 413, method);
          assert.deepEqual(r.body, {
            ok: 0,
            error: { title: "Request too large", message: "The request body is larger than 1 MiB" },
          });
        }
        const levels = lines.map((line) => JSON.parse(line).level);
        assert.ok(levels.length > 0 && levels.every((level) => level <= 30), `levels ${levels}`);
      } finally {
        await logged.close();
      }
    });

    test("a failure may carry fields beside error (the signal echo of 'Signal was traded')", async () => {
      const r = await send(probe, "POST", "/world/apiv3/refuse", JSON.stringify({ apikey: population.keys.personA }));
      assert.deepEqual(r.body, {
        ok: 0,
        signal: { signalid: "5" },
        error: { title: "Signal was traded", message: "Signal 5 could not be canceled" },
      });
    });

    test("platform context needs a key of that very platform", async () => {
      const url = `/platform/apiv3/${platformId}/whoAmI`;
      const world = await send(probe, "POST", url, JSON.stringify({ apikey: population.keys.wlAdminA }));
      assert.deepEqual(world.body.error.title, "Unable to access this platform");
      const wrongId = await send(
        probe,
        "POST",
        `/platform/apiv3/${platformId + 1}/whoAmI`,
        JSON.stringify({ apikey: platformKey }),
      );
      assert.deepEqual(wrongId.body.error.title, "Unable to access this platform");
      const notANumber = await send(
        probe,
        "POST",
        "/platform/apiv3/abc/whoAmI",
        JSON.stringify({ apikey: platformKey }),
      );
      assert.deepEqual(notANumber.body.error.title, "Unable to access this platform");
      const ok = await send(probe, "POST", url, JSON.stringify({ apikey: platformKey }));
      assert.deepEqual(ok.body, {
        ok: 1,
        response: { personid: String(population.people.wlAdminA), context: "platform", platform: platformId },
      });
    });

    test("a platform key also works in world context; world-only commands refuse platform context", async () => {
      const world = await send(probe, "POST", "/world/apiv3/whoAmI", JSON.stringify({ apikey: platformKey }));
      assert.equal(world.body.ok, 1);
      const platform = await send(
        probe,
        "POST",
        `/platform/apiv3/${platformId}/worldOnly`,
        JSON.stringify({ apikey: platformKey }),
      );
      assert.equal(platform.body.ok, 0);
      assert.equal(platform.body.error.title, "Wrong context");
    });

    test("other addresses answer 404 in the legacy shape", async () => {
      const r = await send(legacy(), "POST", "/apiv3/whoAmI", "{}");
      assert.equal(r.status, 404);
      assert.equal(r.body.ok, 0);
      assert.equal(r.body.error.title, "Unknown address");
    });
  });
}
