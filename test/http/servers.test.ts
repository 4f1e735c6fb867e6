import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { pathOf, V4_SERVERS } from "../../src/http/v4/operation.js";
import { operationsOf } from "../../src/http/v4/server.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import { startTestService, type TestService } from "../helpers/service.js";

describe("each v4 server exposes exactly its operations", () => {
  let service: TestService;
  before(async () => {
    service = await startTestService("sqlite");
  });
  after(() => service.close());

  for (const server of V4_SERVERS) {
    test(`${server}: every operation of the table answers here exactly when it lists ${server}`, async () => {
      for (const operation of OPERATIONS) {
        const r = await service.call(server, operation.method, pathOf(operation, server), {
          ...(operation.method === "GET" || operation.method === "DELETE" ? {} : { body: {} }),
        });
        const unknown = r.status === 404 && r.json.ResponseStatus.Errors[0]?.ErrorCode === "1004";
        // An operation whose rules differ per server (StartAutotrade) has an entry per server set, on one path.
        const listedHere = OPERATIONS.some(
          (other) =>
            other.method === operation.method &&
            other.servers.includes(server) &&
            pathOf(other, server) === pathOf(operation, server),
        );
        assert.equal(unknown, !listedHere, `${operation.id} on ${server}: ${r.status}`);
      }
    });

    test(`${server}: paths are case-insensitive`, async () => {
      const r = await service.call(server, "POST", "/general/HELLO", { body: { name: "Ann" } });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.Results, ["Hello, Ann!"]);
    });

    test(`${server}: serves a valid OpenAPI 3 document listing exactly its operations, and the explorer`, async () => {
      const r = await service.call(server, "GET", "/openapi.json", { key: null });
      assert.equal(r.status, 200);
      const document = r.json;
      await SwaggerParser.validate(structuredClone(document));
      const listed = Object.entries(document.paths as Record<string, Record<string, { operationId: string }>>)
        .flatMap(([, methods]) => Object.values(methods).map((m) => m.operationId))
        .sort();
      const expected = operationsOf(server, OPERATIONS, true)
        .map((o) => o.id)
        .sort();
      assert.deepEqual(listed, expected);
      const results =
        document.paths["/General/GetAccessKey"].get.responses["200"].content["application/json"].schema.properties
          .Results;
      assert.deepEqual(results.items, { $ref: "#/components/schemas/AccessKey" });
      const accessKey = document.components.schemas.AccessKey.properties;
      assert.equal("GeoSiteId" in accessKey, server === "GEN", "GeoSiteId is documented on GEN only");
      const docs = await service.call(server, "GET", "/docs/", { key: null });
      assert.equal(docs.status, 200);
      assert.match(docs.text, /swagger/i);
    });
  }

  test("paginated operations document Cursor, Limit and AscendingOrder and the Pagination object", async () => {
    const r = await service.call("WL", "GET", "/openapi.json", { key: null });
    const op = r.json.paths["/General/GetWhiteLabelSiteUsers"].get;
    const names = op.parameters.map((p: { name: string }) => p.name);
    for (const name of ["Cursor", "Limit", "AscendingOrder"]) assert.ok(names.includes(name), name);
    assert.ok(op.responses["200"].content["application/json"].schema.properties.Pagination);
    const geo = await service.call("GEO", "GET", "/openapi.json", { key: null });
    const site = geo.json.paths["/General/GetWhiteLabelSiteUsers"].get.parameters.find(
      (p: { name: string }) => p.name === "WhiteLabelSiteId",
    );
    assert.equal(site.required, true, "WhiteLabelSiteId is required on GEO");
  });
});
