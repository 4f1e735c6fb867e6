import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { generatedModules } from "../../clients/typescript/codegen.js";
import { generalClient, type Records, whiteLabelClient } from "../../clients/typescript/index.js";
import { ADMIN_KEY, BACKENDS, startTestService, type TestService } from "../helpers/service.js";
import { MARKET_OPEN } from "../helpers/trading.js";

const client = new URL("../../clients/typescript/", import.meta.url);

test("the committed client is what the generator writes from the documents now", async () => {
  for (const [file, text] of Object.entries(await generatedModules())) {
    assert.equal(
      readFileSync(new URL(`generated/${file}`, client), "utf8"),
      text,
      `clients/typescript/generated/${file} is stale: run npm run client:generate`,
    );
  }
});

test("the client compiles on its own (strict, DOM fetch types, no Node types)", async () => {
  const tsc = new URL("../../node_modules/typescript/bin/tsc", import.meta.url).pathname;
  await promisify(execFile)(process.execPath, [tsc, "-p", new URL("tsconfig.json", client).pathname]);
});

/** The service's server listening on a port of its own, as a client reaches it. */
async function listening(service: TestService, server: "WL" | "GEN"): Promise<string> {
  await service.app.servers[server].listen({ host: "127.0.0.1", port: 0 });
  return `http://127.0.0.1:${(service.app.servers[server].server.address() as AddressInfo).port}`;
}

for (const backend of BACKENDS) {
  describe(`the TypeScript client against the running service (${backend})`, () => {
    test("Hello, AddStrategy, NewStrategyOrder and GetStrategyActiveOrders, typed", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const gen = generalClient({ baseUrl: await listening(service, "GEN"), key: ADMIN_KEY });
        const wl = whiteLabelClient({ baseUrl: await listening(service, "WL"), key: ADMIN_KEY });

        const hello = await wl.POST("/General/Hello", { body: { Name: "Ann" } });
        const greeting: string | undefined = hello.data?.Results[0];
        assert.equal(greeting, "Hello, Ann!");
        assert.ok(hello.response.headers.get("X-Limit-Remaining"));

        await gen.POST("/Sandbox/SetClock", { body: { Now: MARKET_OPEN } });
        await gen.POST("/Sandbox/SetQuote", { body: { Symbol: "AAPL", Bid: 200, Ask: 200.05, Last: 200 } });
        const added = await gen.POST("/Strategies/AddStrategy", {
          body: { StrategyName: "Client Strategy", StartingCapital: 100_000 },
        });
        const strategyId = added.data?.Results[0]?.StrategyId;
        assert.ok(strategyId);

        const order = await gen.POST("/Strategies/NewStrategyOrder", {
          params: { header: { "Idempotency-Key": "client-test-1" } },
          body: {
            Order: {
              StrategyId: strategyId,
              OrderType: "2",
              Side: "1",
              TIF: "1",
              OrderQuantity: 10,
              Limit: 190,
              ServiceSymbol: { FullSymbol: "AAPL" },
            },
          },
        });
        const signal: Records<"GEN">["SignalId"] | undefined = order.data?.Results[0];
        assert.ok(signal?.SignalId, JSON.stringify(order.error));

        const active = await gen.GET("/Strategies/GetStrategyActiveOrders", {
          params: { query: { StrategyIds: [strategyId] } },
        });
        const orders: Records<"GEN">["OrderStatus"][] = active.data?.Results ?? [];
        assert.deepEqual(
          orders.map((o) => [o.SignalId, o.OrderStatus, o.Limit, o.ServiceSymbol.FullSymbol]),
          [[signal.SignalId, "0", 190, "AAPL"]],
        );

        const refused = await gen.GET("/Strategies/GetStrategyActiveOrders", {
          params: { query: { StrategyIds: [999_999] } },
        });
        assert.equal(refused.response.status, 404);
        const code: Records<"GEN">["ErrorCode"] | undefined = refused.error?.ResponseStatus.Errors[0]?.ErrorCode;
        assert.equal(code, "2013", JSON.stringify(refused.error));
      } finally {
        await service.close();
      }
    });
  });
}
