import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BACKENDS, populate, setClock, startTestService } from "../helpers/service.js";
import {
  activeOrders,
  MARKET_OPEN,
  newStrategy,
  placed,
  positions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`orders survive a restart (${backend})`, () => {
    test("working, held and parked orders are rebuilt from storage and fill, release and expire after a restart", async () => {
      let service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        const bracket = await placed(
          service,
          key,
          stockOrder(strategyId, "AAPL", "buy", 10, { OrderType: "2", Limit: 195, ProfitTarget: 210, StopLoss: 190 }),
        );
        const parked = await placed(
          service,
          key,
          stockOrder(strategyId, "AAPL", "buy", 5, {
            OrderType: "2",
            Limit: 150,
            ParkedUntilDate: "2026-03-10T11:00:00",
          }),
        );
        const day = await placed(
          service,
          key,
          stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 100, TIF: "0" }),
        );
        assert.equal((await activeOrders(service, key, strategyId)).length, 5);

        service = await service.restart();
        assert.equal(
          service.app.fillLoop.index.workingOrders,
          2,
          "the bracket entry and the DAY order are on the ladders",
        );
        // Hand quotes live in memory: the scenario sets them again.
        await setQuote(service, "AAPL", 194.9, 194.95);
        assert.equal((await signal(service, key, bracket.SignalId)).OrderStatus, "2");
        assert.equal((await signal(service, key, bracket.ProfitTargetSignalId as number)).OrderStatus, "0");

        service = await service.restart();
        await setQuote(service, "AAPL", 210, 210.05);
        assert.equal((await signal(service, key, bracket.ProfitTargetSignalId as number)).OrderStatus, "2");
        assert.equal((await signal(service, key, bracket.StopLossSignalId as number)).OrderStatus, "4");
        assert.deepEqual(await positions(service, key, strategyId), []);

        service = await service.restart();
        await setClock(service, "2026-03-10T15:30:00Z");
        assert.equal((await signal(service, key, parked.SignalId)).OrderStatus, "0");
        await setClock(service, "2026-03-10T21:00:00Z");
        assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "C");
        assert.equal((await signal(service, key, parked.SignalId)).OrderStatus, "0", "GTC keeps working");
      } finally {
        await service.close();
      }
    });
  });
}
