import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inputSource, pathOf, V4_SERVERS } from "../../src/http/v4/operation.js";
import { operationsOf } from "../../src/http/v4/server.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import { departures } from "../helpers/conforms.js";
import { buildExampleService } from "../helpers/examples.js";
import { BACKENDS, startTestService } from "../helpers/service.js";

/** An example's query as a client sends it: a list as repeated names, every value as text. */
const queryOf = (example: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(example).map(([name, value]) => [name, Array.isArray(value) ? value.map(String) : String(value)]),
  );

test("every operation of the table declares an example", () => {
  assert.deepEqual(
    OPERATIONS.filter((operation) => operation.example === undefined).map((operation) => operation.id),
    [],
  );
});

for (const backend of BACKENDS) {
  describe(`the documents' examples answer 200 on the example service, as documented (${backend})`, () => {
    for (const server of V4_SERVERS) {
      test(`${server}: each operation's example, in the table's order, sandbox included`, async () => {
        const service = await startTestService(backend);
        try {
          await buildExampleService(service);
          const document = (await service.call(server, "GET", "/openapi.json")).json;
          // Operations a server lists but does not offer answer 501 by design (UpdateProfile on WL and GEO).
          const offered = operationsOf(server, OPERATIONS, true).filter((o) => !o.notAvailableOn?.includes(server));
          for (const operation of offered) {
            const example = operation.example as Record<string, unknown>;
            const r = await service.call(
              server,
              operation.method,
              pathOf(operation, server),
              inputSource(operation) === "query" ? { query: queryOf(example) } : { body: example },
            );
            assert.equal(r.status, 200, `${operation.id} on ${server}: ${r.text}`);
            const documented = document.paths[pathOf(operation, server)][operation.method.toLowerCase()];
            const schema = documented.responses["200"].content["application/json"].schema;
            assert.deepEqual(departures(document, schema, r.json), [], `${operation.id} on ${server}: ${r.text}`);
          }
        } finally {
          await service.close();
        }
      });
    }
  });
}
