import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { legacyCall } from "../helpers/legacy.js";
import {
  BACKENDS,
  type CallResult,
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
  setDesiredPositions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

/**
 * Prices and quantities as clients of the original service send them: JSON
 * numbers computed in binary floating point carry noise and are rounded to
 * eight places; text is read exactly; the tick grid still holds.
 */
const NOISY_MIDDLE = (100 + 100.02) / 2;

const messageOf = (r: CallResult, field: string): string => {
  assert.equal(r.status, 400, r.text);
  const entry = (r.json.ResponseStatus.Errors as { FieldName: string; Message: string }[]).find(
    (e) => e.FieldName === field,
  );
  assert.ok(entry, r.text);
  return entry.Message;
};

for (const backend of BACKENDS) {
  describe(`prices and quantities with binary noise (${backend})`, () => {
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

    test("NewStrategyOrder: a noisy JSON number is rounded half-even to eight places and checked on the tick grid", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "NOIS", 101, 101.02);
      assert.equal(NOISY_MIDDLE, 100.00999999999999);
      const limit = { OrderType: "2", Limit: NOISY_MIDDLE };
      const made = await placed(service, key, stockOrder(strategyId, "NOIS", "buy", 30.000000000000004, limit));
      const order = await signal(service, key, made.SignalId);
      assert.deepEqual([order.Limit, order.OrderQuantity], [100.01, 30]);
      // 100.00500000000099, rounded to 100.005: off the cent grid, refused as any such price is.
      const offGrid = await newOrder(
        service,
        key,
        stockOrder(strategyId, "NOIS", "buy", 1, { OrderType: "2", Limit: 100.005 + 1e-12 }),
      );
      assert.match(messageOf(offGrid, "Order.Limit"), /multiple of the tick size 0\.01/);
      assert.equal((await activeOrders(service, key, strategyId)).length, 1);
    });

    test("NewStrategyOrder: text is exact (more than eight places refused); numbers too large or too small say so", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "TEXT", 99, 99.02);
      const order = (extra: Record<string, unknown>) =>
        stockOrder(strategyId, "TEXT", "buy", 1, { OrderType: "2", ...extra });
      const text = await newOrder(service, key, order({ Limit: "100.00999999999999" }));
      assert.equal(messageOf(text, "Order.Limit"), "Order.Limit has more than 8 decimal places");
      const huge = await newOrder(service, key, order({ Limit: 1e308 }));
      assert.equal(messageOf(huge, "Order.Limit"), "Order.Limit is too large: at most 1000000000");
      const hugeText = await newOrder(service, key, order({ Limit: "1e308" }));
      assert.equal(messageOf(hugeText, "Order.Limit"), "Order.Limit is too large: at most 1000000000");
      const tiny = await newOrder(service, key, order({ Limit: 1e-300 }));
      assert.equal(messageOf(tiny, "Order.Limit"), "Order.Limit is smaller than the smallest unit, 0.00000001");
      const tinyQuantity = await newOrder(service, key, order({ Limit: 98, OrderQuantity: "1e-300" }));
      assert.equal(
        messageOf(tinyQuantity, "Order.OrderQuantity"),
        "Order.OrderQuantity is smaller than the smallest unit, 0.00000001",
      );
      const words = await newOrder(service, key, order({ Limit: "cheap" }));
      assert.equal(messageOf(words, "Order.Limit"), "Order.Limit must be a number");
      const flag = await newOrder(service, key, order({ Limit: true }));
      assert.equal(messageOf(flag, "Order.Limit"), "Order.Limit must be a number or a string");
      const negative = await newOrder(service, key, order({ Limit: -5 }));
      assert.equal(messageOf(negative, "Order.Limit"), "Limit must be positive");
      assertRefused(
        await newOrder(service, key, order({ Limit: 98, OrderQuantity: 0 })),
        400,
        "1101",
        "Order.OrderQuantity",
      );
      const exact = await placed(service, key, order({ Limit: "98.50000000", OrderQuantity: "2" }));
      assert.deepEqual([(await signal(service, key, exact.SignalId)).Limit], [98.5]);
      // Codes as numbers, as those clients send them.
      const coded = await placed(service, key, { ...order({ Limit: 98, OrderType: 2 }), Side: 1, TIF: 0 });
      const read = await signal(service, key, coded.SignalId);
      assert.deepEqual([read.OrderType, read.Side, read.TIF], ["2", "1", "0"]);
    });

    test("SetDesiredPositions: noisy quantities are whole after rounding; text with more places is refused", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "DSRD", 50, 50.02);
      const want = (quantity: number | string) => [
        { ServiceSymbol: { FullSymbol: "DSRD", SymbolType: "stock" }, Quantity: quantity },
      ];
      const r = await setDesiredPositions(service, key, strategyId, want(0.1 * 3 * 100), "GEN");
      assert.equal(0.1 * 3 * 100, 30.000000000000004);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.Results[0].NewSignals[0].OrderQuantity, 30);
      assert.deepEqual(
        (await positions(service, key, strategyId)).map((p) => p.Quantity),
        [30],
      );
      const text = await setDesiredPositions(service, key, strategyId, want("30.000000000000004"), "GEN");
      assert.equal(messageOf(text, "Positions[0].Quantity"), "Positions[0].Quantity has more than 8 decimal places");
      const huge = await setDesiredPositions(service, key, strategyId, want(-1e308), "GEN");
      assert.equal(messageOf(huge, "Positions[0].Quantity"), "Positions[0].Quantity is too large: at most 1000000000");
      assert.deepEqual(
        (await positions(service, key, strategyId)).map((p) => p.Quantity),
        [30],
      );
    });

    test("legacy submitSignal: noisy numbers are rounded, text is exact, extremes are named", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "LGCY", 101, 101.02);
      const submit = (signal: Record<string, unknown>) =>
        legacyCall(
          service,
          "submitSignal",
          { systemid, signal: { action: "BTO", symbol: "LGCY", typeofsymbol: "stock", duration: "GTC", ...signal } },
          key,
        );
      const noisy = await submit({ quant: 10.000000000000002, limit: NOISY_MIDDLE });
      assert.equal(noisy.ok, 1, JSON.stringify(noisy));
      assert.deepEqual([noisy.signal.limit, noisy.signal.quant], ["100.01", "10"]);
      const order = await signal(service, key, Number(noisy.signalid));
      assert.deepEqual([order.Limit, order.OrderQuantity], [100.01, 10]);
      const text = await submit({ quant: 1, limit: "100.00999999999999" });
      assert.deepEqual([text.ok, text.error.title], [0, "Invalid signal"]);
      assert.equal(text.error.message, "signal.limit has more than 8 decimal places");
      const huge = await submit({ quant: 1e308, limit: 100 });
      assert.equal(huge.error.message, "signal.quant is too large: at most 1000000000");
      const tiny = await submit({ quant: 1, limit: 1e-300 });
      assert.equal(tiny.error.message, "signal.limit is smaller than the smallest unit, 0.00000001");
      const offGrid = await submit({ quant: 1, limit: 100.005 + 1e-12 });
      assert.deepEqual([offGrid.ok, offGrid.error.title], [0, "Invalid signal"]);
      assert.match(offGrid.error.message, /tick size/);
      assert.equal((await activeOrders(service, key, systemid)).length, 1);
    });

    test("legacy setDesiredPositions: a noisy quant is rounded", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "LDSR", 20, 20.02);
      const r = await legacyCall(
        service,
        "setDesiredPositions",
        { systemid, positions: [{ symbol: "LDSR", typeofsymbol: "stock", quant: 0.1 * 3 * 100 }] },
        key,
      );
      assert.equal(r.ok, 1, JSON.stringify(r));
      assert.equal(r.response[0].quant, "30");
      const text = await legacyCall(
        service,
        "setDesiredPositions",
        { systemid, positions: [{ symbol: "LDSR", typeofsymbol: "stock", quant: "30.000000000000004" }] },
        key,
      );
      assert.equal(text.error.message, "positions[0].quant has more than 8 decimal places");
    });
  });
}
