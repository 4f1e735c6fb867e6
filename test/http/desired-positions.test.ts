import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import {
  ADMIN_KEY,
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
  newStrategy,
  placed,
  positions,
  setDesiredPositions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

type Row = Record<string, unknown> & { SignalId: number | null; OrderStatus: string };
interface Outcome {
  NewSignals: Row[];
  CanceledSignals: Row[];
  RejectedSignals: Row[];
}

const want = (symbol: string, quantity: number) => ({ Quantity: quantity, ServiceSymbol: { FullSymbol: symbol } });

function outcomeOf(r: CallResult): Outcome {
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.Results.length, 1);
  return r.json.Results[0] as Outcome;
}

const symbolOf = (row: Record<string, unknown>) => (row.ServiceSymbol as { FullSymbol: string }).FullSymbol;

for (const backend of BACKENDS) {
  describe(`SetDesiredPositions through HTTP (${backend})`, () => {
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

    const held = async (strategyId: number) =>
      Object.fromEntries(
        (await positions(service, key, strategyId)).map((p) => [p.ServiceSymbol.FullSymbol, p.Quantity]),
      );

    test("each server answers on its own path only", async () => {
      const strategyId = await newStrategy(service, key);
      const body = { StrategyId: strategyId, Positions: [] };
      assert.equal((await service.call("WL", "POST", "/Strategies/SetDesiredPositions", { key, body })).status, 404);
      assert.equal(
        (await service.call("GEN", "POST", "/v2/Strategies/SetDesiredPositions", { key, body })).status,
        404,
      );
      outcomeOf(await setDesiredPositions(service, key, strategyId, [], "WL"));
      outcomeOf(await setDesiredPositions(service, key, strategyId, [], "GEN"));
    });

    test("from flat: one market order per symbol (SignalType 6), filled when quoted", async () => {
      const strategyId = await newStrategy(service, key);
      const outcome = outcomeOf(
        await setDesiredPositions(service, key, strategyId, [want("DPAA", 100), want("DPAB", -50)]),
      );
      assert.equal(outcome.NewSignals.length, 2);
      assert.deepEqual(outcome.CanceledSignals, []);
      assert.deepEqual(outcome.RejectedSignals, []);
      const bySymbol = new Map(outcome.NewSignals.map((row) => [symbolOf(row), row]));
      const buy = bySymbol.get("DPAA") as Row;
      const sell = bySymbol.get("DPAB") as Row;
      assert.deepEqual(
        [buy.OrderType, buy.Side, buy.OpenClose, buy.OrderQuantity, buy.TIF, buy.OrderStatus],
        ["1", "1", "O", 100, "1", "0"],
      );
      assert.deepEqual(
        [sell.OrderType, sell.Side, sell.OpenClose, sell.OrderQuantity, sell.TIF, sell.OrderStatus],
        ["1", "2", "O", 50, "1", "0"],
      );
      for (const row of outcome.NewSignals) {
        assert.deepEqual(Object.keys(row).sort(), [
          "AvgFillPrice",
          "ExchangeSymbol",
          "FilledQuantity",
          "Limit",
          "OpenClose",
          "OrderQuantity",
          "OrderStatus",
          "OrderType",
          "PostedDate",
          "RejectMessage",
          "ServiceSymbol",
          "Side",
          "SignalId",
          "Stop",
          "TIF",
        ]);
        assert.equal((await signal(service, key, row.SignalId as number)).SignalType, 6);
      }
      await setQuote(service, "DPAA", 20, 20.05);
      await setQuote(service, "DPAB", 30, 30.05);
      assert.equal((await signal(service, key, buy.SignalId as number)).AvgFillPrice, 20.05);
      assert.equal((await signal(service, key, sell.SignalId as number)).AvgFillPrice, 30);
      assert.deepEqual(await held(strategyId), { DPAA: 100, DPAB: -50 });
    });

    test("reduce, increase, reverse, leave out, empty list", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "DRA", 20, 20.05);
      await setQuote(service, "DRB", 10, 10.05);
      outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRA", 100), want("DRB", 100)]));
      assert.deepEqual(await held(strategyId), { DRA: 100, DRB: 100 });

      let outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRA", 60), want("DRB", 100)]));
      assert.equal(outcome.NewSignals.length, 1);
      assert.deepEqual(
        [outcome.NewSignals[0]?.Side, outcome.NewSignals[0]?.OpenClose, outcome.NewSignals[0]?.OrderQuantity],
        ["2", "C", 40],
      );
      assert.equal(outcome.NewSignals[0]?.OrderStatus, "2");
      assert.deepEqual(await held(strategyId), { DRA: 60, DRB: 100 });

      outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRA", 80), want("DRB", 100)]));
      assert.equal(outcome.NewSignals.length, 1);
      assert.deepEqual(
        [outcome.NewSignals[0]?.Side, outcome.NewSignals[0]?.OpenClose, outcome.NewSignals[0]?.OrderQuantity],
        ["1", "O", 20],
      );
      assert.deepEqual(await held(strategyId), { DRA: 80, DRB: 100 });

      outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRA", -50), want("DRB", 100)]));
      assert.equal(outcome.NewSignals.length, 2);
      const [close, open] = outcome.NewSignals as [Row, Row];
      assert.deepEqual([close.Side, close.OpenClose, close.OrderQuantity], ["2", "C", 80]);
      assert.deepEqual([open.Side, open.OpenClose, open.OrderQuantity], ["2", "O", 50]);
      assert.equal((await signal(service, key, open.SignalId as number)).ParentSignalId, close.SignalId);
      assert.deepEqual(await held(strategyId), { DRA: -50, DRB: 100 });

      outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRB", 100)]));
      assert.equal(outcome.NewSignals.length, 1);
      assert.deepEqual(
        [symbolOf(outcome.NewSignals[0] as Row), outcome.NewSignals[0]?.Side, outcome.NewSignals[0]?.OpenClose],
        ["DRA", "1", "C"],
      );
      assert.deepEqual(await held(strategyId), { DRB: 100 });

      outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, []));
      assert.equal(outcome.NewSignals.length, 1);
      assert.deepEqual(await held(strategyId), {});

      outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, []));
      assert.deepEqual(outcome, { NewSignals: [], CanceledSignals: [], RejectedSignals: [] });
    });

    test("a reversal opens the other way only after the close has filled", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "DRV", 20, 20.05);
      outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRV", 100)]));
      await setQuote(service, "DRV", 20, 20.05, { bidSize: 30 });
      const outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRV", -50)]));
      const [close, open] = outcome.NewSignals as [Row, Row];
      assert.equal(close.OrderStatus, "1");
      assert.equal(close.FilledQuantity, 30);
      assert.equal(open.OrderStatus, "A", "the opening order waits for the close");
      assert.deepEqual(await held(strategyId), { DRV: 70 });
      await setQuote(service, "DRV", 19.9, 19.95);
      assert.equal((await signal(service, key, close.SignalId as number)).OrderStatus, "2");
      assert.equal((await signal(service, key, open.SignalId as number)).OrderStatus, "2");
      assert.deepEqual(await held(strategyId), { DRV: -50 });
    });

    test("live orders are canceled and listed in CanceledSignals", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "DLX", 50, 50.05);
      const resting = await placed(
        service,
        key,
        stockOrder(strategyId, "DLX", "buy", 10, { OrderType: "2", Limit: 40 }),
      );
      const bracket = await placed(
        service,
        key,
        stockOrder(strategyId, "DLX", "buy", 20, { ProfitTarget: 60, StopLoss: 45 }),
      );
      const ids = [resting.SignalId, bracket.ProfitTargetSignalId, bracket.StopLossSignalId] as number[];
      const outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DLX", 20)]));
      assert.deepEqual(
        outcome.CanceledSignals.map((row) => row.SignalId).sort((a, b) => Number(a) - Number(b)),
        [...ids].sort((a, b) => a - b),
      );
      for (const row of outcome.CanceledSignals) assert.equal(row.OrderStatus, "4");
      for (const id of ids) assert.equal((await signal(service, key, id)).OrderStatus, "4");
      assert.deepEqual(outcome.NewSignals, [], "the position is already as desired");
      assert.deepEqual(await activeOrders(service, key, strategyId), []);
      assert.deepEqual(await held(strategyId), { DLX: 20 });
    });

    test("an opening order the account cannot afford is rejected; the others are placed", async () => {
      const strategyId = await newStrategy(service, key, 100_000);
      await setQuote(service, "DRJ", 499.95, 500);
      await setQuote(service, "DRK", 10, 10.05);
      const outcome = outcomeOf(
        await setDesiredPositions(service, key, strategyId, [want("DRJ", 1000), want("DRK", 10)]),
      );
      assert.equal(outcome.RejectedSignals.length, 1);
      const rejected = outcome.RejectedSignals[0] as Row;
      assert.equal(rejected.SignalId, null);
      assert.equal(rejected.OrderStatus, "8");
      assert.equal(symbolOf(rejected), "DRJ");
      assert.equal(rejected.OrderQuantity, 1000);
      assert.match(String(rejected.RejectMessage), /buying power/i);
      assert.equal(outcome.NewSignals.length, 1);
      assert.equal(symbolOf(outcome.NewSignals[0] as Row), "DRK");
      assert.deepEqual(await held(strategyId), { DRK: 10 });
    });

    test("a reversal's opening order is judged on the buying power left once its close has filled", async () => {
      const strategyId = await newStrategy(service, key, 100_000);
      await setQuote(service, "DRW", 499.95, 500);
      outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRW", 300)]));
      assert.deepEqual(await held(strategyId), { DRW: 300 });
      const outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DRW", -300)]));
      assert.deepEqual(outcome.RejectedSignals, [], "flat after the close, the account affords a 300-share short");
      assert.deepEqual(await held(strategyId), { DRW: -300 });
    });

    test("validation names Positions[i]", async () => {
      const strategyId = await newStrategy(service, key);
      const refused = async (desired: Record<string, unknown>[], code: string, field: string) =>
        assertRefused(await setDesiredPositions(service, key, strategyId, desired), 400, code, field);
      await refused([want("DVA", 0)], "1101", "Positions[0].Quantity");
      await refused([want("DVA", 10), want("DVB", 1.5)], "1101", "Positions[1].Quantity");
      await refused([want("DVA", 10), want("DVA", 20)], "1101", "Positions[1]");
      await refused([want("NOTASYMBOL", 10)], "1121", "Positions[0].ServiceSymbol");
      await refused([want("@ESH25", 1)], "1121", "Positions[0].ServiceSymbol");
      await refused([{ Quantity: 10 }], "1102", "Positions[0].ServiceSymbol");
      assert.deepEqual(await activeOrders(service, key, strategyId), []);
    });

    test("while the market is closed the orders work (GTC) and fill at the open", async () => {
      const strategyId = await newStrategy(service, key);
      await setClock(service, "2026-03-14T16:00:00Z");
      const outcome = outcomeOf(await setDesiredPositions(service, key, strategyId, [want("DCL", 10)], "GEN"));
      const order = outcome.NewSignals[0] as Row;
      assert.equal(order.OrderStatus, "0");
      assert.equal(order.TIF, "1");
      await setQuote(service, "DCL", 30, 30.05);
      assert.equal((await signal(service, key, order.SignalId as number)).OrderStatus, "0");
      await setClock(service, "2026-03-16T13:30:00Z");
      const filled = await signal(service, key, order.SignalId as number);
      assert.equal(filled.OrderStatus, "2");
      assert.deepEqual(await held(strategyId), { DCL: 10 });
    });

    test("another person's public strategy is 403; their private one 404, as an unknown one", async () => {
      const strategyId = await newStrategy(service, key);
      const hidden = await setDesiredPositions(service, population.keys.personB, strategyId, [want("DPX", 1)]);
      assertRefused(hidden, 404, "2013", "StrategyId");
      assert.equal(hidden.json.ResponseStatus.Errors[0].Message, `No strategy ${strategyId}`);
      assertRefused(await setDesiredPositions(service, key, 987_654_321, [want("DPX", 1)]), 404, "2013");
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: ADMIN_KEY,
        body: { StrategyName: "Public Desired", StartingCapital: 10000, InitialSiteVisibility: true },
      });
      const shown = made.json.Results[0].StrategyId as number;
      assertRefused(await setDesiredPositions(service, key, shown, [want("DPX", 1)]), 403, "1002");
    });
  });
}
