import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { anyCaller } from "../../src/core/access.js";
import { defineOperation, pathOf, V4_SERVERS } from "../../src/http/v4/operation.js";
import { Id, MultilineText } from "../../src/http/v4/schemas.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import { probeServer } from "../helpers/probe.js";
import { ADMIN_KEY, BACKENDS, startTestService, type TestService } from "../helpers/service.js";

/** One field of every input type, echoed back as the operation received it. */
const EchoInput = Type.Object({
  StrategyId: Type.Optional(Id()),
  Price: Type.Optional(Type.Number()),
  IsAlive: Type.Optional(Type.Boolean()),
  Account: Type.Optional(Type.String({ maxLength: 10 })),
  StrategyIds: Type.Optional(Type.Array(Id())),
  Side: Type.Optional(Type.Union([Type.Literal("1"), Type.Literal("2")])),
  Order: Type.Optional(Type.Object({ Quantity: Type.Number(), Symbol: Type.String(), ParentId: Type.Optional(Id()) })),
  Description: Type.Optional(MultilineText({ maxLength: 100 })),
});

const echo = (method: "GET" | "POST", path: string) =>
  defineOperation({
    id: `Echo${method}`,
    method,
    path,
    servers: ["WL"],
    summary: "Echoes its input.",
    input: EchoInput,
    result: Type.Unknown(),
    permission: anyCaller,
    paginated: false,
    handler: async (_ctx, input) => [input],
  });

