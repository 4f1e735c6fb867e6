import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import type { ServerName } from "../../src/app.js";
import { ADMIN_KEY, BACKENDS, startTestService, type TestService } from "../helpers/service.js";

/**
 * What a client that is too slow, or sends what Node's HTTP parser refuses,
 * gets on a real socket: an answer in the server's own error shape, and the
 * connection closed. The service runs with short timeouts; nothing here
 * measures time, it waits for what the server sends.
 */

interface Exchange {
  readonly status: number;
  readonly headers: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  readonly json: any;
}

/** Writes `bytes` and nothing more, then reads all the server sends until it closes the connection. */
function exchange(port: number, bytes: string): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
      resolve({ status, headers: head, json: body === "" ? undefined : JSON.parse(body) });
    });
    socket.write(bytes);
  });
}

const stalledBody = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
  `Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"Name":`;

for (const backend of BACKENDS) {
  describe(`slow and unreadable requests on real sockets (${backend})`, () => {
    let service: TestService;
    const ports = {} as Record<ServerName, number>;
    before(async () => {
      service = await startTestService(backend, {
        timeouts: { headersMs: 200, requestMs: 300, keepAliveMs: 200, idleMs: 5_000 },
      });
      for (const name of ["WL", "GEN", "GEO", "LEGACY"] as const) {
        const server = service.app.servers[name];
        await server.listen({ port: 0, host: "127.0.0.1" });
        ports[name] = (server.server.address() as net.AddressInfo).port;
      }
    });
    after(() => service.close());

    test("a body that does not arrive in time is answered 408 in the envelope, and the connection closes", async () => {
      for (const server of ["WL", "GEN", "GEO"] as const) {
        const r = await exchange(ports[server], stalledBody("/General/Hello"));
        assert.equal(r.status, 408, server);
        assert.match(r.headers, /\r\nConnection: close/i);
        assert.deepEqual(r.json, {
          Results: null,
          ResponseStatus: {
            ErrorCode: "408",
            Message: "RequestTimeout",
            Errors: [{ ErrorCode: "1105", FieldName: "", Message: "The request did not arrive in time", Meta: {} }],
            Meta: {},
          },
        });
      }
    });

    test("headers that do not arrive in time are answered 408 too", async () => {
      const r = await exchange(ports.WL, `GET /General/GetAccessKey HTTP/1.1\r\nHost: localhost\r\n`);
      assert.equal(r.status, 408);
      assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1105");
    });

    test("the legacy server answers a late body 408 in its own failure shape", async () => {
      const r = await exchange(ports.LEGACY, stalledBody("/world/apiv3/getSystemDetails"));
      assert.equal(r.status, 408);
      assert.deepEqual(r.json, {
        ok: 0,
        error: { title: "Request timeout", message: "The request did not arrive in time" },
      });
    });

    test("a URL and headers over 16 KiB are answered 431 in the envelope", async () => {
      const r = await exchange(
        ports.GEN,
        `GET /Strategies/SearchStrategies?StrategyName=${"a".repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
      );
      assert.equal(r.status, 431);
      assert.equal(r.json.Results, null);
      assert.equal(r.json.ResponseStatus.ErrorCode, "431");
      assert.equal(r.json.ResponseStatus.Message, "RequestHeaderFieldsTooLarge");
      assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1101");
    });

    test("what is not HTTP is answered 400 in the envelope", async () => {
      const r = await exchange(ports.GEO, "HELLO THERE\r\n\r\n");
      assert.equal(r.status, 400);
      assert.equal(r.json.ResponseStatus.ErrorCode, "400");
      assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1101");
    });

    test("a kept-alive connection left idle is closed after its answer", async () => {
      const r = await exchange(
        ports.WL,
        `GET /General/GetAccessKey HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n\r\n`,
      );
      assert.equal(r.status, 200);
      assert.equal(r.json.ResponseStatus.ErrorCode, "200");
    });
  });
}
