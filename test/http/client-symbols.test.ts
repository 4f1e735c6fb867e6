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
  setDesiredPositions,
  setQuote,
  signal,
} from "../helpers/trading.js";

/**
 * Futures symbols as clients of the original service write them: a
 * single-digit year read against the service clock, and the original
 * Treasury roots. v4 answers in the service's form; legacy answers name a
 * future as its client wrote it.
 */
const future = (
  strategyId: number,
  symbol: Record<string, unknown>,
  side: "1" | "2",
  quantity: number,
  extra = {},
) => ({
  StrategyId: strategyId,
  OrderType: "1",
  Side: side,
  TIF: "1",
  OrderQuantity: quantity,
  ...symbol,
  ...extra,
});
const serviceSymbol = (fullSymbol: string) => ({ ServiceSymbol: { FullSymbol: fullSymbol, SymbolType: "future" } });
const fullSymbolOf = (row: Record<string, unknown>) => (row.ServiceSymbol as { FullSymbol: string }).FullSymbol;

for (const backend of BACKENDS) {
  describe(`futures symbols in the original service's form (${backend})`, () => {
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

    const v3 = (command: string, body: Record<string, unknown>) => legacyCall(service, command, body, key);

    test("v4 orders take single-digit years and the original Treasury roots, and answer in the service's form", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "@ESZ26", 5000, 5000.25);
      const es = await placed(service, key, future(strategyId, serviceSymbol("@ESZ6"), "1", 1));
      assert.equal(fullSymbolOf(await signal(service, key, es.SignalId)), "@ESZ26");
      const limit = { OrderType: "2", Limit: 110 };
      const ty = await placed(service, key, future(strategyId, serviceSymbol("@TYZ6"), "1", 1, limit));
      const tyOrder = await signal(service, key, ty.SignalId);
      assert.equal(fullSymbolOf(tyOrder), "@ZNZ26");
      assert.deepEqual(tyOrder.ExchangeSymbol, {
        Symbol: "ZN",
        Currency: "USD",
        SecurityExchange: "XCBT",
        SecurityType: "FUT",
        MaturityMonthYear: "202612",
        PutOrCall: null,
        StrikePrice: 0,
        PriceMultiplier: 1000,
      });
      const exchange = { ExchangeSymbol: { Symbol: "US", SecurityType: "FUT", MaturityMonthYear: "202706" } };
      const us = await placed(service, key, future(strategyId, exchange, "1", 1, limit));
      assert.equal(fullSymbolOf(await signal(service, key, us.SignalId)), "@ZBM27");
      const fv = await placed(service, key, future(strategyId, serviceSymbol("@FVH27"), "1", 1, limit));
      assert.equal(fullSymbolOf(await signal(service, key, fv.SignalId)), "@ZFH27");
      const tu = await placed(
        service,
        key,
        future(strategyId, serviceSymbol("TUU6"), "1", 1, { OrderType: "2", Limit: 102 }),
      );
      assert.equal(fullSymbolOf(await signal(service, key, tu.SignalId)), "@ZTU26");
      const held = await positions(service, key, strategyId);
      assert.deepEqual(
        held.map((p) => p.ServiceSymbol.FullSymbol),
        ["@ESZ26"],
      );
      assert.deepEqual((await activeOrders(service, key, strategyId)).map(fullSymbolOf).sort(), [
        "@ZBM27",
        "@ZFH27",
        "@ZNZ26",
        "@ZTU26",
      ]);
    });

    test("a single-digit year is the first year ending in it that is at most two years past, by the service clock", async () => {
      const strategyId = await newStrategy(service, key);
      const limit = { OrderType: "2", Limit: 5000 };
      const ten = await placed(service, key, future(strategyId, serviceSymbol("@ESZ3"), "1", 1, limit));
      assert.equal(fullSymbolOf(await signal(service, key, ten.SignalId)), "@ESZ33");
      const expired = await newOrder(service, key, future(strategyId, serviceSymbol("@ESZ4"), "1", 1, limit));
      assertRefused(expired, 400, "1121", "Order.ServiceSymbol");
      assert.match(expired.text, /@ESZ24 has expired/);
      // In another year the same symbol names another contract: in 2031, 4 is 2034, 8 is 2038 and 9 is 2029.
      await setClock(service, "2031-03-11T14:00:00Z");
      const later = await placed(service, key, future(strategyId, serviceSymbol("@ESZ4"), "1", 1, limit));
      assert.equal(fullSymbolOf(await signal(service, key, later.SignalId)), "@ESZ34");
      const nextDecade = await placed(service, key, future(strategyId, serviceSymbol("@ESZ8"), "1", 1, limit));
      assert.equal(fullSymbolOf(await signal(service, key, nextDecade.SignalId)), "@ESZ38");
      const past = await newOrder(service, key, future(strategyId, serviceSymbol("@ESZ9"), "1", 1, limit));
      assertRefused(past, 400, "1121", "Order.ServiceSymbol");
      assert.match(past.text, /@ESZ29 has expired/);
    });

    test("SetDesiredPositions on GEN as those clients send it", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "@NQH27", 18000, 18000.25);
      const r = await setDesiredPositions(
        service,
        key,
        strategyId,
        [{ ServiceSymbol: { FullSymbol: "@NQH7", SymbolType: "future" }, Quantity: 2.0 }],
        "GEN",
      );
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.Results[0].NewSignals.map(fullSymbolOf), ["@NQH27"]);
      assert.deepEqual(r.json.Results[0].CanceledSignals, []);
      const held = await positions(service, key, strategyId);
      assert.deepEqual(
        held.map((p) => [p.ServiceSymbol.FullSymbol, p.Quantity]),
        [["@NQH27", 2]],
      );
    });

    test("legacy answers name a future as the client wrote it: signals, exits, trades, positions", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "@ESZ26", 5000, 5000.25);
      const submitted = await v3("submitSignal", {
        systemid,
        signal: {
          action: "BTO",
          quant: 2,
          symbol: "@ESZ6",
          typeofsymbol: "future",
          duration: "GTC",
          profittarget: 5100,
          stoploss: 4900,
        },
      });
      assert.equal(submitted.ok, 1, JSON.stringify(submitted));
      assert.equal(submitted.signal.symbol, "@ESZ6");
      assert.equal(fullSymbolOf(await signal(service, key, Number(submitted.signalid))), "@ESZ26");
      const working = await v3("retrieveSignalsWorking", { systemid });
      assert.deepEqual(
        working.response.map((s: { symbol: string }) => s.symbol),
        ["@ESZ6", "@ESZ6"],
        "the exits are named as their entry was",
      );
      const all = await v3("retrieveSignalsAll", { systemid });
      assert.ok(all.response.every((s: { symbol: string }) => s.symbol === "@ESZ6"));
      const open = await v3("requestTradesOpen", { systemid });
      assert.deepEqual(
        open.response.map((t: { symbol: string; fullSymbol: string }) => [t.symbol, t.fullSymbol]),
        [["@ESZ6", "@ESZ6"]],
      );
      const exit = await v3("cancelSignal", { systemid, signalid: submitted.signal.stoplosssignalid });
      assert.equal(exit.signal.symbol, "@ESZ6");
      const closing = await v3("submitSignal", {
        systemid,
        signal: { action: "STC", quant: 2, symbol: "@ESZ6", typeofsymbol: "future" },
      });
      assert.equal(closing.ok, 1, JSON.stringify(closing));
      const trades = await v3("requestAllTrades_overview", { systemid, show_component_signals: 1 });
      assert.equal(trades.response.length, 1);
      assert.equal(trades.response[0].symbol, "@ESZ6");
      assert.deepEqual(
        trades.response[0].component_signals.map((s: { symbol: string }) => s.symbol),
        ["@ESZ6", "@ESZ6"],
      );
      assert.deepEqual(await positions(service, key, systemid), []);
    });

    test("legacy desired positions keep the Treasury root the client wrote, also for the closes the service makes", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "@ZNZ26", 110, 110.015625);
      const engaged = await v3("setDesiredPositions", {
        systemid,
        positions: [{ symbol: "@TYZ6", typeofsymbol: "future", quant: 3 }],
      });
      assert.equal(engaged.ok, 1, JSON.stringify(engaged));
      assert.deepEqual(
        engaged.response.map((p: { symbol: string; quant: string }) => [p.symbol, p.quant]),
        [["@TYZ6", "3"]],
      );
      assert.deepEqual(
        (await v3("getDesiredPositions", { systemid })).response.map((p: { symbol: string }) => p.symbol),
        ["@TYZ6"],
      );
      assert.deepEqual(
        (await positions(service, key, systemid)).map((p) => [p.ServiceSymbol.FullSymbol, p.Quantity]),
        [["@ZNZ26", 3]],
      );
      const flat = await v3("setDesiredPositions", { systemid, positions: [{ symbol: "flat", typeofsymbol: "flat" }] });
      assert.equal(flat.ok, 1, JSON.stringify(flat));
      const signals = await v3("retrieveSignalsAll", { systemid });
      assert.deepEqual(
        signals.response.map((s: { symbol: string; action: string }) => [s.action, s.symbol]),
        [
          ["BTO", "@TYZ6"],
          ["STC", "@TYZ6"],
        ],
      );
      const trades = await v3("requestTrades", { systemid });
      assert.deepEqual(
        trades.response.map((t: { symbol: string; open_or_closed: string }) => [t.symbol, t.open_or_closed]),
        [["@TYZ6", "closed"]],
      );
    });

    test("an unknown or expired contract in the original form is refused on v3 as on v4", async () => {
      const systemid = await newStrategy(service, key);
      const expired = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 1, symbol: "@TYH4", typeofsymbol: "future" },
      });
      assert.equal(expired.ok, 0);
      assert.match(expired.error.message, /@ZNH24 has expired/);
      const unknown = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 1, symbol: "@TYX6", typeofsymbol: "future" },
      });
      assert.deepEqual([unknown.ok, unknown.error.title], [0, "Invalid symbol"]);
      const v4 = await newOrder(service, key, future(systemid, serviceSymbol("@XXZ6"), "1", 1));
      assertRefused(v4, 400, "1121", "Order.ServiceSymbol");
    });
  });
}
