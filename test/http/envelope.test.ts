import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { anyCaller } from "../../src/core/access.js";
import { refuse } from "../../src/core/errors.js";
import { defineOperation } from "../../src/http/v4/operation.js";
import { probeServer } from "../helpers/probe.js";
import { ADMIN_KEY, BACKENDS, startTestService, type TestService } from "../helpers/service.js";

/** Operations that exist only in this test, to reach the statuses no real operation of this issue produces. */
const probes = [
  defineOperation({
    id: "ProbeConflict",
    method: "POST",
    path: "/Probe/Conflict",
    servers: ["WL"],
    summary: "Always refuses with a conflict carrying Meta.",
    input: Type.Object({}),
    result: Type.String(),
    permission: anyCaller,
    paginated: false,
    handler: async () => {
      throw refuse("AlreadyExists", { field: "Thing", message: "Already subscribed", meta: { SubscriptionId: 12 } });
    },
  }),
  defineOperation({
    id: "ProbeCrash",
    method: "GET",
    path: "/Probe/Crash",
    servers: ["WL"],
    summary: "Fails unexpectedly.",
    input: Type.Object({}),
    result: Type.String(),
    permission: anyCaller,
    paginated: false,
    handler: async () => {
      throw new Error("secret internal detail at /srv/db.ts:42");
    },
  }),
  defineOperation({
    id: "ProbeStart",
    method: "POST",
    path: "/Probe/Start",
    servers: ["WL", "GEN", "GEO"],
    summary: "Answers a bare boolean on GEN and GEO, the envelope on WL (as StartAutotrade does).",
    input: Type.Object({}),
    result: Type.Boolean(),
    permission: anyCaller,
    bareBooleanOn: ["GEN", "GEO"],
    paginated: false,
    handler: async () => [true],
  }),
];

for (const backend of BACKENDS) {
  describe(`v4 envelope and error shapes (${backend})`, () => {
    let service: TestService;
    let probe: FastifyInstance;
    before(async () => {
      service = await startTestService(backend);
      probe = await probeServer(service, probes);
    });
    after(async () => {
      await probe.close();
      await service.close();
    });

    test("success: Results and the exact ResponseStatus clients check", async () => {
      const r = await service.call("WL", "POST", "/General/Hello", { body: { Name: "Bob" } });
      assert.equal(r.status, 200);
      assert.match(String(r.headers["content-type"]), /application\/json/);
      assert.deepEqual(r.json, {
        Results: ["Hello, Bob!"],
        ResponseStatus: { ErrorCode: "200", Message: "OK", Errors: [] },
      });
    });

    test("400: validation failure names the field with a stable code", async () => {
      const r = await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { body: {} });
      assert.equal(r.status, 400);
      assert.deepEqual(r.json, {
        Results: null,
        ResponseStatus: {
          ErrorCode: "400",
          Message: "BadRequest",
          Errors: [{ ErrorCode: "1102", FieldName: "Seconds", Message: "Seconds is required", Meta: {} }],
          Meta: {},
        },
      });
    });

    test("401: no key", async () => {
      const r = await service.call("GEO", "POST", "/General/Hello", { key: null, body: {} });
      assert.equal(r.status, 401);
      assert.equal(r.json.ResponseStatus.ErrorCode, "401");
      assert.equal(r.json.ResponseStatus.Message, "Unauthorized");
      assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1001");
      assert.equal(r.json.Results, null);
    });

    test("403: a role the operation does not allow", async () => {
      const runtime = service.app.runtime;
      const { createPerson } = await import("../../src/services/people.js");
      const { createKey } = await import("../../src/services/keys.js");
      const { personId } = await createPerson(runtime, {
        email: `plain-${backend}@example.com`,
        firstName: "Plain",
        lastName: "Person",
        role: "person",
      });
      const { accessKey } = await createKey(runtime, { personId });
      const r = await service.call("WL", "POST", "/Sandbox/AdvanceClock", { key: accessKey, body: { Seconds: 1 } });
      assert.equal(r.status, 403);
      assert.equal(r.json.ResponseStatus.ErrorCode, "403");
      assert.equal(r.json.ResponseStatus.Message, "Forbidden");
      assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1002");
    });

    test("404: an operation the server does not have", async () => {
      const r = await service.call("GEN", "GET", "/General/GetWhiteLabelSiteUsers");
      assert.equal(r.status, 404);
      assert.equal(r.json.ResponseStatus.ErrorCode, "404");
      assert.equal(r.json.ResponseStatus.Message, "NotFound");
      assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1004");
    });

    test("404: an object that does not exist", async () => {
      const r = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", {
        query: { WhiteLabelSiteId: "999999" },
      });
      assert.equal(r.status, 404);
      assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "2013");
      assert.equal(r.json.ResponseStatus.Errors[0].FieldName, "WhiteLabelSiteId");
    });

    test("409: a conflict carries Meta with machine-readable detail", async () => {
      const r = await probe.inject({
        method: "POST",
        url: "/Probe/Conflict",
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: "{}",
      });
      assert.equal(r.statusCode, 409);
      const body = r.json();
      assert.equal(body.ResponseStatus.ErrorCode, "409");
      assert.equal(body.ResponseStatus.Message, "Conflict");
      assert.deepEqual(body.ResponseStatus.Errors, [
        { ErrorCode: "1201", FieldName: "Thing", Message: "Already subscribed", Meta: { SubscriptionId: 12 } },
      ]);
    });

    test("500: no internals leak", async () => {
      const r = await probe.inject({
        method: "GET",
        url: "/Probe/Crash",
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      assert.equal(r.statusCode, 500);
      assert.doesNotMatch(r.body, /secret|srv|stack|at /);
      const body = r.json();
      assert.equal(body.ResponseStatus.ErrorCode, "500");
      assert.equal(body.ResponseStatus.Message, "InternalServerError");
      assert.equal(body.ResponseStatus.Errors[0].ErrorCode, "1500");
    });

    test("operations declared bare-boolean answer a bare true on GEN and GEO, the envelope on WL", async () => {
      for (const server of ["WL", "GEN", "GEO"] as const) {
        const instance = server === "WL" ? probe : await probeServer(service, probes, server);
        try {
          const r = await instance.inject({
            method: "POST",
            url: "/Probe/Start",
            headers: { authorization: `Bearer ${ADMIN_KEY}` },
            payload: "{}",
          });
          assert.equal(r.statusCode, 200);
          if (server === "WL") assert.deepEqual(r.json().Results, [true]);
          else assert.equal(r.body, "true");
          const document = await instance.inject({ method: "GET", url: "/openapi.json" });
          const schema = document.json().paths["/Probe/Start"].post.responses["200"].content["application/json"].schema;
          assert.equal(schema.type, server === "WL" ? "object" : "boolean");
        } finally {
          if (instance !== probe) await instance.close();
        }
      }
    });

    test("the request id is echoed, and a sane one from the client is kept", async () => {
      const r = await service.call("WL", "POST", "/General/Hello", {
        body: {},
        headers: { "x-request-id": "abc-123" },
      });
      assert.equal(r.headers["x-request-id"], "abc-123");
      const generated = await service.call("WL", "POST", "/General/Hello", { body: {} });
      assert.match(String(generated.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
    });
  });
}
