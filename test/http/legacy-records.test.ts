import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { legacyCall, sitePlatform } from "../helpers/legacy.js";
import {
  advanceClock,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

type Row = Record<string, string> & { component_signals?: Record<string, string>[] };

for (const backend of BACKENDS) {
  describe(`legacy v3 trades and equity on the v4 records (${backend})`, () => {
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

    const v3 = (command: string, body: Record<string, unknown>, apikey = key, path?: string) =>
      legacyCall(service, command, body, apikey, path);
    const rows = async (command: string, body: Record<string, unknown>): Promise<Row[]> => {
      const r = await v3(command, body);
      assert.equal(r.ok, 1, JSON.stringify(r));
      return r.response;
    };
    const ids = (list: Row[]) => list.map((row) => row.symbol);

    test("trades from v4 orders: VWAPs, quantities, sides, PL, times, filters and component signals", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "AAPL", 200, 200.05);
      const first = await placed(service, key, stockOrder(systemid, "AAPL", "buy", 100));
      await advanceClock(service, 60);
      await setQuote(service, "AAPL", 210, 210.1);
      const second = await placed(service, key, stockOrder(systemid, "AAPL", "buy", 100));
      await advanceClock(service, 60);
      await setQuote(service, "AAPL", 220, 220.1);
      const third = await placed(service, key, stockOrder(systemid, "AAPL", "sell", 150));

      // Half-closed: 200 opened at (20005 + 21010) / 200, 150 closed at the bid.
      const [open] = await rows("requestTradesOpen", { systemid });
      assert.ok(open);
      assert.equal(open.open_or_closed, "open");
      assert.equal(open.long_or_short, "long");
      assert.deepEqual(
        [open.quant_opened, open.quant_closed, open.opening_price_VWAP, open.closing_price_VWAP],
        ["200", "150", "205.075", "220"],
      );
      // Realized 150 × 14.925 plus 50 open at the middle, 220.05, less the three fills' $1 commissions.
      assert.equal(open.PL, String(2238.75 + 748.75 - 3));
      assert.deepEqual(
        [open.symbol, open.fullSymbol, open.instrument, open.ptValue, open.currency],
        ["AAPL", "AAPL", "stock", "1", "USD"],
      );
      assert.equal(open.openedWhen, "2026-03-10 10:00:00");
      assert.equal(open.openedWhenUnixTimeStamp, String(Date.parse(MARKET_OPEN) / 1000));
      assert.equal(open.openVWAP_timestamp, open.openedWhenUnixTimeStamp);
      assert.equal(open.closeVWAP_timestamp, String(Date.parse(MARKET_OPEN) / 1000 + 120));
      assert.deepEqual([open.closedWhen, open.closedWhenUnixTimeStamp], ["", ""]);
      assert.equal(open.markToMarket_time, "2026-03-10 10:02:00");

      await advanceClock(service, 60);
      const fourth = await placed(service, key, stockOrder(systemid, "AAPL", "sell", 50));
      await setQuote(service, "MSFT", 400, 400.1);
      await placed(service, key, stockOrder(systemid, "MSFT", "sell", 10));
      await setQuote(service, "MSFT", 390, 390.1);

      const all = await rows("requestTrades", { systemid });
      assert.deepEqual(ids(all), ["AAPL", "MSFT"], "oldest first");
      const [aapl, msft] = all as [Row, Row];
      assert.equal(aapl.open_or_closed, "closed");
      assert.deepEqual([aapl.quant_closed, aapl.closing_price_VWAP], ["200", "220"]);
      // 200 × 14.925 realized less four $1 commissions.
      assert.equal(aapl.PL, "2981");
      assert.equal(aapl.closedWhen, "2026-03-10 10:03:00");
      assert.equal(aapl.closedWhenUnixTimeStamp, String(Date.parse(MARKET_OPEN) / 1000 + 180));
      assert.equal(aapl.closeVWAP_timestamp, aapl.closedWhenUnixTimeStamp);
      assert.equal(aapl.component_signals, undefined);
      // A short: 10 sold at 400, marked at the middle, 390.05, less its $1 commission.
      assert.deepEqual(
        [msft.long_or_short, msft.open_or_closed, msft.quant_opened, msft.opening_price_VWAP, msft.closing_price_VWAP],
        ["short", "open", "10", "400", ""],
      );
      assert.equal(msft.PL, "98.5");

      assert.deepEqual(ids(await rows("requestTradesOpen", { systemid })), ["MSFT"]);
      assert.deepEqual(ids(await rows("requestAllTrades_overview", { systemid })), ["AAPL", "MSFT"]);
      assert.deepEqual(ids(await rows("requestAllTrades_overview", { systemid, openTrades: 1 })), ["MSFT"]);
      assert.deepEqual(ids(await rows("requestAllTrades_overview", { systemid, closedTrades: "1" })), ["AAPL"]);
      assert.deepEqual(ids(await rows("requestAllTrades_overview", { systemid, onlyClosedTrades: 1 })), ["AAPL"]);
      assert.deepEqual(ids(await rows("requestAllTrades_overview", { systemid, openTrades: 0, closedTrades: 0 })), [
        "AAPL",
        "MSFT",
      ]);
      const bad = await v3("requestAllTrades_overview", { systemid, openTrades: 2 });
      assert.deepEqual([bad.ok, bad.error.title], [0, "Invalid request"]);

      const [withSignals] = await rows("requestAllTrades_overview", {
        systemid,
        show_component_signals: 1,
        closedTrades: 1,
      });
      assert.deepEqual(withSignals?.component_signals, [
        {
          symbol: "AAPL",
          signalid: String(first.SignalId),
          action: "BTO",
          quant: "100",
          instrument: "stock",
          tradeprice: "200.05",
          tradedwhen: "2026-03-10 10:00:00",
        },
        {
          symbol: "AAPL",
          signalid: String(second.SignalId),
          action: "BTO",
          quant: "100",
          instrument: "stock",
          tradeprice: "210.1",
          tradedwhen: "2026-03-10 10:01:00",
        },
        {
          symbol: "AAPL",
          signalid: String(third.SignalId),
          action: "STC",
          quant: "150",
          instrument: "stock",
          tradeprice: "220",
          tradedwhen: "2026-03-10 10:02:00",
        },
        {
          symbol: "AAPL",
          signalid: String(fourth.SignalId),
          action: "STC",
          quant: "50",
          instrument: "stock",
          tradeprice: "220",
          tradedwhen: "2026-03-10 10:03:00",
        },
      ]);

      // The short covered at the ask: 10 × 9.9 less two $1 commissions.
      const cover = await placed(service, key, stockOrder(systemid, "MSFT", "buy", 10));
      const [, short] = await rows("requestAllTrades_overview", { systemid, show_component_signals: 1 });
      assert.deepEqual([short?.open_or_closed, short?.closing_price_VWAP, short?.PL], ["closed", "390.1", "97"]);
      assert.deepEqual(
        short?.component_signals?.map((s) => [s.action, s.quant, s.tradeprice]),
        [
          ["STO", "10", "400"],
          ["BTC", "10", "390.1"],
        ],
      );
      assert.equal(short?.component_signals?.[1]?.signalid, String(cover.SignalId));
      assert.deepEqual(await rows("requestTradesOpen", { systemid }), []);
    });

    test("a system without trades answers empty lists", async () => {
      const systemid = await newStrategy(service, key, 100_000, "Idle");
      assert.deepEqual(await rows("requestTrades", { systemid }), []);
      assert.deepEqual(await rows("requestAllTrades_overview", { systemid, show_component_signals: 1 }), []);
    });

    test("a key reaches only its systems; a platform key its site's people's", async () => {
      const systemid = await newStrategy(service, key);
      for (const command of [
        "requestTrades",
        "requestTradesOpen",
        "requestAllTrades_overview",
        "retrieveSystemEquity",
      ]) {
        const other = await v3(command, { systemid }, population.keys.personB);
        assert.deepEqual([other.ok, other.error?.title], [0, "Unable to access this systemid"], command);
      }
      const missing = await v3("requestTrades", { systemid: 999_999 });
      assert.deepEqual([missing.ok, missing.error?.title], [0, "Unable to access this systemid"]);
      const { platformId, platformKey } = await sitePlatform(service, population);
      const viaPlatform = await v3(
        "requestTrades",
        { systemid },
        platformKey,
        `/platform/apiv3/${platformId}/requestTrades`,
      );
      assert.deepEqual([viaPlatform.ok, viaPlatform.response], [1, []]);
    });

    test("retrieveSystemEquity: each close's mark with and without commissions beside the index", async () => {
      await setClock(service, "2026-03-11T14:00:00Z");
      await setQuote(service, "SPY", 500, 500.02);
      await setQuote(service, "AAPL", 200, 200.05);
      const systemid = await newStrategy(service, key, 100_000, "Equity System");
      const none = await v3("retrieveSystemEquity", { systemid });
      assert.equal(none.ok, 1, JSON.stringify(none));
      assert.deepEqual(
        [none.systemname, none.systemid, none.equity_data, none.initial_index_to_equity_scaling_factor],
        ["Equity System", String(systemid), [], ""],
      );
      await placed(service, key, stockOrder(systemid, "AAPL", "buy", 100));
      // Past Wednesday's close, then Thursday's.
      await setClock(service, "2026-03-11T21:00:00Z");
      await setQuote(service, "AAPL", 210, 210.05);
      await setQuote(service, "SPY", 505, 505.02);
      await setClock(service, "2026-03-12T21:00:00Z");

      const equity = await v3("retrieveSystemEquity", { systemid });
      assert.equal(equity.ok, 1, JSON.stringify(equity));
      // Cash 100000 − 20005 − $1, and 100 shares at the middle.
      assert.deepEqual(equity.equity_data, [
        {
          strategy_with_cost: "99996.5",
          strategy_raw: "99997.5",
          index_price: "500.01",
          unix_timestamp: String(Date.parse("2026-03-11T20:00:00Z") / 1000),
          YYYYMMDD: "20260311",
        },
        {
          strategy_with_cost: "100996.5",
          strategy_raw: "100997.5",
          index_price: "505.01",
          unix_timestamp: String(Date.parse("2026-03-12T20:00:00Z") / 1000),
          YYYYMMDD: "20260312",
        },
      ]);
      assert.equal(equity.initial_index_to_equity_scaling_factor, "199.98900022");

      const free = await v3("retrieveSystemEquity", { systemid, commission_plan: "None" });
      assert.deepEqual(
        free.equity_data.map((d: Row) => [d.strategy_with_cost, d.strategy_raw]),
        [
          ["99997.5", "99997.5"],
          ["100997.5", "100997.5"],
        ],
      );
      const explicit = await v3("retrieveSystemEquity", { systemid, commission_plan: "default" });
      assert.deepEqual(explicit.equity_data, equity.equity_data);
      const unknown = await v3("retrieveSystemEquity", { systemid, commission_plan: "Cheap" });
      assert.deepEqual([unknown.ok, unknown.error.title], [0, "Unknown commission plan"]);
    });
  });
}
