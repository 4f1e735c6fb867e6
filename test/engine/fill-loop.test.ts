import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import type { MarketQuote } from "../../src/core/market/quote.js";
import { BACKENDS, populate, setClock, startTestService } from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, positions, setQuote, signal, stockOrder } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`the fill loop (${backend})`, () => {
    test("quotes that come while an account loads add to one waiting work: the order fills once", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const key = (await populate(service)).keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        const order = await placed(
          service,
          key,
          stockOrder(strategyId, "AAPL", "buy", 3, { OrderType: "2", Limit: 195 }),
        );
        const { app } = service;
        const { frame } = app.runtime;
        // Dropped from memory: the next work on it waits for its account to load.
        frame.forget(strategyId);
        assert.equal(frame.isReady(strategyId), false);
        let operations = 0;
        frame.listen({
          applied: (id, _account, changes) => {
            if (id === strategyId && changes !== null) operations += 1;
          },
        });
        const atMs = app.runtime.clock.nowMs();
        for (const ask of ["194.95", "194.90", "194.85", "194.80", "194.75"]) {
          const quote: MarketQuote = {
            symbol: "AAPL",
            bid: decimal(ask) - decimal("0.05"),
            ask: decimal(ask),
            last: decimal(ask),
            bidSize: null,
            askSize: null,
            atMs,
          } as MarketQuote;
          app.market.setQuote(quote);
          app.fillLoop.quoteChanged(quote);
        }
        await frame.drain();
        assert.equal(operations, 1, "five crossing quotes, one operation");
        assert.equal((await signal(service, key, order.SignalId)).OrderStatus, "2");
        const held = await positions(service, key, strategyId);
        assert.equal(held.length, 1);
        assert.equal(held[0]?.Quantity, 3);
      } finally {
        await service.close();
      }
    });
  });
}
