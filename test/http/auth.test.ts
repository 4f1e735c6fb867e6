import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey, revokeKey } from "../../src/services/keys.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`authentication and GetAccessKey (${backend})`, () => {
    let service: TestService;
    let population: Population;
    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
    });
    after(() => service.close());

    const errorOf = (r: { json: { ResponseStatus: { Errors: { ErrorCode: string }[] } } }) =>
      r.json.ResponseStatus.Errors[0]?.ErrorCode;

    test("401 without a key, with a malformed one, an unknown one and an expired one", async () => {
      for (const server of ["WL", "GEN", "GEO"] as const) {
        const none = await service.call(server, "GET", "/General/GetAccessKey", { key: null });
        assert.equal(none.status, 401);
        assert.equal(errorOf(none), "1001");
        const malformed = await service.call(server, "GET", "/General/GetAccessKey", { key: "short" });
        assert.equal(malformed.status, 401);
        assert.equal(errorOf(malformed), "2014");
        const unknown = await service.call(server, "GET", "/General/GetAccessKey", {
          key: "an-unknown-key-of-the-right-shape-000",
        });
        assert.equal(unknown.status, 401);
        assert.equal(errorOf(unknown), "2015");
        const expired = await service.call(server, "GET", "/General/GetAccessKey", { key: population.keys.expired });
        assert.equal(expired.status, 401);
        assert.equal(errorOf(expired), "2016");
      }
    });

    test("another scheme than Bearer is a malformed key; the scheme name is case-insensitive", async () => {
      const basic = await service.call("WL", "GET", "/General/GetAccessKey", {
        key: null,
        headers: { authorization: "Basic dXNlcjpwYXNz" },
      });
      assert.equal(basic.status, 401);
      assert.equal(errorOf(basic), "2014");
      const lower = await service.call("WL", "GET", "/General/GetAccessKey", {
        key: null,
        headers: { authorization: `bearer ${population.keys.personA}` },
      });
      assert.equal(lower.status, 200);
    });

    test("a bare key without the Bearer scheme is a malformed key, however valid the key", async () => {
      for (const server of ["WL", "GEN", "GEO"] as const) {
        const bare = await service.call(server, "GET", "/General/GetAccessKey", {
          key: null,
          headers: { authorization: population.keys.personA },
        });
        assert.equal(bare.status, 401);
        assert.equal(errorOf(bare), "2014");
        assert.equal(bare.text.includes(population.keys.personA), false);
      }
    });

    test("a new key works at once and a revoked one stops at once", async () => {
      const runtime = service.app.runtime;
      const key = await createKey(runtime, { personId: population.people.personB, comment: "rotation" });
      const ok = await service.call("GEN", "GET", "/General/GetAccessKey", { key: key.accessKey });
      assert.equal(ok.status, 200);
      assert.equal(ok.json.Results[0].Comment, "rotation");
      await revokeKey(runtime, key.id);
      const revoked = await service.call("GEN", "GET", "/General/GetAccessKey", { key: key.accessKey });
      assert.equal(revoked.status, 401);
      assert.equal(errorOf(revoked), "2017");
    });

    test("GetAccessKey describes the caller's key; GeoSiteId only on GEN", async () => {
      const expectedCommon = {
        AccessKey: population.keys.personA,
        PersonId: population.people.personA,
        FirstName: "personA",
        LastName: "Tester",
        Email: "persona@example.com",
        WhiteLabelSiteId: population.siteA,
        Role: "Person",
        DeleteDate: null,
        Comment: null,
        Message: "The key does not expire",
      };
      for (const server of ["WL", "GEN", "GEO"] as const) {
        const r = await service.call(server, "GET", "/General/GetAccessKey", { key: population.keys.personA });
        assert.equal(r.status, 200);
        assert.equal(r.json.Results.length, 1);
        const record = r.json.Results[0];
        assert.deepEqual(
          { ...record, Id: undefined, CreateDate: undefined, GeoSiteId: undefined },
          {
            ...expectedCommon,
            Id: undefined,
            CreateDate: undefined,
            GeoSiteId: undefined,
          },
        );
        assert.equal(typeof record.Id, "number");
        assert.ok(!Number.isNaN(Date.parse(record.CreateDate)));
        if (server === "GEN") assert.equal(record.GeoSiteId, population.geo, "site A lies in the geo-site");
        else assert.equal("GeoSiteId" in record, false, `no GeoSiteId on ${server}`);
      }
    });

    test("roles are reported by name and an expiring key says when", async () => {
      const roles = {
        admin: "ServiceAdmin",
        wlAdminA: "WhiteLabelAdmin",
        geoAdmin: "GeoSiteAdmin",
        personB: "Person",
      } as const;
      for (const [who, role] of Object.entries(roles) as [keyof typeof roles, string][]) {
        const r = await service.call("GEN", "GET", "/General/GetAccessKey", { key: population.keys[who] });
        assert.equal(r.json.Results[0].Role, role);
      }
      const expiresAt = new Date(service.app.runtime.clock.nowMs() + 86_400_000);
      const key = await createKey(service.app.runtime, { personId: population.people.personB, expiresAt });
      const r = await service.call("WL", "GET", "/General/GetAccessKey", { key: key.accessKey });
      assert.equal(r.json.Results[0].DeleteDate, expiresAt.toISOString());
      assert.equal(r.json.Results[0].Message, `The key expires at ${expiresAt.toISOString()}`);
    });

    test("keys are stored only as hashes", async () => {
      const rows = await service.storage.db.selectFrom("access_keys").selectAll().execute();
      const stored = JSON.stringify(rows);
      for (const key of Object.values(population.keys)) assert.equal(stored.includes(key), false);
      for (const row of rows) assert.match(row.key_hash, /^[0-9a-f]{64}$/);
    });
  });
}