for (const backend of BACKENDS) {
  describe(`reading v4 input as existing clients send it (${backend})`, () => {
    let service: TestService;
    let server: FastifyInstance;
    const post = async (payload: string, headers: Record<string, string> = {}) => {
      const r = await server.inject({
        method: "POST",
        url: "/Echo/Post",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, ...headers },
        payload,
      });
      return { status: r.statusCode, body: r.json() };
    };
    const get = async (query: string) => {
      const r = await server.inject({
        method: "GET",
        url: `/Echo/Get?${query}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      return { status: r.statusCode, body: r.json() };
    };

    before(async () => {
      service = await startTestService(backend);
      server = await probeServer(service, [echo("GET", "/Echo/Get"), echo("POST", "/Echo/Post")]);
    });
    after(async () => {
      await server.close();
      await service.close();
    });

    test("property names match without regard to case, in bodies, nested objects and queries", async () => {
      const r = await post(JSON.stringify({ strategyid: 5, PRICE: 1.5, order: { quantity: 2, SYMBOL: "AAPL" } }));
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.Results, [{ StrategyId: 5, Price: 1.5, Order: { Quantity: 2, Symbol: "AAPL" } }]);
      const q = await get("strategyId=7&isalive=true");
      assert.deepEqual(q.body.Results, [{ StrategyId: 7, IsAlive: true }]);
    });

    test("numbers, booleans and codes arrive as strings or as JSON values alike", async () => {
      const asStrings = await post(
        JSON.stringify({ StrategyId: "12", Price: "150.25", IsAlive: "false", Side: 2, Account: 12345 }),
      );
      assert.equal(asStrings.status, 200);
      assert.deepEqual(asStrings.body.Results, [
        { StrategyId: 12, Price: 150.25, IsAlive: false, Side: "2", Account: "12345" },
      ]);
      const asValues = await post(JSON.stringify({ StrategyId: 12, Price: 150.25, IsAlive: false, Side: "2" }));
      assert.deepEqual(asValues.body.Results, [{ StrategyId: 12, Price: 150.25, IsAlive: false, Side: "2" }]);
    });

    test("explicit null means not given", async () => {
      const r = await post(JSON.stringify({ StrategyId: null, Price: null, Account: "a" }));
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.Results, [{ Account: "a" }]);
    });

    test("array query parameters repeat the key or come comma-separated", async () => {
      const repeated = await get("StrategyIds=1&StrategyIds=2&strategyids=3");
      assert.deepEqual(repeated.body.Results, [{ StrategyIds: [1, 2, 3] }]);
      const commas = await get("StrategyIds=4,5");
      assert.deepEqual(commas.body.Results, [{ StrategyIds: [4, 5] }]);
      const single = await get("StrategyIds=9");
      assert.deepEqual(single.body.Results, [{ StrategyIds: [9] }]);
    });

    test("a JSON body is read whatever the Content-Type says, and with none", async () => {
      for (const contentType of ["application/json", "text/plain", "*/*", "application/x-www-form-urlencoded", ""]) {
        const headers: Record<string, string> = contentType ? { "content-type": contentType } : {};
        const r = await post(JSON.stringify({ StrategyId: 3 }), headers);
        assert.equal(r.status, 200, `Content-Type ${contentType || "(none)"}`);
        assert.deepEqual(r.body.Results, [{ StrategyId: 3 }]);
      }
    });

    test("a missing or */* Accept header is never refused", async () => {
      for (const accept of ["*/*", "text/html", ""]) {
        const headers: Record<string, string> = accept ? { accept } : {};
        assert.equal((await post("{}", headers)).status, 200);
      }
    });

    test("unknown names are ignored", async () => {
      const r = await post(JSON.stringify({ StrategyId: 1, SomethingNew: "x" }));
      assert.deepEqual(r.body.Results, [{ StrategyId: 1 }]);
    });

    test("wrong types and limits give 400 naming each field", async () => {
      const r = await post(
        JSON.stringify({ StrategyId: "abc", Price: "1,5", IsAlive: "yes", Account: "x".repeat(11), Side: "3" }),
      );
      assert.equal(r.status, 400);
      const byField = Object.fromEntries(
        r.body.ResponseStatus.Errors.map((e: { FieldName: string; Message: string; ErrorCode: string }) => [
          e.FieldName,
          e,
        ]),
      );
      assert.deepEqual(Object.keys(byField).sort(), ["Account", "IsAlive", "Price", "Side", "StrategyId"]);
      assert.equal(byField.StrategyId.Message, "StrategyId must be an integer");
      assert.equal(byField.Account.Message, "Account must be at most 10 characters");
      assert.equal(byField.Side.Message, 'Side must be one of "1", "2"');
      for (const entry of Object.values(byField) as { ErrorCode: string }[]) assert.equal(entry.ErrorCode, "1101");
    });

    test("nested fields are named by their path", async () => {
      const r = await post(JSON.stringify({ Order: { Quantity: "lots" } }));
      assert.equal(r.status, 400);
      const fields = r.body.ResponseStatus.Errors.map((e: { FieldName: string }) => e.FieldName).sort();
      assert.deepEqual(fields, ["Order.Quantity", "Order.Symbol"]);
    });

    test("ids above 2^53 - 1 are refused naming the field, in queries, bodies, lists and nested objects", async () => {
      const fieldsOf = (r: { body: { ResponseStatus: { Errors: { FieldName: string; Message: string }[] } } }) =>
        r.body.ResponseStatus.Errors.map((e) => [e.FieldName, e.Message]);
      const largest = await get("StrategyId=9007199254740991");
      assert.deepEqual(largest.body.Results, [{ StrategyId: 9007199254740991 }]);
      for (const id of ["9007199254740992", "9223372036854775807", "18446744073709551616"]) {
        const r = await get(`StrategyId=${id}`);
        assert.equal(r.status, 400, id);
        assert.deepEqual(fieldsOf(r), [["StrategyId", "StrategyId must be at most 9007199254740991"]]);
      }
      const listed = await post(JSON.stringify({ StrategyIds: [1, 1e308] }));
      assert.equal(listed.status, 400);
      assert.deepEqual(fieldsOf(listed), [["StrategyIds[1]", "StrategyIds[1] must be at most 9007199254740991"]]);
      const nested = await post(JSON.stringify({ Order: { Quantity: 1, Symbol: "A", ParentId: 2 ** 63 } }));
      assert.equal(nested.status, 400);
      assert.deepEqual(fieldsOf(nested), [["Order.ParentId", "Order.ParentId must be at most 9007199254740991"]]);
    });

    test("control characters are refused naming the field; descriptions keep tabs and line breaks", async () => {
      const fieldOf = (r: { body: { ResponseStatus: { Errors: { FieldName: string }[] } } }) =>
        r.body.ResponseStatus.Errors.map((e) => e.FieldName);
      for (const text of ["a\u0000b", "a\nb", "\tx", "x\u001f", "x\u007f", "x\u0085"]) {
        const r = await post(JSON.stringify({ Account: text }));
        assert.equal(r.status, 400, JSON.stringify(text));
        assert.deepEqual(fieldOf(r), ["Account"]);
        assert.equal(r.body.ResponseStatus.Errors[0].Message, "Account must not contain control characters");
      }
      const query = await get("Account=a%00b");
      assert.equal(query.status, 400);
      assert.deepEqual(fieldOf(query), ["Account"]);
      const nested = await post(JSON.stringify({ Order: { Quantity: 1, Symbol: "MS\u0000FT" } }));
      assert.deepEqual(fieldOf(nested), ["Order.Symbol"]);
      const unicode = await post(JSON.stringify({ Account: "Zürich 😀" }));
      assert.deepEqual(unicode.body.Results, [{ Account: "Zürich 😀" }]);
      const lines = "First line\r\n\tSecond line\n";
      const described = await post(JSON.stringify({ Description: lines }));
      assert.deepEqual(described.body.Results, [{ Description: lines }]);
      const nul = await post(JSON.stringify({ Description: "a\u0000b" }));
      assert.equal(nul.status, 400);
      assert.deepEqual(fieldOf(nul), ["Description"]);
      assert.equal(
        nul.body.ResponseStatus.Errors[0].Message,
        "Description must not contain control characters but tabs and line breaks",
      );
    });

    test("a body that is not JSON, or not an object, is a 400 in the envelope", async () => {
      const broken = await post("{not json");
      assert.equal(broken.status, 400);
      assert.equal(broken.body.ResponseStatus.Errors[0].ErrorCode, "1103");
      const list = await post("[1,2]");
      assert.equal(list.status, 400);
      assert.equal(list.body.ResponseStatus.Errors[0].Message, "The request body must be a JSON object");
    });

    test("a body over the size limit is refused in the envelope", async () => {
      const r = await post(JSON.stringify({ Account: "x".repeat(2 * 1024 * 1024) }));
      assert.equal(r.status, 413);
      assert.equal(r.body.ResponseStatus.ErrorCode, "413");
    });

    test("no body or query, however malformed, yields a 500", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.string(),
            fc.json(),
            fc.jsonValue().map((v) => JSON.stringify({ Order: v, StrategyIds: v })),
          ),
          async (payload) => {
            const r = await post(payload);
            assert.ok(r.status === 200 || r.status === 400, `status ${r.status} for ${payload}`);
            assert.equal(r.body.ResponseStatus.ErrorCode, String(r.status));
          },
        ),
        { numRuns: 150 },
      );
      await fc.assert(
        fc.asyncProperty(fc.string(), fc.string(), async (name, value) => {
          const r = await get(
            `${encodeURIComponent(name)}=${encodeURIComponent(value)}&StrategyIds=${encodeURIComponent(value)}`,
          );
          assert.ok(r.status === 200 || r.status === 400, `status ${r.status}`);
        }),
        { numRuns: 150 },
      );
    });

    test("no operation of the table answers 500 to malformed input, on any server", async () => {
      for (const server of V4_SERVERS) {
        for (const operation of OPERATIONS.filter((o) => o.servers.includes(server))) {
          await fc.assert(
            fc.asyncProperty(
              fc.oneof(fc.string(), fc.json()),
              fc.dictionary(fc.string(), fc.string()),
              async (body, query) => {
                const r = await service.call(server, operation.method, pathOf(operation, server), {
                  rawBody: body,
                  query,
                  headers: { "content-type": "application/json" },
                });
                const notAvailable = r.status === 501 && operation.notAvailableOn?.includes(server);
                assert.ok(r.status < 500 || notAvailable, `${operation.id} on ${server}: ${r.status} for ${body}`);
                assert.equal(r.json.ResponseStatus.ErrorCode, String(r.status));
              },
            ),
            { numRuns: 25 },
          );
        }
      }
    });
  });
}
