import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { BACKENDS, populate, setClock, startTestService, type TestService } from "../helpers/service.js";
import { newStrategy, placed, setQuote, signal, stockOrder } from "../helpers/trading.js";

/**
 * The NYSE's one-off closures (here 2025-01-09, the National Day of Mourning
 * for President Carter) close US stocks like a holiday: nothing fills, no DAY
 * order expires and no equity mark is taken on them.
 */

const limit = (price: number, extra: Record<string, unknown> = {}) => ({ OrderType: "2", Limit: price, ...extra });

for (const backend of BACKENDS) {
  describe(`a one-off market closure (${backend})`, () => {
    let service: TestService;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      key = (await populate(service)).keys.personA;
    });
    after(() => service.close());

    test("on 2025-01-09 nothing fills, a DAY order lives to the next close, and no mark is taken", async () => {
      // Wednesday 2025-01-08, 10:00 New York.
      await setClock(service, "2025-01-08T15:00:00Z");
      await setQuote(service, "SPY", 590, 590.02);
      await setQuote(service, "AAPL", 240, 240.05);
      const strategyId = await newStrategy(service, key);
      await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 10));
      const resting = await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 10, limit(230)));

      // Thursday 10:00, the day of mourning: a quote through the limit fills nothing.
      await setClock(service, "2025-01-09T15:00:00Z");
      const day = await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 5, limit(200, { TIF: "0" })));
      await setQuote(service, "AAPL", 225, 225.05);
      assert.equal((await signal(service, key, resting.SignalId)).OrderStatus, "0");
      // Past Thursday's would-be close: the DAY order placed that day still works.
      await setClock(service, "2025-01-09T21:30:00Z");
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "0");

      // Friday: the market opens, the resting limit fills, and the DAY order ends at Friday's close.
      await setClock(service, "2025-01-10T15:00:00Z");
      assert.equal((await signal(service, key, resting.SignalId)).OrderStatus, "2");
      await setClock(service, "2025-01-10T21:00:00Z");
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "C");

      const daily = await service.call("GEN", "GET", "/Strategies/GetStrategyHistoricalDailyEquity", {
        key,
        query: { StrategyId: String(strategyId) },
      });
      assert.equal(daily.status, 200, daily.text);
      assert.deepEqual(
        daily.json.Results[0].MonthlyResults.map((d: { Date: string }) => d.Date),
        ["2025-01-08", "2025-01-10"],
      );
    });
  });
}
