import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { formatDecimal } from "../../src/core/decimal.js";
import { modelAccount } from "../../src/services/trading.js";
import {
  advanceClock,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import {
  activeOrders,
  MARKET_OPEN,
  newOrder,
  newStrategy,
  placed,
  positions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`orders: the basic lifecycle through HTTP (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
      await setClock(service, MARKET_OPEN);
    });
    after(() => service.close());

    test("a market buy fills at the ask before the answer and opens a position", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "AAPL", 199.9, 200);
      const result = await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 100));
      const order = await signal(service, key, result.SignalId);
      assert.equal(order.OrderStatus, "2");
      assert.equal(order.AvgFillPrice, 200);
      assert.equal(order.OpenClose, "O");
      const held = await positions(service, key, strategyId);
      assert.equal(held.length, 1);
      assert.equal(held[0]?.Quantity, 100);
      assert.equal(held[0]?.AvgPx, 200);
    });

    test("a limit buy rests until the ask reaches it, then fills at the ask", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "MSFT", 400, 400.1);
      const result = await placed(
        service,
        key,
        stockOrder(strategyId, "MSFT", "buy", 10, { OrderType: "2", Limit: 399 }),
      );
      assert.equal((await activeOrders(service, key, strategyId)).length, 1);
      await setQuote(service, "MSFT", 398.4, 398.5);
      const order = await signal(service, key, result.SignalId);
      assert.equal(order.OrderStatus, "2");
      assert.equal(order.AvgFillPrice, 398.5);
      assert.equal((await activeOrders(service, key, strategyId)).length, 0);
    });

    test("a bracket: exits are held until the entry fills; the profit target fills and cancels the stop loss", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "NVDA", 100, 100.05);
      const result = await placed(
        service,
        key,
        stockOrder(strategyId, "NVDA", "buy", 50, { OrderType: "2", Limit: 99, ProfitTarget: 110, StopLoss: 95 }),
      );
      assert.ok(result.ProfitTargetSignalId && result.StopLossSignalId && result.ExitSignalsOCAGroupId);
      assert.equal((await signal(service, key, result.ProfitTargetSignalId)).OrderStatus, "A");
      await setQuote(service, "NVDA", 98.9, 99);
      assert.equal((await signal(service, key, result.SignalId)).OrderStatus, "2");
      assert.equal((await signal(service, key, result.ProfitTargetSignalId)).OrderStatus, "0");
      assert.equal((await signal(service, key, result.StopLossSignalId)).OrderStatus, "0");
      await setQuote(service, "NVDA", 110.5, 110.6);
      assert.equal((await signal(service, key, result.ProfitTargetSignalId)).OrderStatus, "2");
      assert.equal((await signal(service, key, result.StopLossSignalId)).OrderStatus, "4");
      assert.deepEqual(await positions(service, key, strategyId), []);
    });

    test("a DAY order expires at the close; a GTC one keeps working", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "IBM", 250, 250.1);
      const day = await placed(
        service,
        key,
        stockOrder(strategyId, "IBM", "buy", 1, { OrderType: "2", Limit: 240, TIF: "0" }),
      );
      const gtc = await placed(
        service,
        key,
        stockOrder(strategyId, "IBM", "buy", 1, { OrderType: "2", Limit: 240, TIF: "1" }),
      );
      await advanceClock(service, 8 * 3600);
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "C");
      assert.equal((await signal(service, key, gtc.SignalId)).OrderStatus, "0");
      await setClock(service, MARKET_OPEN);
    });

    test("an order placed while the market is closed fills at the open against the quote already there", async () => {
      const strategyId = await newStrategy(service, key);
      await setClock(service, "2026-03-14T15:00:00Z");
      await setQuote(service, "PEP", 150, 150.05);
      const result = await placed(service, key, stockOrder(strategyId, "PEP", "buy", 5));
      assert.equal((await signal(service, key, result.SignalId)).OrderStatus, "0");
      await setClock(service, "2026-03-16T14:00:00Z");
      const order = await signal(service, key, result.SignalId);
      assert.equal(order.OrderStatus, "2");
      assert.equal(order.AvgFillPrice, 150.05);
      await setClock(service, MARKET_OPEN);
    });

    test("the model account: cash pays the fill and its commission; equity, margin used and buying power follow the mark", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "ADBE", 200, 200.05);
      await placed(service, key, stockOrder(strategyId, "ADBE", "buy", 100));
      const account = await modelAccount(service.app.runtime, strategyId);
      assert.deepEqual(
        Object.fromEntries(Object.entries(account).map(([name, value]) => [name, formatDecimal(value)])),
        {
          startingCash: "100000",
          // 100 × 200.05 and the Default plan's $1 minimum.
          cash: "79994",
          // Marked at the middle, 200.025.
          equity: "99996.5",
          marginUsed: "10001.25",
          buyingPower: "179990.5",
        },
      );
      const traded = await service.storage.db
        .selectFrom("strategies")
        .select(["trades_stocks", "trades_futures"])
        .where("id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(traded, { trades_stocks: 1, trades_futures: 0 });
    });

    test("a closing order larger than the position is refused", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "KO", 60, 60.01);
      await placed(service, key, stockOrder(strategyId, "KO", "buy", 10));
      const r = await newOrder(service, key, stockOrder(strategyId, "KO", "sell", 20));
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.ResponseStatus.Errors[0].FieldName, "Order.OrderQuantity");
    });
  });
}
