import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
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
  assertRefused,
  cancelOrder,
  MARKET_OPEN,
  newOrder,
  newStrategy,
  placed,
  positions,
  replaceOrder,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

/** Saturday noon in New York: every market of the scenarios is closed. */
const SATURDAY = "2026-03-14T16:00:00Z";
/** Monday 09:30 New York: US stocks open. */
const MONDAY_OPEN = "2026-03-16T13:30:00Z";
/** Monday 16:00 New York: US stocks close. */
const MONDAY_CLOSE = "2026-03-16T20:00:00Z";

const limit = (price: number, extra: Record<string, unknown> = {}) => ({ OrderType: "2", Limit: price, ...extra });
const stop = (price: number, extra: Record<string, unknown> = {}) => ({ OrderType: "3", Stop: price, ...extra });

for (const backend of BACKENDS) {
  describe(`orders: lifecycle scenarios through HTTP (${backend})`, () => {
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

    test("a market sell short opens at the bid; a buy to cover closes it; OpenClose is inferred O then C", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "SHRT", 50, 50.05);
      const short = await placed(service, key, stockOrder(strategyId, "SHRT", "sell", 100));
      const opened = await signal(service, key, short.SignalId);
      assert.equal(opened.OrderStatus, "2");
      assert.equal(opened.Side, "2");
      assert.equal(opened.OpenClose, "O");
      assert.equal(opened.AvgFillPrice, 50);
      assert.equal(opened.FilledQuantity, 100);
      const held = await positions(service, key, strategyId);
      assert.equal(held.length, 1);
      assert.equal(held[0]?.Quantity, -100);
      assert.equal(held[0]?.AvgPx, 50);

      await setQuote(service, "SHRT", 48.9, 49);
      const cover = await placed(service, key, stockOrder(strategyId, "SHRT", "buy", 100));
      const closed = await signal(service, key, cover.SignalId);
      assert.equal(closed.OrderStatus, "2");
      assert.equal(closed.OpenClose, "C");
      assert.equal(closed.AvgFillPrice, 49);
      assert.deepEqual(await positions(service, key, strategyId), []);
    });

    test("a limit buy gapped through fills at the better ask; a limit sell at the better bid", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "GAPB", 100.95, 101);
      const buy = await placed(service, key, stockOrder(strategyId, "GAPB", "buy", 10, limit(100)));
      assert.equal((await signal(service, key, buy.SignalId)).OrderStatus, "0");
      await setQuote(service, "GAPB", 97.95, 98);
      const bought = await signal(service, key, buy.SignalId);
      assert.equal(bought.OrderStatus, "2");
      assert.equal(bought.AvgFillPrice, 98);

      await setQuote(service, "GAPS", 99, 99.05);
      const sell = await placed(service, key, stockOrder(strategyId, "GAPS", "sell", 10, limit(100)));
      assert.equal((await signal(service, key, sell.SignalId)).OrderStatus, "0");
      await setQuote(service, "GAPS", 102, 102.05);
      const sold = await signal(service, key, sell.SignalId);
      assert.equal(sold.OrderStatus, "2");
      assert.equal(sold.AvgFillPrice, 102);
    });

    test("stops trigger at the stop and fill at the worse of stop and market; an untriggered stop keeps working", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "STPB", 99.95, 100);
      const buyStop = await placed(service, key, stockOrder(strategyId, "STPB", "buy", 10, stop(105)));
      const farStop = await placed(service, key, stockOrder(strategyId, "STPB", "buy", 10, stop(120)));
      await setQuote(service, "STPB", 104.9, 104.95);
      assert.equal((await signal(service, key, buyStop.SignalId)).OrderStatus, "0");
      await setQuote(service, "STPB", 106.5, 106.6);
      const bought = await signal(service, key, buyStop.SignalId);
      assert.equal(bought.OrderStatus, "2");
      assert.equal(bought.AvgFillPrice, 106.6, "a gap above the stop fills at the ask");
      assert.equal((await signal(service, key, farStop.SignalId)).OrderStatus, "0");

      await setQuote(service, "STPS", 100, 100.05);
      const sellStop = await placed(service, key, stockOrder(strategyId, "STPS", "sell", 10, stop(95)));
      await setQuote(service, "STPS", 95.01, 95.06);
      assert.equal((await signal(service, key, sellStop.SignalId)).OrderStatus, "0");
      await setQuote(service, "STPS", 93, 93.05);
      const sold = await signal(service, key, sellStop.SignalId);
      assert.equal(sold.OrderStatus, "2");
      assert.equal(sold.AvgFillPrice, 93, "a gap below the stop fills at the bid");

      await setQuote(service, "STPT", 50, 50.05);
      const touched = await placed(service, key, stockOrder(strategyId, "STPT", "sell", 10, stop(48)));
      await setQuote(service, "STPT", 48, 48.05);
      assert.equal((await signal(service, key, touched.SignalId)).AvgFillPrice, 48, "touched exactly: the stop");
    });

    test("a quote's size caps the fill: partial fills until the order is complete", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "PART", 49.95, 50, { askSize: 30 });
      const order = await placed(service, key, stockOrder(strategyId, "PART", "buy", 100));
      let state = await signal(service, key, order.SignalId);
      assert.equal(state.OrderStatus, "1");
      assert.equal(state.FilledQuantity, 30);
      assert.equal((await positions(service, key, strategyId))[0]?.Quantity, 30);
      await setQuote(service, "PART", 50, 50.05, { askSize: 50 });
      state = await signal(service, key, order.SignalId);
      assert.equal(state.OrderStatus, "1");
      assert.equal(state.FilledQuantity, 80);
      await setQuote(service, "PART", 50.05, 50.1);
      state = await signal(service, key, order.SignalId);
      assert.equal(state.OrderStatus, "2");
      assert.equal(state.FilledQuantity, 100);
      assert.equal(state.AvgFillPrice, (30 * 50 + 50 * 50.05 + 20 * 50.1) / 100);
      assert.equal((await activeOrders(service, key, strategyId)).length, 0);
    });

    test("two orders on one symbol share a quote's size", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "SHRE", 50.95, 51);
      const first = await placed(service, key, stockOrder(strategyId, "SHRE", "buy", 100, limit(50)));
      const second = await placed(service, key, stockOrder(strategyId, "SHRE", "buy", 100, limit(50)));
      await setQuote(service, "SHRE", 49.95, 50, { askSize: 120 });
      const a = await signal(service, key, first.SignalId);
      const b = await signal(service, key, second.SignalId);
      assert.equal(a.FilledQuantity + b.FilledQuantity, 120);
      assert.equal(a.FilledQuantity, 100, "the older order first");
      assert.equal(b.OrderStatus, "1");
      assert.equal((await positions(service, key, strategyId))[0]?.Quantity, 120);
    });

    test("an order placed later does not take again the size an earlier order took from the same quote", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "TWIC", 49.95, 50, { askSize: 30 });
      const first = await placed(service, key, stockOrder(strategyId, "TWIC", "buy", 100));
      assert.equal((await signal(service, key, first.SignalId)).FilledQuantity, 30);
      const second = await placed(service, key, stockOrder(strategyId, "TWIC", "buy", 100));
      const a = await signal(service, key, first.SignalId);
      const b = await signal(service, key, second.SignalId);
      assert.equal(a.FilledQuantity + b.FilledQuantity, 30, "a 30-share quote fills 30 shares in all");
      assert.equal((await positions(service, key, strategyId))[0]?.Quantity, 30);
    });

    test("a second hand quote at the same prices but a new size is new liquidity for a partial fill", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "SAME", 49.95, 50, { askSize: 30 });
      const order = await placed(service, key, stockOrder(strategyId, "SAME", "buy", 100));
      assert.equal((await signal(service, key, order.SignalId)).FilledQuantity, 30);
      await setQuote(service, "SAME", 49.95, 50, { askSize: 40 });
      assert.equal((await signal(service, key, order.SignalId)).FilledQuantity, 70);
    });

    test("while the market is closed an order works without filling; it fills at Monday's open", async () => {
      const strategyId = await newStrategy(service, key);
      await setClock(service, SATURDAY);
      const order = await placed(service, key, stockOrder(strategyId, "SATO", "buy", 10));
      const unquoted = await placed(service, key, stockOrder(strategyId, "SATU", "buy", 10));
      assert.equal((await signal(service, key, order.SignalId)).OrderStatus, "0");
      await setQuote(service, "SATO", 20, 20.05);
      assert.equal((await signal(service, key, order.SignalId)).OrderStatus, "0");
      assert.equal((await activeOrders(service, key, strategyId)).length, 2);
      assert.deepEqual(await positions(service, key, strategyId), []);
      await setClock(service, "2026-03-16T13:29:59Z");
      assert.equal((await signal(service, key, order.SignalId)).OrderStatus, "0", "still closed at 09:29:59");
      await setClock(service, MONDAY_OPEN);
      const filled = await signal(service, key, order.SignalId);
      assert.equal(filled.OrderStatus, "2", "the quote standing at the open fills it");
      assert.equal(filled.AvgFillPrice, 20.05);
      assert.equal((await signal(service, key, unquoted.SignalId)).OrderStatus, "0");
      await setQuote(service, "SATU", 21, 21.05);
      const later = await signal(service, key, unquoted.SignalId);
      assert.equal(later.OrderStatus, "2");
      assert.equal(later.AvgFillPrice, 21.05);
    });

    test("a bracket whose stop loss is hit: the stop loss fills, the profit target is canceled, the position is flat", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "BRKS", 99.95, 100);
      const result = await placed(
        service,
        key,
        stockOrder(strategyId, "BRKS", "buy", 50, { ProfitTarget: 110, StopLoss: 95 }),
      );
      assert.ok(result.ProfitTargetSignalId && result.StopLossSignalId && result.ExitSignalsOCAGroupId);
      assert.equal((await signal(service, key, result.SignalId)).OrderStatus, "2");
      const sl = await signal(service, key, result.StopLossSignalId);
      assert.equal(sl.OrderStatus, "0");
      assert.equal(sl.SignalType, 5);
      assert.equal(sl.OpenClose, "C");
      assert.equal(sl.ParentSignalId, result.SignalId);
      assert.equal((await signal(service, key, result.ProfitTargetSignalId)).SignalType, 4);
      await setQuote(service, "BRKS", 94, 94.05);
      const stopped = await signal(service, key, result.StopLossSignalId);
      assert.equal(stopped.OrderStatus, "2");
      assert.equal(stopped.AvgFillPrice, 94);
      assert.equal((await signal(service, key, result.ProfitTargetSignalId)).OrderStatus, "4");
      assert.deepEqual(await positions(service, key, strategyId), []);
    });

    test("DoNotCreateOCAGroup: both exits work without a group; once flat the other exit is canceled with a note", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "DNOC", 99.95, 100);
      const result = await placed(
        service,
        key,
        stockOrder(strategyId, "DNOC", "buy", 50, { ProfitTarget: 110, StopLoss: 95, DoNotCreateOCAGroup: true }),
      );
      assert.equal(result.ExitSignalsOCAGroupId, null);
      assert.ok(result.ProfitTargetSignalId && result.StopLossSignalId);
      const pt = await signal(service, key, result.ProfitTargetSignalId);
      assert.equal(pt.OrderStatus, "0");
      assert.equal(pt.DoNotCreateOCAGroup, true);
      assert.equal((await signal(service, key, result.StopLossSignalId)).OrderStatus, "0");
      await setQuote(service, "DNOC", 110.5, 110.55);
      assert.equal((await signal(service, key, result.ProfitTargetSignalId)).OrderStatus, "2");
      const sl = await signal(service, key, result.StopLossSignalId);
      assert.equal(sl.OrderStatus, "4");
      assert.match(String(sl.Info), /no longer open/);
      assert.deepEqual(await positions(service, key, strategyId), []);
    });

    test("canceling a bracket's entry cancels its held exits; a filled order cannot be canceled; an unknown one is 404", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "CXLB", 99.95, 100);
      const result = await placed(
        service,
        key,
        stockOrder(strategyId, "CXLB", "buy", 50, limit(90, { ProfitTarget: 110, StopLoss: 85 })),
      );
      assert.ok(result.ProfitTargetSignalId && result.StopLossSignalId);
      assert.equal((await signal(service, key, result.StopLossSignalId)).OrderStatus, "A");
      const canceled = await cancelOrder(service, key, strategyId, result.SignalId);
      assert.equal(canceled.status, 200, canceled.text);
      assert.equal(canceled.json.Results[0].SignalId, result.SignalId);
      assert.equal((await signal(service, key, result.SignalId)).OrderStatus, "4");
      assert.equal((await signal(service, key, result.ProfitTargetSignalId)).OrderStatus, "4");
      assert.equal((await signal(service, key, result.StopLossSignalId)).OrderStatus, "4");
      assert.deepEqual(await activeOrders(service, key, strategyId), []);

      const filled = await placed(service, key, stockOrder(strategyId, "CXLB", "buy", 5));
      assert.equal((await signal(service, key, filled.SignalId)).OrderStatus, "2");
      assertRefused(await cancelOrder(service, key, strategyId, filled.SignalId), 409, "2011", "SignalId");
      assertRefused(await cancelOrder(service, key, strategyId, 987_654_321), 404, "2013");
      assertRefused(await cancelOrder(service, key, strategyId, result.SignalId), 409, "2011");
    });

    test("a conditional order is held until its parent fills; canceled with its parent; a dead parent is refused", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "COND", 99.95, 100);
      const parent = await placed(service, key, stockOrder(strategyId, "COND", "buy", 10, limit(90)));
      const child = await placed(
        service,
        key,
        stockOrder(strategyId, "COND", "sell", 10, limit(120, { ParentSignalId: parent.SignalId, OpenClose: "C" })),
      );
      const held = await signal(service, key, child.SignalId);
      assert.equal(held.OrderStatus, "A");
      assert.equal(held.ParentSignalId, parent.SignalId);
      await setQuote(service, "COND", 89.95, 90);
      assert.equal((await signal(service, key, parent.SignalId)).OrderStatus, "2");
      assert.equal((await signal(service, key, child.SignalId)).OrderStatus, "0");
      await setQuote(service, "COND", 120, 120.05);
      assert.equal((await signal(service, key, child.SignalId)).OrderStatus, "2");
      assert.deepEqual(await positions(service, key, strategyId), []);

      const parent2 = await placed(service, key, stockOrder(strategyId, "COND", "buy", 10, limit(100)));
      const child2 = await placed(
        service,
        key,
        stockOrder(strategyId, "COND", "buy", 5, limit(101, { ParentSignalId: parent2.SignalId })),
      );
      assert.equal((await signal(service, key, child2.SignalId)).OrderStatus, "A");
      assert.equal((await cancelOrder(service, key, strategyId, parent2.SignalId)).status, 200);
      assert.equal((await signal(service, key, child2.SignalId)).OrderStatus, "4");
      const r = await newOrder(
        service,
        key,
        stockOrder(strategyId, "COND", "buy", 5, limit(101, { ParentSignalId: parent2.SignalId })),
      );
      assertRefused(r, 409, "2010", "Order.ParentSignalId");
    });

    test("a conditional sell without OpenClose closes the position its parent opened and never reverses it", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "CONR", 99.95, 100);
      const parent = await placed(service, key, stockOrder(strategyId, "CONR", "buy", 10, limit(90)));
      const child = await placed(
        service,
        key,
        stockOrder(strategyId, "CONR", "sell", 20, limit(120, { ParentSignalId: parent.SignalId })),
      );
      await setQuote(service, "CONR", 89.95, 90);
      await setQuote(service, "CONR", 120, 120.05);
      const exit = await signal(service, key, child.SignalId);
      assert.equal(exit.OpenClose, "C", "it reduces the position when it works");
      assert.equal(exit.FilledQuantity, 10, "a close never closes more than is held");
      assert.deepEqual(await positions(service, key, strategyId), [], "not reversed through zero to -10");
    });

    test("replacing a bracket's entry hands its held exits to the replacement", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "REPE", 99.95, 100);
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "REPE", "buy", 10, limit(90, { ProfitTarget: 110, StopLoss: 85 })),
      );
      const r = await replaceOrder(
        service,
        key,
        stockOrder(strategyId, "REPE", "buy", 10, limit(95, { CancelReplaceSignalId: bracket.SignalId })),
      );
      assert.equal(r.status, 200, r.text);
      const result = r.json.Results[0];
      assert.equal(result.ProfitTargetSignalId, bracket.ProfitTargetSignalId);
      assert.equal(result.StopLossSignalId, bracket.StopLossSignalId);
      assert.equal(result.ExitSignalsOCAGroupId, bracket.ExitSignalsOCAGroupId);
      const pt = await signal(service, key, bracket.ProfitTargetSignalId as number);
      assert.equal(pt.ParentSignalId, result.SignalId);
      assert.equal(pt.OrderStatus, "A");
      assertRefused(
        await replaceOrder(
          service,
          key,
          stockOrder(
            strategyId,
            "REPE",
            "buy",
            10,
            limit(96, { CancelReplaceSignalId: result.SignalId, StopLoss: 80 }),
          ),
        ),
        400,
        "1101",
        "Order.StopLoss",
      );
      await setQuote(service, "REPE", 94.95, 95);
      assert.equal((await signal(service, key, result.SignalId)).OrderStatus, "2");
      assert.equal((await signal(service, key, bracket.ProfitTargetSignalId as number)).OrderStatus, "0");
      assert.equal((await signal(service, key, bracket.StopLossSignalId as number)).OrderStatus, "0");
    });

    test("closing a bracket's position by hand cancels both working exits with a note", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "BRKH", 99.95, 100);
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "BRKH", "buy", 10, { ProfitTarget: 110, StopLoss: 85 }),
      );
      const close = await placed(service, key, stockOrder(strategyId, "BRKH", "sell", 10));
      assert.equal((await signal(service, key, close.SignalId)).OpenClose, "C");
      const pt = await signal(service, key, bracket.ProfitTargetSignalId as number);
      const sl = await signal(service, key, bracket.StopLossSignalId as number);
      assert.equal(pt.OrderStatus, "4");
      assert.equal(sl.OrderStatus, "4");
      assert.match(String(pt.Info), /no longer open/);
      assert.deepEqual(await activeOrders(service, key, strategyId), []);
    });

    test("when a position goes flat every working exit carries the Info note, OCA siblings too", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "BRKN", 99.95, 100);
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "BRKN", "buy", 10, { ProfitTarget: 110, StopLoss: 85 }),
      );
      await placed(service, key, stockOrder(strategyId, "BRKN", "sell", 10));
      for (const id of [bracket.ProfitTargetSignalId, bracket.StopLossSignalId] as number[]) {
        const exit = await signal(service, key, id);
        assert.equal(exit.OrderStatus, "4");
        assert.match(String(exit.Info), /no longer open/, `signal ${id}`);
      }
    });

    test("ReplaceStrategyOrder keeps the OCA group: a new stop loss for a filled bracket, canceled when the target fills", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "REPK", 99.95, 100);
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "REPK", "buy", 50, { ProfitTarget: 110, StopLoss: 95 }),
      );
      const slId = bracket.StopLossSignalId as number;
      const ptId = bracket.ProfitTargetSignalId as number;
      const r = await replaceOrder(
        service,
        key,
        stockOrder(strategyId, "REPK", "sell", 50, stop(97, { CancelReplaceSignalId: slId })),
      );
      assert.equal(r.status, 200, r.text);
      const newSl = r.json.Results[0].SignalId as number;
      assert.notEqual(newSl, slId);
      assert.equal((await signal(service, key, slId)).OrderStatus, "5");
      const replacement = await signal(service, key, newSl);
      assert.equal(replacement.OrderStatus, "0");
      assert.equal(replacement.CancelReplaceSignalId, slId);
      assert.equal(replacement.Stop, 97);
      assert.equal(replacement.OpenClose, "C");
      assert.equal(replacement.SignalType, 5, "a replaced stop loss is still a stop loss");
      assert.equal((await signal(service, key, ptId)).OrderStatus, "0");
      await setQuote(service, "REPK", 110.5, 110.55);
      assert.equal((await signal(service, key, ptId)).OrderStatus, "2");
      assert.equal((await signal(service, key, newSl)).OrderStatus, "4");
      assert.deepEqual(await positions(service, key, strategyId), []);
    });

    test("the replacement stop loss works at its new price and cancels the target", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "REPW", 99.95, 100);
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "REPW", "buy", 50, { ProfitTarget: 110, StopLoss: 95 }),
      );
      const r = await replaceOrder(
        service,
        key,
        stockOrder(strategyId, "REPW", "sell", 50, stop(97, { CancelReplaceSignalId: bracket.StopLossSignalId })),
      );
      assert.equal(r.status, 200, r.text);
      await setQuote(service, "REPW", 96.5, 96.55);
      assert.equal((await signal(service, key, r.json.Results[0].SignalId)).OrderStatus, "2");
      assert.equal((await signal(service, key, bracket.ProfitTargetSignalId as number)).OrderStatus, "4");
    });

    test("replace with DoNotCreateOCAGroup cancels the sibling; refusals for filled orders, other symbols and sides", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "REPD", 99.95, 100);
      await setQuote(service, "REPX", 99.95, 100);
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "REPD", "buy", 50, { ProfitTarget: 110, StopLoss: 95 }),
      );
      const slId = bracket.StopLossSignalId as number;
      const ptId = bracket.ProfitTargetSignalId as number;

      assertRefused(
        await replaceOrder(
          service,
          key,
          stockOrder(strategyId, "REPD", "sell", 50, limit(111, { CancelReplaceSignalId: bracket.SignalId })),
        ),
        409,
        "2011",
        "Order.CancelReplaceSignalId",
      );
      assertRefused(
        await replaceOrder(
          service,
          key,
          stockOrder(strategyId, "REPX", "sell", 50, stop(97, { CancelReplaceSignalId: slId })),
        ),
        400,
        "1101",
        "Order.ServiceSymbol",
      );
      assertRefused(
        await replaceOrder(
          service,
          key,
          stockOrder(strategyId, "REPD", "buy", 50, stop(97, { CancelReplaceSignalId: slId })),
        ),
        400,
        "1101",
        "Order.Side",
      );
      assert.equal((await signal(service, key, slId)).OrderStatus, "0", "refused replaces change nothing");

      const r = await replaceOrder(
        service,
        key,
        stockOrder(
          strategyId,
          "REPD",
          "sell",
          50,
          stop(96, { CancelReplaceSignalId: slId, DoNotCreateOCAGroup: true }),
        ),
      );
      assert.equal(r.status, 200, r.text);
      assert.equal((await signal(service, key, slId)).OrderStatus, "5");
      assert.equal((await signal(service, key, ptId)).OrderStatus, "4");
      const replacement = await signal(service, key, r.json.Results[0].SignalId);
      assert.equal(replacement.OrderStatus, "0");
      assert.equal(replacement.DoNotCreateOCAGroup, true);
      assert.equal(replacement.CancelReplaceSignalId, slId);
    });

    test("NewStrategyOrder with CancelReplaceSignalId replaces the order", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "NREP", 99.95, 100);
      const old = await placed(service, key, stockOrder(strategyId, "NREP", "buy", 10, limit(90)));
      const fresh = await placed(
        service,
        key,
        stockOrder(strategyId, "NREP", "buy", 10, limit(91, { CancelReplaceSignalId: old.SignalId })),
      );
      assert.notEqual(fresh.SignalId, old.SignalId);
      assert.equal((await signal(service, key, old.SignalId)).OrderStatus, "5");
      const replacement = await signal(service, key, fresh.SignalId);
      assert.equal(replacement.OrderStatus, "0");
      assert.equal(replacement.Limit, 91);
      assert.equal(replacement.CancelReplaceSignalId, old.SignalId);
      const active = await activeOrders(service, key, strategyId);
      assert.deepEqual(
        active.map((o) => o.SignalId),
        [fresh.SignalId],
      );
    });

    test("ParkedUntilDate (New York time) holds the order until then; the clock releases and fills it", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "PARK", 99.95, 100);
      const result = await placed(
        service,
        key,
        stockOrder(strategyId, "PARK", "buy", 10, { ParkedUntilDate: "2026-03-10T11:00:00" }),
      );
      assert.equal(Date.parse(String(result.ParkedUntilDate)), Date.parse("2026-03-10T15:00:00Z"));
      assert.match(String(result.ParkedUntilDate), /Z$/);
      const held = await signal(service, key, result.SignalId);
      assert.equal(held.OrderStatus, "A");
      assert.equal(Date.parse(String(held.ParkedUntilDate)), Date.parse("2026-03-10T15:00:00Z"));
      await setQuote(service, "PARK", 99.9, 99.95);
      assert.equal((await signal(service, key, result.SignalId)).OrderStatus, "A");
      await advanceClock(service, 3599);
      assert.equal((await signal(service, key, result.SignalId)).OrderStatus, "A");
      await advanceClock(service, 2);
      const filled = await signal(service, key, result.SignalId);
      assert.equal(filled.OrderStatus, "2");
      assert.equal(filled.AvgFillPrice, 99.95);
    });

    test("a DAY order placed while the market is closed expires at the close of the next session, not before", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "DAYC", 99.95, 100);
      await setClock(service, SATURDAY);
      const day = await placed(service, key, stockOrder(strategyId, "DAYC", "buy", 10, limit(90, { TIF: "0" })));
      assert.equal((await signal(service, key, day.SignalId)).TIF, "0");
      await setClock(service, "2026-03-15T23:00:00Z");
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "0");
      await setClock(service, MONDAY_OPEN);
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "0");
      await setClock(service, "2026-03-16T19:59:59Z");
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "0");
      await setClock(service, MONDAY_CLOSE);
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "C");
    });

    test("a DAY order placed after the close expires at the next day's close", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "DAYA", 99.95, 100);
      await setClock(service, "2026-03-10T21:00:00Z");
      const day = await placed(service, key, stockOrder(strategyId, "DAYA", "buy", 10, limit(90, { TIF: "0" })));
      await setClock(service, "2026-03-11T19:59:00Z");
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "0");
      await advanceClock(service, 60);
      assert.equal((await signal(service, key, day.SignalId)).OrderStatus, "C");
    });

    test("order validation names the field at fault", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "VALD", 99.95, 100);
      const refused = async (order: Record<string, unknown>, status: number, code: string, field: string) =>
        assertRefused(await newOrder(service, key, order), status, code, field);
      await refused(stockOrder(strategyId, "VALD", "buy", 10, { Limit: 99 }), 400, "1101", "Order.Limit");
      await refused(stockOrder(strategyId, "VALD", "buy", 10, { OrderType: "2" }), 400, "1102", "Order.Limit");
      await refused(stockOrder(strategyId, "VALD", "buy", 10, { OrderType: "3" }), 400, "1102", "Order.Stop");
      await refused(stockOrder(strategyId, "AAPL", "buy", 10, limit(100.001)), 400, "1101", "Order.Limit");
      await refused(stockOrder(strategyId, "VALD", "buy", 1.5), 400, "1101", "Order.OrderQuantity");
      await refused(stockOrder(strategyId, "NOTASYMBOL", "buy", 10), 400, "1121", "Order.ServiceSymbol");
      const { ServiceSymbol: _dropped, ...noSymbol } = stockOrder(strategyId, "VALD", "buy", 10);
      await refused(noSymbol, 400, "1102", "Order.ServiceSymbol");
      await refused(stockOrder(strategyId, "@ESH25", "buy", 1), 400, "1121", "Order.ServiceSymbol");
      await refused(
        stockOrder(strategyId, "VALD", "buy", 10, limit(99, { ProfitTarget: 90, StopLoss: 95 })),
        400,
        "1101",
        "Order.ProfitTarget",
      );
      await refused(
        stockOrder(strategyId, "VALD", "buy", 10, { ProfitTarget: 90, StopLoss: 95 }),
        400,
        "1101",
        "Order.ProfitTarget",
      );
      await refused(stockOrder(strategyId, "VALD", "sell", 10, { OpenClose: "C" }), 400, "1101", "Order.OpenClose");
      await placed(service, key, stockOrder(strategyId, "VALD", "buy", 10));
      await refused(
        stockOrder(strategyId, "VALD", "sell", 10, { ProfitTarget: 90 }),
        400,
        "1101",
        "Order.ProfitTarget",
      );
      await refused(stockOrder(strategyId, "VALD", "sell", 5, { OpenClose: "O" }), 400, "1101", "Order.OpenClose");
      assert.deepEqual(await activeOrders(service, key, strategyId), []);
      assert.equal((await positions(service, key, strategyId))[0]?.Quantity, 10);
    });

    test("codes arrive as strings or integers and names in any case", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "CASE", 99.95, 100);
      const ints = await newOrder(service, key, {
        StrategyId: strategyId,
        OrderType: 2,
        Side: 1,
        TIF: 1,
        OrderQuantity: "5",
        Limit: "90",
        ServiceSymbol: { FullSymbol: "CASE" },
      });
      assert.equal(ints.status, 200, ints.text);
      const order = await signal(service, key, ints.json.Results[0].SignalId);
      assert.equal(order.OrderType, "2");
      assert.equal(order.TIF, "1");
      assert.equal(order.Limit, 90);
      const lower = await service.call("GEN", "POST", "/Strategies/NewStrategyOrder", {
        key,
        body: {
          order: {
            strategyid: strategyId,
            ordertype: "1",
            side: "1",
            tif: "1",
            orderquantity: 5,
            servicesymbol: { fullsymbol: "CASE" },
          },
        },
      });
      assert.equal(lower.status, 200, lower.text);
      assert.equal((await signal(service, key, lower.json.Results[0].SignalId)).OrderStatus, "2");
      const wl = await newOrder(
        service,
        key,
        { ...stockOrder(strategyId, "CASE", "buy", 1), OrderType: 1, Side: "1" },
        "WL",
      );
      assert.equal(wl.status, 200, wl.text);
    });

    test("an opening order beyond the buying power is refused with 2010 and nothing is stored", async () => {
      const strategyId = await newStrategy(service, key, 100_000);
      await setQuote(service, "BIGP", 499.95, 500);
      const r = await newOrder(service, key, stockOrder(strategyId, "BIGP", "buy", 1000));
      assertRefused(r, 409, "2010");
      const error = r.json.ResponseStatus.Errors[0];
      assert.equal(Number(error.Meta.Required), 250_000);
      assert.equal(Number(error.Meta.BuyingPower), 200_000);
      assert.deepEqual(await activeOrders(service, key, strategyId), []);
      const history = await service.call("GEN", "GET", "/Strategies/GetStrategyHistoricalOrders", {
        key,
        query: { StrategyId: String(strategyId) },
      });
      assert.equal(history.status, 200, history.text);
      assert.deepEqual(history.json.Results, []);
      assert.deepEqual(await positions(service, key, strategyId), []);
    });

    test("a buying-power refusal reports the margin Required beside the margin Available", async () => {
      const strategyId = await newStrategy(service, key, 100_000);
      await setQuote(service, "BIGQ", 499.95, 500);
      const r = await newOrder(service, key, stockOrder(strategyId, "BIGQ", "buy", 450));
      assertRefused(r, 409, "2010");
      const meta = r.json.ResponseStatus.Errors[0].Meta;
      assert.ok(
        Number(meta.Required) > Number(meta.Available),
        `refused although Required ${meta.Required} is within Available ${meta.Available}`,
      );
      assert.equal(Number(meta.BuyingPower), 2 * Number(meta.Available));
    });

    test("futures by ExchangeSymbol and forex: both symbol objects on orders and positions", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "@ESM26", 5000, 5000.25);
      const future = await placed(service, key, {
        StrategyId: strategyId,
        OrderType: "1",
        Side: "1",
        TIF: "1",
        OrderQuantity: 2,
        ExchangeSymbol: { Symbol: "ES", SecurityType: "FUT", MaturityMonthYear: "202606" },
      });
      const es = await signal(service, key, future.SignalId);
      assert.equal(es.OrderStatus, "2");
      assert.equal(es.AvgFillPrice, 5000.25);
      assert.equal((es.ServiceSymbol as Record<string, unknown>).FullSymbol, "@ESM26");
      assert.equal((es.ServiceSymbol as Record<string, unknown>).SymbolType, "future");
      assert.deepEqual(
        {
          ...(es.ExchangeSymbol as Record<string, unknown>),
        },
        {
          Symbol: "ES",
          Currency: "USD",
          SecurityExchange: "XCME",
          SecurityType: "FUT",
          MaturityMonthYear: "202606",
          PutOrCall: null,
          StrikePrice: 0,
          PriceMultiplier: 50,
        },
      );

      await setQuote(service, "EURUSD", 1.085, 1.0851);
      const fx = await placed(service, key, stockOrder(strategyId, "EURUSD", "buy", 100_000));
      const eur = await signal(service, key, fx.SignalId);
      assert.equal(eur.OrderStatus, "2");
      assert.equal(eur.AvgFillPrice, 1.0851);
      assert.equal((eur.ServiceSymbol as Record<string, unknown>).SymbolType, "forex");
      assert.equal((eur.ExchangeSymbol as Record<string, unknown>).SecurityType, "FOR");
      assert.equal((eur.ExchangeSymbol as Record<string, unknown>).Symbol, "EUR/USD");

      const held = (await positions(service, key, strategyId)) as unknown as Record<string, Record<string, unknown>>[];
      const bySymbol = new Map(held.map((p) => [p.ServiceSymbol?.FullSymbol, p]));
      assert.deepEqual([...bySymbol.keys()].sort(), ["@ESM26", "EURUSD"]);
      assert.equal(bySymbol.get("@ESM26")?.Quantity, 2);
      assert.equal(bySymbol.get("@ESM26")?.ExchangeSymbol?.MaturityMonthYear, "202606");
      assert.equal(bySymbol.get("EURUSD")?.Quantity, 100_000);
      assert.equal(bySymbol.get("EURUSD")?.ExchangeSymbol?.SecurityType, "FOR");
    });

    test("futures do not fill in the Globex daily break and fill when it reopens", async () => {
      const strategyId = await newStrategy(service, key);
      await setClock(service, "2026-03-10T21:30:00Z");
      await setQuote(service, "@NQM26", 20000, 20000.25);
      const order = await placed(service, key, stockOrder(strategyId, "@NQM26", "buy", 1));
      assert.equal((await signal(service, key, order.SignalId)).OrderStatus, "0");
      await setClock(service, "2026-03-10T21:59:59Z");
      assert.equal((await signal(service, key, order.SignalId)).OrderStatus, "0");
      await setClock(service, "2026-03-10T22:00:00Z");
      const filled = await signal(service, key, order.SignalId);
      assert.equal(filled.OrderStatus, "2", "the standing quote fills it when Globex reopens at 18:00");
      assert.equal(filled.AvgFillPrice, 20000.25);
    });
  });
}
