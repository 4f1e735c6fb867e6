import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ERRORS } from "../../src/core/errors.js";
import { inputSource, pathOf, V4_SERVERS, type V4Server } from "../../src/http/v4/operation.js";
import * as records from "../../src/http/v4/records.js";
import { operationsOf } from "../../src/http/v4/server.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import { startTestService, type TestService } from "../helpers/service.js";

// biome-ignore lint/suspicious/noExplicitAny: the documents are read as plain JSON
type Json = any;

const LIMIT_AND_ID = ["X-Request-Id", "X-Limit-Limit", "X-Limit-Type", "X-Limit-Remaining", "X-Limit-Reset"];
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

describe("the v4 OpenAPI documents", () => {
  let service: TestService;
  const documents = {} as Record<V4Server, Json>;
  before(async () => {
    service = await startTestService("sqlite");
    for (const server of V4_SERVERS) documents[server] = (await service.call(server, "GET", "/openapi.json")).json;
  });
  after(() => service.close());

  const operationIn = (server: V4Server, id: string) => {
    const operation = OPERATIONS.find((o) => o.id === id);
    assert.ok(operation);
    return documents[server].paths[pathOf(operation, server)][operation.method.toLowerCase()];
  };

  test("every tag (an operation path's first segment) is described", () => {
    for (const server of V4_SERVERS) {
      const undescribed = documents[server].tags.filter((tag: Json) => !tag.description).map((tag: Json) => tag.name);
      assert.deepEqual(undescribed, [], server);
    }
  });

  test("every record is one named component, referenced by the operations answering it", () => {
    const named = new Set<string>();
    for (const server of V4_SERVERS) {
      for (const operation of operationsOf(server, OPERATIONS, true)) {
        const title = operation.result.title as string | undefined;
        if (title === undefined) continue;
        const results = operationIn(server, operation.id).responses["200"].content["application/json"].schema.properties
          .Results;
        assert.deepEqual(results.items, ref("schemas", title), `${operation.id} on ${server}`);
        assert.ok(documents[server].components.schemas[title], `${title} on ${server}`);
        named.add(title);
      }
      for (const name of Object.keys(documents[server].components.schemas)) named.add(name);
    }
    const titles = Object.values(records).map((record) => record.title as string);
    assert.deepEqual(
      titles.filter((title) => !named.has(title)),
      [],
    );
    const gen = documents.GEN.components.schemas;
    for (const name of ["OrderDTO", "ServiceSymbolInput", "ExchangeSymbolInput", "DesiredPosition", "ServiceSymbol"]) {
      assert.ok(gen[name], name);
    }
    assert.deepEqual(gen.OrderStatus.properties.ServiceSymbol, ref("schemas", "ServiceSymbol"));
    assert.deepEqual(gen.OrderDTO.properties.ServiceSymbol, ref("schemas", "ServiceSymbolInput"));
    const newOrder = operationIn("GEN", "NewStrategyOrder").requestBody.content["application/json"].schema;
    assert.deepEqual(newOrder.properties.Order, ref("schemas", "OrderDTO"));
  });

  test("the error envelope names every service error code of the catalogue", () => {
    for (const server of V4_SERVERS) {
      const { schemas } = documents[server].components;
      assert.deepEqual(
        schemas.ErrorCode.enum,
        Object.values(ERRORS).map((e) => e.code),
      );
      for (const error of Object.values(ERRORS)) assert.match(schemas.ErrorCode.description, new RegExp(error.code));
      assert.deepEqual(schemas.Error.properties.ErrorCode, ref("schemas", "ErrorCode"));
      assert.deepEqual(schemas.Failure.properties.ResponseStatus, ref("schemas", "ResponseStatus"));
    }
  });

  test("every answer documents the request id and rate-limit headers; 429 Retry-After; order entry its idempotency", () => {
    for (const server of V4_SERVERS) {
      const document = documents[server];
      for (const operation of operationsOf(server, OPERATIONS, true)) {
        const described = operationIn(server, operation.id);
        for (const [status, response] of Object.entries(described.responses) as [string, Json][]) {
          const headers = response.$ref
            ? document.components.responses[response.$ref.split("/").pop()].headers
            : response.headers;
          const expected = [
            ...LIMIT_AND_ID,
            ...(status === "429" ? ["Retry-After"] : []),
            ...(status === "200" && operation.idempotent ? ["Idempotent-Replayed"] : []),
          ];
          for (const name of expected) {
            assert.deepEqual(headers[name], ref("headers", name), `${operation.id} ${status} on ${server}: ${name}`);
          }
        }
        assert.ok(described.responses["429"], `${operation.id} documents 429`);
        const parameters = described.parameters.map((p: Json) => p.$ref);
        assert.ok(parameters.includes("#/components/parameters/RequestId"));
        assert.equal(
          parameters.includes("#/components/parameters/IdempotencyKey"),
          operation.idempotent === true,
          `${operation.id} on ${server}`,
        );
      }
    }
    assert.equal(documents.GEN.components.parameters.IdempotencyKey.name, "Idempotency-Key");
    // GEO's order entry is the autotrade accounts' (NewAutotradeOrder, CancelAutotradeOrder, ReplaceAutotradeOrder).
    assert.equal(documents.GEO.components.parameters.IdempotencyKey.name, "Idempotency-Key");
  });

  test("the documented headers are the ones sent", async () => {
    const r = await service.call("WL", "POST", "/General/Hello", { body: {} });
    for (const name of LIMIT_AND_ID) assert.ok(r.headers[name.toLowerCase()] !== undefined, name);
    const types = documents.WL.components.headers["X-Limit-Type"].schema.enum;
    assert.ok(types.includes(r.headers["x-limit-type"]));
  });

  test("each document's server is the one serving it; the key is a bearer token", () => {
    for (const server of V4_SERVERS) {
      const document = documents[server];
      assert.equal(document.servers.length, 1);
      assert.equal(document.servers[0].url, "/");
      assert.deepEqual(document.components.securitySchemes.bearer, {
        type: "http",
        scheme: "bearer",
        description: document.components.securitySchemes.bearer.description,
      });
      assert.deepEqual(document.security, [{ bearer: [] }]);
    }
  });

  test("each operation shows its example: on the body, or on the query parameters", () => {
    for (const server of V4_SERVERS) {
      for (const operation of operationsOf(server, OPERATIONS, true)) {
        const described = operationIn(server, operation.id);
        const example = operation.example as Record<string, unknown>;
        if (inputSource(operation) === "body") {
          const shown = described.requestBody.content["application/json"].example;
          for (const [name, value] of Object.entries(shown)) assert.deepEqual(value, example[name]);
          if (!operation.inputOn?.[server]) assert.deepEqual(shown, example, `${operation.id} on ${server}`);
        } else {
          const shown = Object.fromEntries(
            described.parameters
              .filter((p: Json) => p.in === "query" && "example" in p)
              .map((p: Json) => [p.name, p.example]),
          );
          assert.deepEqual(shown, example, `${operation.id} on ${server}`);
        }
      }
    }
  });
});
