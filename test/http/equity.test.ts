import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`daily equity marks and monthly results (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
    });
    after(() => service.close());

    const equity = async (operation: string, strategyId: number, plan?: string) => {
      const r = await service.call("GEN", "GET", `/Strategies/${operation}`, {
        key,
        query: { StrategyId: String(strategyId), ...(plan ? { CommissionPlan: plan } : {}) },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0];
    };

    test("every NYSE close the clock passes marks the model account beside the S&P 500 proxy", async () => {
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "SPY", 500, 500.02);
      await setQuote(service, "AAPL", 200, 200.05);
      const strategyId = await newStrategy(service, key);
      await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 100));
      // Past Tuesday's close.
      await setClock(service, "2026-03-10T21:00:00Z");
      await setQuote(service, "AAPL", 210, 210.05);
      await setQuote(service, "SPY", 505, 505.02);
      // Over Wednesday's to Monday's closes (the weekend has none).
      await setClock(service, "2026-03-16T21:00:00Z");
      const daily = await equity("GetStrategyHistoricalDailyEquity", strategyId);
      assert.equal(daily.StrategyId, strategyId);
      assert.deepEqual(daily.SecurityTypesEnabled, { Stocks: true, Options: false, Futures: false, Forex: false });
      assert.deepEqual(
        daily.MonthlyResults.map((d: { Date: string }) => d.Date),
        ["2026-03-10", "2026-03-11", "2026-03-12", "2026-03-13", "2026-03-16"],
      );
      const [first, second] = daily.MonthlyResults;
      // Cash 100000 − 20005 − $1 commission, and 100 shares at the middle, 200.025.
      assert.equal(first.Equity, 99996.5);
      assert.equal(first.EquityWithoutCommissions, 99997.5);
      assert.equal(first.Benchmark, 500.01);
      assert.equal(first.BenchmarkReturn, null, "no benchmark price before the first close");
      assert.ok(Math.abs(first.Return - (99996.5 / 100000 - 1)) < 1e-12);
      assert.equal(second.Equity, 100996.5);
      assert.ok(Math.abs(second.BenchmarkReturn - (505.01 / 500.01 - 1)) < 1e-12);
      const none = await equity("GetStrategyHistoricalDailyEquity", strategyId, "None");
      assert.equal(none.MonthlyResults[0].Equity, 99997.5);

      const monthly = await equity("GetStrategyHistoricalEquity", strategyId);
      assert.equal(monthly.MonthlyResults.length, 1);
      const march = monthly.MonthlyResults[0];
      assert.equal(march.Month, "2026-03");
      assert.deepEqual([march.StartEquity, march.EndEquity], [100000, 100996.5]);
      assert.ok(Math.abs(march.Return - 0.009965) < 1e-12);
      assert.ok(Math.abs(march.ReturnWithoutCommissions - 0.009975) < 1e-12);
    });

    test("a strategy has no marks before its first close, and an unknown plan is refused", async () => {
      await setClock(service, "2026-03-17T14:00:00Z");
      const strategyId = await newStrategy(service, key, 50_000, "Fresh One");
      const daily = await equity("GetStrategyHistoricalDailyEquity", strategyId);
      assert.deepEqual(daily.MonthlyResults, []);
      const r = await service.call("GEN", "GET", "/Strategies/GetStrategyHistoricalEquity", {
        key,
        query: { StrategyId: String(strategyId), CommissionPlan: "Cheap" },
      });
      assert.equal(r.status, 400);
    });

    test("ten years of closes are marked in short steps while other requests are answered", async () => {
      await setClock(service, "2026-04-01T14:00:00Z");
      const strategies: number[] = [];
      for (let i = 0; i < 20; i++) strategies.push(await newStrategy(service, key, 100_000, `Decade ${i}`));
      await setClock(service, "2026-04-01T21:30:00Z");
      let jumped = false;
      const jump = service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: "2036-04-01T21:30:00Z" } });
      void jump.then(() => {
        jumped = true;
      });
      let answeredMeanwhile = 0;
      while (!jumped) {
        const details = await service.call("GEN", "GET", "/Strategies/GetStrategyDetails", {
          key,
          query: { StrategyId: String(strategies[0]) },
        });
        assert.equal(details.status, 200, details.text);
        if (!jumped) answeredMeanwhile++;
      }
      assert.equal((await jump).status, 200);
      assert.ok(answeredMeanwhile > 1, `requests answered while marking: ${answeredMeanwhile}`);
      const marks = await service.storage.db
        .selectFrom("equity_marks")
        .select(["strategy_id", (eb) => eb.fn.countAll<number>().as("marks")])
        .where("strategy_id", "in", strategies)
        .groupBy("strategy_id")
        .execute();
      const closes = (await equity("GetStrategyHistoricalDailyEquity", strategies[19] as number)).MonthlyResults;
      assert.ok(closes.length > 2500, `${closes.length} closes in ten years`);
      assert.deepEqual(
        marks.map((m) => Number(m.marks)),
        strategies.map(() => closes.length),
        "every strategy marked at every close, once",
      );
    });
  });
}
