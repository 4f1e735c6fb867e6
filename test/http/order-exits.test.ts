import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { legacyCall } from "../helpers/legacy.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import {
  activeOrders,
  assertRefused,
  MARKET_OPEN,
  newOrder,
  newStrategy,
  placed,
  positions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

const limit = (price: number, extra: Record<string, unknown> = {}) => ({ OrderType: "2", Limit: price, ...extra });

for (const backend of BACKENDS) {
  describe(`orders: exits on the right side of the entry (${backend})`, () => {
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

    const held = async (strategyId: number) => (await positions(service, key, strategyId))[0]?.Quantity ?? 0;
    const state = async (signalId: number | null) => {
      const order = await signal(service, key, signalId as number);
      return `${order.OrderStatus}:${order.FilledQuantity}`;
    };

    test("a profit target or stop loss on the wrong side of the price the entry fills at is refused (1101)", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "WSID", 60, 60.02);
      const refused = async (order: Record<string, unknown>, field: string) =>
        assertRefused(await newOrder(service, key, order), 400, "1101", field);
      await refused(stockOrder(strategyId, "WSID", "buy", 10, { ProfitTarget: 55 }), "Order.ProfitTarget");
      const r = await newOrder(service, key, stockOrder(strategyId, "WSID", "buy", 10, { ProfitTarget: 60.02 }));
      assertRefused(r, 400, "1101", "Order.ProfitTarget");
      assert.match(r.json.ResponseStatus.Errors[0].Message, /above the ask 60\.02/);
      await refused(stockOrder(strategyId, "WSID", "buy", 10, { StopLoss: 60.05 }), "Order.StopLoss");
      await refused(stockOrder(strategyId, "WSID", "sell", 10, { ProfitTarget: 60.01 }), "Order.ProfitTarget");
      await refused(stockOrder(strategyId, "WSID", "sell", 10, { StopLoss: 60 }), "Order.StopLoss");
      await refused(stockOrder(strategyId, "WSID", "buy", 10, limit(59, { StopLoss: 59.5 })), "Order.StopLoss");
      const both = await newOrder(
        service,
        key,
        stockOrder(strategyId, "WSID", "buy", 10, limit(59, { ProfitTarget: 58, StopLoss: 59.5 })),
      );
      assertRefused(both, 400, "1101", "Order.ProfitTarget");
      assertRefused(both, 400, "1101", "Order.StopLoss");
      assert.deepEqual(await activeOrders(service, key, strategyId), [], "nothing of a refused order is stored");
      assert.equal(await held(strategyId), 0);

      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "WSID", "buy", 10, { ProfitTarget: 60.03, StopLoss: 59.99 }),
      );
      assert.deepEqual(
        [await state(bracket.ProfitTargetSignalId), await state(bracket.StopLossSignalId)],
        ["0:0", "0:0"],
        "one tick beyond the ask on each side: both wait",
      );
    });

    test("a market entry with no quote known is checked only for its exits' order: they wait for the fill", async () => {
      const strategyId = await newStrategy(service, key);
      assertRefused(
        await newOrder(service, key, stockOrder(strategyId, "NOQT", "buy", 10, { ProfitTarget: 50, StopLoss: 55 })),
        400,
        "1101",
        "Order.ProfitTarget",
      );
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "NOQT", "buy", 10, { ProfitTarget: 55, StopLoss: 50 }),
      );
      assert.deepEqual([await state(bracket.SignalId), await state(bracket.ProfitTargetSignalId)], ["0:0", "A:0"]);
      await setQuote(service, "NOQT", 60, 60.02);
      assert.deepEqual(
        [await state(bracket.SignalId), await state(bracket.ProfitTargetSignalId)],
        ["2:10", "2:10"],
        "filled beyond its target: the target closes the fill at the market at once",
      );
      assert.equal(await held(strategyId), 0);
    });

    test("legacy submitSignal refuses exits on the wrong side with ok 0 and the message", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "LSID", 60, 60.02);
      const submit = (signal: Record<string, unknown>) =>
        legacyCall(
          service,
          "submitSignal",
          { systemid, signal: { action: "BTO", quant: 10, symbol: "LSID", typeofsymbol: "stock", ...signal } },
          key,
        );
      const target = await submit({ market: 1, profittarget: 55 });
      assert.equal(target.ok, 0, JSON.stringify(target));
      assert.equal(target.error.title, "Invalid signal");
      assert.match(target.error.message, /profit target of a buy entry must be above the ask 60\.02/);
      const stop = await submit({ limit: 59, stoploss: 59.5 });
      assert.equal(stop.ok, 0, JSON.stringify(stop));
      assert.match(stop.error.message, /stop loss of a buy entry must be below its limit 59/);
      assert.deepEqual(await activeOrders(service, key, systemid), []);
      const placedSignal = await submit({ market: 1, profittarget: 61, stoploss: 59 });
      assert.equal(placedSignal.ok, 1, JSON.stringify(placedSignal));
    });
  });
}
