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
  cancelOrder,
  MARKET_OPEN,
  newOrder,
  newStrategy,
  placed,
  positions,
  replaceOrder,
  setDesiredPositions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

const limit = (price: number, extra: Record<string, unknown> = {}) => ({ OrderType: "2", Limit: price, ...extra });

for (const backend of BACKENDS) {
  describe(`orders: exits of a partly filled entry, and exits on the right side (${backend})`, () => {
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

    test("a partly filled entry's exits work at once for what it filled, and more as it fills", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "PXIT", 99.95, 100, { askSize: 4 });
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "PXIT", "buy", 10, { ProfitTarget: 110, StopLoss: 95 }),
      );
      assert.deepEqual(
        [
          await state(bracket.SignalId),
          await state(bracket.ProfitTargetSignalId),
          await state(bracket.StopLossSignalId),
        ],
        ["1:4", "0:0", "0:0"],
        "the 4 bought are protected at once",
      );
      assert.equal(await held(strategyId), 4);

      // The target is reached while the entry's rest finds no size: it closes the 4, not its 10.
      await setQuote(service, "PXIT", 110, 110.05, { askSize: 0 });
      assert.equal(await state(bracket.ProfitTargetSignalId), "1:4");
      assert.equal(await held(strategyId), 0);
      assert.deepEqual(
        [await state(bracket.SignalId), await state(bracket.StopLossSignalId)],
        ["1:4", "0:0"],
        "flat for a moment, but the entry still works: the exits wait for its next fill",
      );

      await setQuote(service, "PXIT", 99.95, 100);
      assert.equal(await state(bracket.SignalId), "2:10");
      assert.equal(await held(strategyId), 6);
      await setQuote(service, "PXIT", 94.9, 94.95);
      assert.equal(await held(strategyId), 0, "the stop closes the 6 filled since, and no more");
      const stopLoss = await signal(service, key, bracket.StopLossSignalId as number);
      assert.equal(stopLoss.FilledQuantity, 6);
      assert.equal(stopLoss.OrderStatus, "4", "its unfilled rest ends with nothing left to protect");
      assert.match(String(stopLoss.Info), /no longer open/);
      assert.equal(await state(bracket.ProfitTargetSignalId), "4:4");
      assert.deepEqual(await activeOrders(service, key, strategyId), []);
    });

    test("exits outlive the canceled rest of their entry and close only what it filled", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "PXIC", 99.95, 100);
      await placed(service, key, stockOrder(strategyId, "PXIC", "buy", 20));
      await setQuote(service, "PXIC", 99.95, 100, { askSize: 3 });
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "PXIC", "buy", 10, limit(100, { ProfitTarget: 110, StopLoss: 95 })),
      );
      assert.equal(await state(bracket.SignalId), "1:3");
      assert.equal((await cancelOrder(service, key, strategyId, bracket.SignalId)).status, 200);
      assert.deepEqual(
        [
          await state(bracket.SignalId),
          await state(bracket.ProfitTargetSignalId),
          await state(bracket.StopLossSignalId),
        ],
        ["4:3", "0:0", "0:0"],
        "the entry's rest is canceled, its exits keep protecting the 3",
      );
      await setQuote(service, "PXIC", 94.9, 94.95);
      assert.equal(await held(strategyId), 20, "3 of the 23 held: only what the entry filled");
      assert.deepEqual(
        [await state(bracket.StopLossSignalId), await state(bracket.ProfitTargetSignalId)],
        ["4:3", "4:0"],
      );
    });

    test("replacing a partly filled entry leaves its working exits with the filled part; the replacement may take its own", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "PXIR", 99.95, 100, { askSize: 4 });
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "PXIR", "buy", 10, limit(100, { ProfitTarget: 110, StopLoss: 95 })),
      );
      await setQuote(service, "PXIR", 100.45, 100.5, { askSize: 0 });
      const r = await replaceOrder(
        service,
        key,
        stockOrder(
          strategyId,
          "PXIR",
          "buy",
          6,
          limit(100.5, { CancelReplaceSignalId: bracket.SignalId, ProfitTarget: 112, StopLoss: 96 }),
        ),
      );
      assert.equal(r.status, 200, r.text);
      const replacement = r.json.Results[0];
      assert.ok(replacement.ProfitTargetSignalId && replacement.StopLossSignalId);
      assert.notEqual(replacement.StopLossSignalId, bracket.StopLossSignalId);
      const oldStop = await signal(service, key, bracket.StopLossSignalId as number);
      assert.equal(oldStop.ParentSignalId, bracket.SignalId);
      assert.equal(oldStop.OrderStatus, "0");
      assert.equal(await state(replacement.StopLossSignalId), "A:0", "held until the replacement fills");
      await setQuote(service, "PXIR", 100.45, 100.5);
      assert.equal(await held(strategyId), 10);
      await setQuote(service, "PXIR", 94.9, 94.95);
      assert.equal(await held(strategyId), 0, "each stop closes its own part");
      assert.equal((await signal(service, key, bracket.StopLossSignalId as number)).FilledQuantity, 4);
      assert.equal((await signal(service, key, replacement.StopLossSignalId)).FilledQuantity, 6);
    });

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

    test("every refusal of a stop loss names Order.StopLoss, beside Order.ProfitTarget when both are at fault", async () => {
      const strategyId = await newStrategy(service, key);
      const fieldsOf = (r: { json: { ResponseStatus: { Errors: { FieldName: string }[] } } }) =>
        r.json.ResponseStatus.Errors.map((e) => e.FieldName).sort();
      const crossed = await newOrder(
        service,
        key,
        stockOrder(strategyId, "SLNM", "buy", 10, { ProfitTarget: 50, StopLoss: 55 }),
      );
      assertRefused(crossed, 400, "1101");
      assert.deepEqual(fieldsOf(crossed), ["Order.ProfitTarget", "Order.StopLoss"], "no quote: they cross each other");

      await setQuote(service, "SLNM", 60, 60.02);
      await placed(service, key, stockOrder(strategyId, "SLNM", "buy", 10));
      const closingStop = await newOrder(service, key, stockOrder(strategyId, "SLNM", "sell", 10, { StopLoss: 61 }));
      assertRefused(closingStop, 400, "1101");
      assert.deepEqual(fieldsOf(closingStop), ["Order.StopLoss"]);
      const closingBoth = await newOrder(
        service,
        key,
        stockOrder(strategyId, "SLNM", "sell", 10, { ProfitTarget: 55, StopLoss: 61 }),
      );
      assert.deepEqual(fieldsOf(closingBoth), ["Order.ProfitTarget", "Order.StopLoss"]);

      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "SLNM", "buy", 5, limit(59, { ProfitTarget: 65, StopLoss: 55 })),
      );
      const replacing = (extra: Record<string, unknown>) =>
        replaceOrder(
          service,
          key,
          stockOrder(strategyId, "SLNM", "buy", 5, limit(58, { CancelReplaceSignalId: bracket.SignalId, ...extra })),
        );
      const newStop = await replacing({ StopLoss: 54 });
      assertRefused(newStop, 400, "1101");
      assert.deepEqual(fieldsOf(newStop), ["Order.StopLoss"], "held exits pass to the replacement");
      assert.deepEqual(fieldsOf(await replacing({ ProfitTarget: 64, StopLoss: 54 })), [
        "Order.ProfitTarget",
        "Order.StopLoss",
      ]);
    });

    test("SetDesiredPositions cancels a partly filled entry's working exits with every other live order", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "PXID", 99.95, 100, { askSize: 4 });
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "PXID", "buy", 10, { ProfitTarget: 110, StopLoss: 95 }),
      );
      const r = await setDesiredPositions(service, key, strategyId, []);
      assert.equal(r.status, 200, r.text);
      const canceled = (r.json.Results[0].CanceledSignals as { SignalId: number }[]).map((o) => o.SignalId);
      assert.deepEqual(
        canceled.sort((a, b) => a - b),
        [bracket.SignalId, bracket.ProfitTargetSignalId, bracket.StopLossSignalId],
      );
      assert.deepEqual(await activeOrders(service, key, strategyId), []);
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
