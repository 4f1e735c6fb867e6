import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import {
  advanceClock,
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import {
  assertRefused,
  cancelOrder,
  MARKET_OPEN,
  newStrategy,
  placed,
  positions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

/** The OrderStatus record of API.md, field for field. */
const ORDER_STATUS_FIELDS = [
  "Id",
  "OrderId",
  "StrategyId",
  "StrategyName",
  "SignalId",
  "AvgPx",
  "OrderType",
  "Side",
  "OpenClose",
  "OrderQuantity",
  "Limit",
  "Stop",
  "TIF",
  "ProfitTarget",
  "StopLoss",
  "DoNotCreateOCAGroup",
  "CancelReplaceSignalId",
  "ParentSignalId",
  "ParkedUntilDate",
  "DoNotSyncToOpen",
  "ServiceSymbol",
  "ExchangeSymbol",
  "RejectMessage",
  "BrokerId",
  "OrderStatus",
  "FilledQuantity",
  "AvgFillPrice",
  "PostedDate",
  "SignalType",
  "Info",
];

/** The Position record of API.md. */
const POSITION_FIELDS = [
  "StrategyId",
  "Quantity",
  "AvgPx",
  "ServiceSymbol",
  "ExchangeSymbol",
  "StrategyName",
  "Currency",
  "OpenedDate",
];

const limitBuy = (strategyId: number, symbol: string, price: number, extra: Record<string, unknown> = {}) =>
  stockOrder(strategyId, symbol, "buy", 1, { OrderType: "2", Limit: price, ...extra });

for (const backend of BACKENDS) {
  describe(`order and position reads through HTTP (${backend})`, () => {
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

    const active = (query: Record<string, string | string[]>, as = key) =>
      service.call("GEN", "GET", "/Strategies/GetStrategyActiveOrders", { key: as, query });
    const history = (query: Record<string, string | string[]>, as = key) =>
      service.call("GEN", "GET", "/Strategies/GetStrategyHistoricalOrders", { key: as, query });
    const openPositions = (query: Record<string, string | string[]>, as = key) =>
      service.call("GEN", "GET", "/Strategies/GetStrategyOpenPositions", { key: as, query });
    const ids = (rows: { SignalId: number }[]) => rows.map((row) => row.SignalId);

    test("GetStrategyActiveOrders: several strategies, repeated or comma-separated; SecurityType and OrderType filters", async () => {
      const a = await newStrategy(service, key, 100_000, "Reads A");
      const b = await newStrategy(service, key, 100_000, "Reads B");
      await setQuote(service, "RDA", 50, 50.05);
      await setQuote(service, "@ESM26", 5000, 5000.25);
      const stockLimit = await placed(service, key, limitBuy(a, "RDA", 40));
      const stockStop = await placed(service, key, stockOrder(a, "RDA", "buy", 1, { OrderType: "3", Stop: 60 }));
      const futureLimit = await placed(service, key, limitBuy(a, "@ESM26", 4000));
      const other = await placed(service, key, limitBuy(b, "RDA", 41));

      for (const query of [{ StrategyIds: [String(a), String(b)] }, { StrategyIds: `${a},${b}` }]) {
        const r = await active(query);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(ids(r.json.Results), [
          stockLimit.SignalId,
          stockStop.SignalId,
          futureLimit.SignalId,
          other.SignalId,
        ]);
      }
      const r = await active({ StrategyIds: `${a},${b}` });
      assert.deepEqual(
        r.json.Results.map((row: { StrategyName: string }) => row.StrategyName),
        ["Reads A", "Reads A", "Reads A", "Reads B"],
      );
      let filtered = await active({ StrategyIds: String(a), SecurityType: "FUT" });
      assert.deepEqual(ids(filtered.json.Results), [futureLimit.SignalId]);
      filtered = await active({ StrategyIds: `${a},${b}`, SecurityType: "CS" });
      assert.deepEqual(ids(filtered.json.Results), [stockLimit.SignalId, stockStop.SignalId, other.SignalId]);
      filtered = await active({ StrategyIds: `${a},${b}`, OrderType: "3" });
      assert.deepEqual(ids(filtered.json.Results), [stockStop.SignalId]);
      filtered = await active({ StrategyIds: String(a), OrderType: "2" });
      assert.deepEqual(ids(filtered.json.Results), [stockLimit.SignalId, futureLimit.SignalId]);
      filtered = await active({ StrategyIds: String(a), OrderType: "1" });
      assert.deepEqual(filtered.json.Results, []);
    });

    test("order reads: a strategy that does not exist is 404, so is another person's private one; a public one is 403", async () => {
      const mine = await newStrategy(service, key);
      const theirs = await newStrategy(service, population.keys.personB);
      const messageOf = (r: CallResult) => r.json.ResponseStatus.Errors[0].Message;
      assertRefused(await active({ StrategyIds: `${mine},987654321` }), 404, "2013", "StrategyIds");
      const hidden = await active({ StrategyIds: `${mine},${theirs}` });
      assertRefused(hidden, 404, "2013", "StrategyIds");
      assert.equal(messageOf(hidden), `No strategy ${theirs}`);
      assertRefused(await openPositions({ StrategyIds: String(theirs) }), 404, "2013");
      assertRefused(await openPositions({ StrategyIds: "987654321" }), 404, "2013");
      const hiddenHistory = await history({ StrategyId: String(theirs) });
      assertRefused(hiddenHistory, 404, "2013", "StrategyId");
      assert.equal(messageOf(hiddenHistory), `No strategy ${theirs}`);
      assertRefused(await history({ StrategyId: "987654321" }), 404, "2013");
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: population.keys.admin,
        body: { StrategyName: "Public Reads", StartingCapital: 10000, InitialSiteVisibility: true },
      });
      const shown = String(made.json.Results[0].StrategyId);
      assertRefused(await active({ StrategyIds: shown }), 403, "1002", "StrategyIds");
      assertRefused(await openPositions({ StrategyIds: shown }), 403, "1002", "StrategyIds");
      assertRefused(await history({ StrategyId: shown }), 403, "1002", "StrategyId");
      const admin = await active({ StrategyIds: `${mine},${theirs}` }, population.keys.admin);
      assert.equal(admin.status, 200, admin.text);
    });

    test("GetStrategyHistoricalOrders: StrategyId or SignalId; the OrderStatus filter takes 2, 4 and C only", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "RDH", 50, 50.05);
      const filled = await placed(service, key, stockOrder(strategyId, "RDH", "buy", 1));
      const canceled = await placed(service, key, limitBuy(strategyId, "RDH", 40));
      assert.equal((await cancelOrder(service, key, strategyId, canceled.SignalId)).status, 200);
      const expired = await placed(service, key, limitBuy(strategyId, "RDH", 40, { TIF: "0" }));
      const working = await placed(service, key, limitBuy(strategyId, "RDH", 41));
      await advanceClock(service, 7 * 3600);
      assert.equal((await signal(service, key, expired.SignalId)).OrderStatus, "C");

      assertRefused(await history({}), 400, "1102");
      const all = await history({ StrategyId: String(strategyId) });
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(ids(all.json.Results), [filled.SignalId, canceled.SignalId, expired.SignalId]);
      assert.ok(all.json.Pagination, "paginated");
      for (const [code, expected] of [
        ["2", filled.SignalId],
        ["4", canceled.SignalId],
        ["C", expired.SignalId],
      ] as const) {
        const r = await history({ StrategyId: String(strategyId), OrderStatus: code });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(ids(r.json.Results), [expected], `OrderStatus=${code}`);
      }
      for (const code of ["0", "5", "8", "A", "X"]) {
        assertRefused(await history({ StrategyId: String(strategyId), OrderStatus: code }), 400, "1101", "OrderStatus");
      }
      const one = await history({ SignalId: String(working.SignalId) });
      assert.deepEqual(ids(one.json.Results), [working.SignalId], "a signal in whatever state");
      assert.equal(one.json.Results[0].OrderStatus, "0");
    });

    test("GetStrategyHistoricalOrders: a SignalId of another strategy with StrategyId is 404", async () => {
      const a = await newStrategy(service, key);
      const b = await newStrategy(service, key);
      await setQuote(service, "RDS", 50, 50.05);
      const inB = await placed(service, key, stockOrder(b, "RDS", "buy", 1));
      assertRefused(await history({ StrategyId: String(a), SignalId: String(inB.SignalId) }), 404, "2013", "SignalId");
      const ok = await history({ StrategyId: String(b), SignalId: String(inB.SignalId) });
      assert.deepEqual(ids(ok.json.Results), [inB.SignalId]);
      assertRefused(await history({ SignalId: "987654321" }), 404, "2013");
      const othersSignal = await history({ SignalId: String(inB.SignalId) }, population.keys.personB);
      assertRefused(othersSignal, 404, "2013", "SignalId");
      assert.equal(othersSignal.json.ResponseStatus.Errors[0].Message, `No signal ${inB.SignalId}`);
    });

    test("GetStrategyHistoricalOrders: StartDate and EndDate bound PostedDate; pages follow next_cursor", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "RDP", 50, 50.05);
      const posted: number[] = [];
      for (let i = 0; i < 5; i++) {
        posted.push((await placed(service, key, stockOrder(strategyId, "RDP", "buy", 1))).SignalId);
        await advanceClock(service, 600);
      }
      // Posted at 14:00, 14:10, 14:20, 14:30 and 14:40 UTC.
      const window = await history({
        StrategyId: String(strategyId),
        StartDate: "2026-03-10T14:10:00Z",
        EndDate: "2026-03-10T14:30:00Z",
      });
      assert.equal(window.status, 200, window.text);
      assert.deepEqual(ids(window.json.Results), [posted[1], posted[2]], "StartDate inclusive, EndDate exclusive");
      const from = await history({ StrategyId: String(strategyId), StartDate: "2026-03-10T14:35:00Z" });
      assert.deepEqual(ids(from.json.Results), [posted[4]]);
      const until = await history({ StrategyId: String(strategyId), EndDate: "2026-03-10T10:05:00-04:00" });
      assert.deepEqual(ids(until.json.Results), [posted[0]]);
      const row = (await history({ SignalId: String(posted[3]) })).json.Results[0];
      assert.equal(Date.parse(row.PostedDate), Date.parse("2026-03-10T14:30:00Z"));

      const seen: number[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const r = await history({
          StrategyId: String(strategyId),
          Limit: "2",
          ...(cursor === undefined ? {} : { Cursor: cursor }),
        });
        assert.equal(r.status, 200, r.text);
        assert.ok(r.json.Results.length <= 2);
        seen.push(...ids(r.json.Results));
        cursor = r.json.Pagination.next_cursor || undefined;
        pages++;
      } while (cursor !== undefined && pages < 10);
      assert.deepEqual(seen, posted);
      assert.ok(pages >= 3, `${pages} pages`);
    });

    test("GetStrategyOpenPositions: signed quantity, average cost, SecurityType filter, OpenedDate, flat positions gone", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "RDL", 50, 50.05);
      await placed(service, key, stockOrder(strategyId, "RDL", "buy", 100));
      await advanceClock(service, 600);
      await setQuote(service, "RDL", 52, 52.05);
      await placed(service, key, stockOrder(strategyId, "RDL", "buy", 300));
      await setQuote(service, "RDT", 20, 20.05);
      await placed(service, key, stockOrder(strategyId, "RDT", "sell", 20));
      await setQuote(service, "@ESM26", 5000, 5000.25);
      await placed(service, key, stockOrder(strategyId, "@ESM26", "sell", 1));
      await setQuote(service, "RDF", 10, 10.05);
      await placed(service, key, stockOrder(strategyId, "RDF", "buy", 10));
      await placed(service, key, stockOrder(strategyId, "RDF", "sell", 10));

      const r = await openPositions({ StrategyIds: String(strategyId) });
      assert.equal(r.status, 200, r.text);
      const bySymbol = new Map<string, Record<string, unknown>>(
        r.json.Results.map((p: { ServiceSymbol: { FullSymbol: string } }) => [p.ServiceSymbol.FullSymbol, p]),
      );
      assert.deepEqual([...bySymbol.keys()].sort(), ["@ESM26", "RDL", "RDT"], "a position closed to flat is gone");
      const long = bySymbol.get("RDL") as Record<string, unknown>;
      assert.equal(long.Quantity, 400);
      assert.equal(long.AvgPx, (100 * 50.05 + 300 * 52.05) / 400);
      assert.equal(Date.parse(String(long.OpenedDate)), Date.parse(MARKET_OPEN), "when the position opened");
      assert.equal(long.Currency, "USD");
      assert.equal(long.StrategyId, strategyId);
      assert.equal((bySymbol.get("RDT") as Record<string, unknown>).Quantity, -20);
      assert.equal((bySymbol.get("RDT") as Record<string, unknown>).AvgPx, 20);
      assert.equal((bySymbol.get("@ESM26") as Record<string, unknown>).Quantity, -1);
      assert.equal((bySymbol.get("@ESM26") as Record<string, unknown>).AvgPx, 5000);

      const futures = await openPositions({ StrategyIds: String(strategyId), SecurityType: "FUT" });
      assert.deepEqual(
        futures.json.Results.map((p: { ServiceSymbol: { FullSymbol: string } }) => p.ServiceSymbol.FullSymbol),
        ["@ESM26"],
      );
      const stocks = await openPositions({ StrategyIds: String(strategyId), SecurityType: "CS" });
      assert.equal(stocks.json.Results.length, 2);
      assertRefused(await openPositions({ StrategyIds: String(strategyId), SecurityType: "XX" }), 400, "1101");

      // Partly closing keeps the average cost and the opening time.
      await placed(service, key, stockOrder(strategyId, "RDL", "sell", 100));
      const after = (await positions(service, key, strategyId)).find((p) => p.ServiceSymbol.FullSymbol === "RDL");
      assert.equal(after?.Quantity, 300);
      assert.equal(after?.AvgPx, (100 * 50.05 + 300 * 52.05) / 400);
    });

    test("a position reopened after going flat takes the new opening time", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "RDO", 10, 10.05);
      await placed(service, key, stockOrder(strategyId, "RDO", "buy", 10));
      await placed(service, key, stockOrder(strategyId, "RDO", "sell", 10));
      const reopenedAt = await advanceClock(service, 900);
      await placed(service, key, stockOrder(strategyId, "RDO", "sell", 5));
      const [position] = await positions(service, key, strategyId);
      assert.equal(position?.Quantity, -5);
      const opened = (position as unknown as { OpenedDate: string }).OpenedDate;
      assert.equal(Date.parse(opened), Date.parse(reopenedAt));
    });

    test("the OrderStatus and Position records carry exactly the fields of API.md", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "RDK", 50, 50.05);
      const filled = await placed(service, key, stockOrder(strategyId, "RDK", "buy", 10));
      const resting = await placed(service, key, limitBuy(strategyId, "RDK", 40));
      const sorted = [...ORDER_STATUS_FIELDS].sort();
      const activeRows = (await active({ StrategyIds: String(strategyId) })).json.Results;
      assert.equal(activeRows.length, 1);
      assert.deepEqual(Object.keys(activeRows[0]).sort(), sorted);
      const historyRows = (await history({ StrategyId: String(strategyId) })).json.Results;
      assert.equal(historyRows.length, 1);
      assert.deepEqual(Object.keys(historyRows[0]).sort(), sorted);
      const row = historyRows[0];
      assert.equal(row.Id, filled.SignalId);
      assert.equal(row.SignalId, filled.SignalId);
      assert.equal(row.OrderId, String(filled.SignalId));
      assert.equal(row.StrategyId, strategyId);
      assert.equal(row.AvgPx, 50.05);
      assert.equal(row.AvgFillPrice, 50.05);
      assert.equal(row.BrokerId, null);
      assert.equal(row.SignalType, 1);
      assert.equal(row.TIF, "1");
      assert.equal(row.DoNotSyncToOpen, false);
      assert.equal(Date.parse(row.PostedDate), Date.parse(MARKET_OPEN));
      const restingRow = activeRows[0];
      assert.equal(restingRow.SignalId, resting.SignalId);
      assert.equal(restingRow.AvgPx, null);
      assert.equal(restingRow.FilledQuantity, 0);

      const positionRows = (await openPositions({ StrategyIds: String(strategyId) })).json.Results;
      assert.equal(positionRows.length, 1);
      assert.deepEqual(Object.keys(positionRows[0]).sort(), [...POSITION_FIELDS].sort());
      assert.deepEqual(Object.keys(positionRows[0].ServiceSymbol).sort(), [
        "Description",
        "Expiry",
        "FullSymbol",
        "PutOrCall",
        "StrikePrice",
        "SymbolType",
        "Underlying",
      ]);
      assert.deepEqual(Object.keys(positionRows[0].ExchangeSymbol).sort(), [
        "Currency",
        "MaturityMonthYear",
        "PriceMultiplier",
        "PutOrCall",
        "SecurityExchange",
        "SecurityType",
        "StrikePrice",
        "Symbol",
      ]);
    });

    test("reads answer on WL too", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "RDW", 50, 50.05);
      await placed(service, key, stockOrder(strategyId, "RDW", "buy", 10));
      for (const path of ["/Strategies/GetStrategyActiveOrders", "/Strategies/GetStrategyOpenPositions"]) {
        const r = await service.call("WL", "GET", path, { key, query: { StrategyIds: String(strategyId) } });
        assert.equal(r.status, 200, r.text);
      }
      const r = await service.call("WL", "GET", "/Strategies/GetStrategyHistoricalOrders", {
        key,
        query: { StrategyId: String(strategyId) },
      });
      assert.equal(r.json.Results.length, 1);
    });
  });
}
