import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import type { MarketQuote } from "../../src/core/market/quote.js";
import { nextDueOf } from "../../src/engine/order-index.js";
import type { Backend } from "../../src/store/storage.js";
import { advanceClock, BACKENDS, populate, setClock, startTestService, type TestService } from "../helpers/service.js";
import {
  cancelOrder,
  MARKET_OPEN,
  newStrategy,
  placed,
  positions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

/** A strategy of person A at the market's open, hand quotes only, AAPL at 200 x 200.05; the service closed after. */
async function trading(
  backend: Backend,
  work: (service: TestService, key: string, strategyId: number) => Promise<void>,
): Promise<void> {
  const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
  try {
    const key = (await populate(service)).keys.personA;
    await setClock(service, MARKET_OPEN);
    const strategyId = await newStrategy(service, key);
    await setQuote(service, "AAPL", 200, 200.05);
    await work(service, key, strategyId);
  } finally {
    await service.close();
  }
}

/**
 * The strategy's due time as the fill loop's index keeps it, once the frame has committed, checked against
 * the one a pass over its book and positions finds.
 */
const dueTimes =
  (service: TestService, strategyId: number) =>
  async (step: string): Promise<number | null | undefined> => {
    const { frame } = service.app.runtime;
    const { index } = service.app.fillLoop;
    await frame.drain();
    const state = (await frame.workingAccount(strategyId)).state;
    assert.equal(index.dueOf(strategyId), nextDueOf(state), step);
    return index.dueOf(strategyId);
  };

for (const backend of BACKENDS) {
  describe(`the fill loop (${backend})`, () => {
    test("quotes that come while an account loads add to one waiting work: the order fills once", async () => {
      await trading(backend, async (service, key, strategyId) => {
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
      });
    });

    test("the strategy's due time kept as orders come and go is the one a pass over its book finds", async () => {
      await trading(backend, async (service, key, strategyId) => {
        const agrees = dueTimes(service, strategyId);
        // DAY orders (TIF 0, the default) expire at the session's close: each new one keeps that time.
        const day = (extra: Record<string, unknown> = {}) =>
          placed(
            service,
            key,
            stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 150, TIF: "0", ...extra }),
          );
        const first = await day();
        const atClose = await agrees("one DAY order");
        assert.notEqual(atClose, null);
        const second = await day();
        await agrees("two DAY orders");
        // Parked until 10:30 New York time: released before the close, so it is due first.
        const parked = await day({ ParkedUntilDate: "2026-03-10T10:30:00" });
        assert.equal(await agrees("a parked order"), Date.parse("2026-03-10T14:30:00Z"));
        // Its cancel gives the time back to the close; the others' cancels leave it there.
        assert.equal((await cancelOrder(service, key, strategyId, parked.SignalId)).status, 200);
        assert.equal(await agrees("the parked order canceled"), atClose);
        assert.equal((await cancelOrder(service, key, strategyId, first.SignalId)).status, 200);
        assert.equal(await agrees("a DAY order canceled"), atClose);
        // A GTC order has no due time; a market DAY order fills at once and leaves none either.
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 150 }));
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 1, { TIF: "0" }));
        assert.equal(await agrees("GTC and filled orders"), atClose);
        // Past the close the DAY order expires, and nothing is due any more.
        await advanceClock(service, 7 * 3600);
        assert.equal((await signal(service, key, second.SignalId)).OrderStatus, "C");
        assert.equal(await agrees("after the close"), null);
      });
    });

    test("orders and positions in options and futures are due when their contract expires", async () => {
      await trading(backend, async (service, key, strategyId) => {
        const due = dueTimes(service, strategyId);
        const agrees = async (step: string) => {
          const at = await due(step);
          return at === null || at === undefined ? null : new Date(at).toISOString();
        };
        const june = "@ESM26";
        const march = "AAPL260320C00150000";
        await setQuote(service, june, 5000, 5000.25);
        await setQuote(service, march, 5, 5.1);
        const resting = await placed(
          service,
          key,
          stockOrder(strategyId, june, "buy", 1, { OrderType: "2", Limit: 4000 }),
        );
        assert.equal(await agrees("a GTC order in June's contract"), "2026-07-01T04:00:00.000Z");
        await placed(service, key, stockOrder(strategyId, march, "buy", 1));
        assert.equal(await agrees("a position in March's option"), "2026-03-21T04:00:00.000Z");
        await placed(service, key, stockOrder(strategyId, march, "sell", 1));
        assert.equal(await agrees("the option closed"), "2026-07-01T04:00:00.000Z");
        assert.equal((await cancelOrder(service, key, strategyId, resting.SignalId)).status, 200);
        assert.equal(await agrees("nothing left that expires"), null);
      });
    });
  });
}
