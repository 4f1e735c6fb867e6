import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
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

/** AAPL's March 2026 calls and puts at 150 expire Friday the 20th; the March E-mini trades through the 31st. */
const CALL = "AAPL260320C00150000";
const PUT = "AAPL260320P00150000";
const ES = "@ESH26";
/** Friday 2026-03-20, 15:00 New York: the options' last day, still trading. */
const EXPIRY_DAY = "2026-03-20T19:00:00Z";
/** Midnight in New York after it: the options can no longer trade. */
const AFTER_EXPIRY = "2026-03-21T04:00:00Z";
/** Midnight in New York after March 31st: the March E-mini can no longer trade. */
const AFTER_MARCH = "2026-04-01T04:00:00Z";

const limit = (price: number) => ({ OrderType: "2", Limit: price });

for (const backend of BACKENDS) {
  describe(`contract expiry: options and futures settle when they expire (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
    });
    beforeEach(() => setClock(service, MARKET_OPEN));
    after(() => service.close());

    const historical = async (strategyId: number) => {
      const r = await service.call("GEN", "GET", "/Strategies/GetStrategyHistoricalOrders", {
        key,
        query: { StrategyId: String(strategyId) },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Record<string, unknown>[];
    };
    const closedTrades = async (strategyId: number) => {
      const r = await service.call("GEN", "GET", "/Strategies/GetStrategyHistoricalClosedTrades", {
        key,
        query: { StrategyId: String(strategyId) },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Record<string, unknown>[];
    };
    const held = async (strategyId: number) =>
      (await positions(service, key, strategyId)).map((p) => [p.ServiceSymbol.FullSymbol, p.Quantity]);
    const settlements = async (strategyId: number) =>
      (await historical(strategyId))
        .filter((o) => o.SignalType === 7)
        .map((o) => ({
          symbol: (o.ServiceSymbol as { FullSymbol: string }).FullSymbol,
          status: o.OrderStatus,
          side: o.Side,
          openClose: o.OpenClose,
          quantity: o.OrderQuantity,
          price: o.AvgFillPrice,
          info: o.Info,
        }));

    test("options settle at their value against the underlying's close, and their working orders expire", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "AAPL", 155, 155.05);
      await setQuote(service, CALL, 5, 5.1);
      await setQuote(service, PUT, 2, 2.1);
      await placed(service, key, stockOrder(strategyId, CALL, "buy", 2));
      await placed(service, key, stockOrder(strategyId, PUT, "sell", 3));
      await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 10));
      const resting = await placed(service, key, stockOrder(strategyId, CALL, "sell", 2, limit(20)));
      assert.deepEqual(await held(strategyId), [
        ["AAPL", 10],
        [CALL, 2],
        [PUT, -3],
      ]);
      // AAPL closes its expiry day at 160: the call is 10 in the money, the put out of it.
      await setQuote(service, "AAPL", 159.9, 160.1);
      await setClock(service, EXPIRY_DAY);
      assert.equal((await held(strategyId)).length, 3, "still trading on its expiry day");
      assert.deepEqual(await settlements(strategyId), []);

      await setClock(service, AFTER_EXPIRY);
      assert.deepEqual(await held(strategyId), [["AAPL", 10]], "the stock is left alone");
      const expired = await signal(service, key, resting.SignalId);
      assert.equal(expired.OrderStatus, "C");
      assert.equal(expired.Info, "Expired: its contract expired");
      assert.deepEqual(await activeOrders(service, key, strategyId), []);
      assert.deepEqual(await settlements(strategyId), [
        {
          symbol: CALL,
          status: "2",
          side: "2",
          openClose: "C",
          quantity: 2,
          price: 10,
          info: "Settled at expiry: in the money against AAPL at 160",
        },
        {
          symbol: PUT,
          status: "2",
          side: "1",
          openClose: "C",
          quantity: 3,
          price: 0,
          info: "Expired worthless: out of the money against AAPL at 160",
        },
      ]);
      const trades = await closedTrades(strategyId);
      const bySymbol = new Map(trades.map((t) => [(t.ServiceSymbol as { FullSymbol: string }).FullSymbol, t]));
      const call = bySymbol.get(CALL);
      const put = bySymbol.get(PUT);
      assert.equal(call?.AvgCloseFillPrice, 10);
      assert.equal(put?.AvgCloseFillPrice, 0);
      // Before commissions: (10 − 5.10) × 2 × 100 and 2 × 3 × 100 kept; the settlements themselves cost nothing.
      assert.equal(Math.round(((call?.ProfitLoss as number) + (call?.Commission as number)) * 100) / 100, 980);
      assert.equal(Math.round(((put?.ProfitLoss as number) + (put?.Commission as number)) * 100) / 100, 600);
      assert.equal(call?.CloseSide, "2");

      // The legacy API lists the settlements as traded signals.
      const signals = await legacyCall(service, "retrieveSignalsAll", { systemid: strategyId }, key);
      assert.equal(signals.ok, 1, JSON.stringify(signals));
      const traded = (signals.response as { symbol: string; action: string; status: string; traded_price: string }[])
        .filter((s) => s.symbol === CALL || s.symbol === PUT)
        .map((s) => [s.action, s.symbol, s.status, Number(s.traded_price)]);
      assert.deepEqual(
        traded.filter(([action, , status]) => (action === "STC" || action === "BTC") && status === "traded"),
        [
          ["STC", CALL, "traded", 10],
          ["BTC", PUT, "traded", 0],
        ],
      );
    });

    test("a future settles at its last price after its contract month; orders in it are refused from then", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, ES, 5000, 5000.25);
      await placed(service, key, stockOrder(strategyId, ES, "buy", 1));
      await setQuote(service, ES, 5099.75, 5100.25);
      await setClock(service, "2026-03-31T20:00:00Z");
      assert.deepEqual(await held(strategyId), [[ES, 1]]);
      await setClock(service, AFTER_MARCH);
      assert.deepEqual(await held(strategyId), []);
      assert.deepEqual(await settlements(strategyId), [
        {
          symbol: ES,
          status: "2",
          side: "2",
          openClose: "C",
          quantity: 1,
          price: 5100,
          info: "Settled at expiry at the contract's last price",
        },
      ]);
      const late = await newOrder(service, key, stockOrder(strategyId, ES, "buy", 1));
      assertRefused(late, 400, "1121", "Order.ServiceSymbol");
      const [trade] = await closedTrades(strategyId);
      // (5100 − 5000.25) × 50 before the opening fill's commission.
      assert.equal(Math.round(((trade?.ProfitLoss as number) + (trade?.Commission as number)) * 100) / 100, 4987.5);
    });

    test("a desired portfolio holding an option no longer lists it once it has expired and settled", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "AAPL", 155, 155.05);
      await setQuote(service, CALL, 5, 5.1);
      const engaged = await legacyCall(
        service,
        "setDesiredPositions",
        {
          systemid,
          positions: [
            { symbol: "AAPL", typeofsymbol: "stock", quant: 10 },
            { symbol: CALL, typeofsymbol: "option", quant: 2 },
          ],
        },
        key,
      );
      assert.equal(engaged.ok, 1, JSON.stringify(engaged));
      const desired = async () =>
        ((await legacyCall(service, "getDesiredPositions", { systemid }, key)).response as { symbol: string }[]).map(
          (p) => p.symbol,
        );
      await setClock(service, EXPIRY_DAY);
      assert.deepEqual(await desired(), ["AAPL", CALL]);
      await setClock(service, AFTER_EXPIRY);
      assert.deepEqual(await held(systemid), [["AAPL", 10]]);
      assert.deepEqual(await desired(), ["AAPL"], "the mode still holds the stock, and nothing in the expired call");
      const again = await legacyCall(
        service,
        "setDesiredPositions",
        { systemid, positions: [{ symbol: CALL, typeofsymbol: "option", quant: 2 }] },
        key,
      );
      assert.equal(again.ok, 0, "an expired contract cannot be asked for");
    });

    test("after a restart, a position in a contract that expires settles from what was stored", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, CALL, 1, 1.1);
      await placed(service, key, stockOrder(strategyId, CALL, "buy", 1));
      service = await service.restart();
      // Hand quotes live in memory: the scenario sets the underlying's again.
      await setQuote(service, "AAPL", 140, 140.05);
      await setClock(service, AFTER_EXPIRY);
      assert.deepEqual(await held(strategyId), []);
      assert.deepEqual(
        (await settlements(strategyId)).map((s) => [s.symbol, s.price, s.info]),
        [[CALL, 0, "Expired worthless: out of the money against AAPL at 140.025"]],
      );
    });
  });
}
