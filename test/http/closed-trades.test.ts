import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import type { MarketQuote } from "../../src/core/market/quote.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, positions, setQuote, stockOrder } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`closed trades (${backend})`, () => {
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

    const closedTrades = async (strategyId: number, plan?: string, who = key, server: "WL" | "GEN" = "WL") => {
      const r = await service.call(server, "GET", "/Strategies/GetStrategyHistoricalClosedTrades", {
        key: who,
        query: { StrategyId: String(strategyId), ...(plan ? { CommissionPlan: plan } : {}) },
      });
      return r;
    };

    test("fills from flat to flat make one trade, with its prices, P&L by commission plan and adverse excursion", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "ORCL", 50, 50.05);
      await placed(service, key, stockOrder(strategyId, "ORCL", "buy", 100));
      assert.equal((await closedTrades(strategyId)).json.Results.length, 0, "an open trade is not listed");
      // The market falls: the fill loop watches the open trade and notes its worst price, written with the
      // account's next batch: the next buy's, after which the 150 shares (average 48.3833) stand 507.50 under.
      await setQuote(service, "ORCL", 45, 45.05);
      await placed(service, key, stockOrder(strategyId, "ORCL", "buy", 50));
      const watched = await service.storage.db
        .selectFrom("trades")
        .select(["mae_amount", "mae_worst_price"])
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(watched, { mae_amount: "-507.5", mae_worst_price: "45" });
      await setQuote(service, "ORCL", 55, 55.05);
      await placed(service, key, stockOrder(strategyId, "ORCL", "sell", 150));
      const r = await closedTrades(strategyId);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.Results.length, 1);
      const trade = r.json.Results[0];
      assert.equal(trade.Id, trade.TradeId);
      assert.equal(trade.StrategyId, strategyId);
      assert.equal(trade.OpenedQuantity, 150);
      assert.equal(trade.ClosedQuantity, 150);
      assert.equal(trade.OpenSide, "1");
      assert.equal(trade.CloseSide, "2");
      // (100 × 50.05 + 50 × 45.05) / 150, to eight places.
      assert.equal(trade.AvgOpenFillPrice, 48.38333333);
      assert.equal(trade.AvgCloseFillPrice, 55);
      // Realized: 150 × 55 − (5005 + 2252.5) = 992.50; Default commissions $1 a fill.
      assert.equal(trade.Commission, 3);
      assert.equal(trade.ProfitLoss, 989.5);
      // At 45 the first 100 shares were 505 under water; after adding 50 at 45.05 the 150 shares,
      // at an average of 48.38333333, were 507.50 under water at the same bid: the worst seen.
      assert.equal(trade.MaxDrawdown, -507.5);
      assert.equal(trade.MaxDrawdown_WorstPrice, 45);
      assert.equal(trade.MaxDrawdown_EntryPrice, 48.38333333);
      assert.equal(trade.MaxDrawdown_OpenQuantity, 150);
      // Cash 100000 − 5005 − 1 − 2252.50 − 1, and 150 shares at the middle, 45.025.
      assert.equal(trade.MaxDrawdown_StrategyEquity, 99494.25);
      assert.equal(trade.ServiceSymbol.FullSymbol, "ORCL");
      const none = (await closedTrades(strategyId, "none")).json.Results[0];
      assert.deepEqual([none.Commission, none.ProfitLoss], [0, 992.5]);
      const institutional = (await closedTrades(strategyId, "Institutional")).json.Results[0];
      assert.deepEqual([institutional.Commission, institutional.ProfitLoss], [1.05, 991.45]);
      const unknown = await closedTrades(strategyId, "Retail");
      assert.equal(unknown.status, 400);
      assert.equal(unknown.json.ResponseStatus.Errors[0].FieldName, "CommissionPlan");
    });

    test("a worst price seen between two ticks counts for the trade that saw it, not for the one opened after", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "NKE", 50, 50.05);
      await placed(service, key, stockOrder(strategyId, "NKE", "buy", 100));
      // A dip the fill loop notes (worked at its next tick), and the market back where it was, as a feed
      // brings them (the sandbox's SetQuote works the tick at once).
      const { app } = service;
      for (const [bid, ask] of [
        ["45", "45.05"],
        ["50", "50.05"],
      ] as const) {
        const quote = {
          symbol: "NKE",
          bid: decimal(bid),
          ask: decimal(ask),
          last: decimal(bid),
          bidSize: null,
          askSize: null,
          atMs: app.runtime.clock.nowMs(),
        } as MarketQuote;
        app.market.setQuote(quote);
        app.fillLoop.quoteChanged(quote);
      }
      // Before the tick the owner closes the trade and opens another in the same symbol.
      await placed(service, key, stockOrder(strategyId, "NKE", "sell", 100));
      await placed(service, key, stockOrder(strategyId, "NKE", "buy", 100));
      await service.app.fillLoop.settleTrades();
      const [closed] = (await closedTrades(strategyId)).json.Results;
      // 100 shares bought at 50.05 were 505 under water at the bid of 45.
      assert.equal(closed.MaxDrawdown_WorstPrice, 45);
      assert.equal(closed.MaxDrawdown, -505);
      const open = await service.storage.db
        .selectFrom("trades")
        .select(["opened_at", "mae_worst_price", "mae_worst_price_at"])
        .where("strategy_id", "=", strategyId)
        .where("closed_at", "is", null)
        .executeTakeFirstOrThrow();
      assert.equal(open.mae_worst_price, "50", "the dip came before this trade opened");
      assert.ok((open.mae_worst_price_at ?? 0) >= open.opened_at);
    });

    test("a fill that reverses a position closes one trade and opens the next", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "CSCO", 60, 60.02);
      // A short entry resting above the market while the strategy is flat.
      const short = await placed(
        service,
        key,
        stockOrder(strategyId, "CSCO", "sell", 150, { OrderType: "2", Limit: 62, OpenClose: "O" }),
      );
      assert.ok(short.SignalId);
      await placed(service, key, stockOrder(strategyId, "CSCO", "buy", 100));
      await setQuote(service, "CSCO", 62, 62.02);
      const held = await positions(service, key, strategyId);
      assert.deepEqual(
        held.map((p) => p.Quantity),
        [-50],
      );
      const trades = (await closedTrades(strategyId)).json.Results;
      assert.equal(trades.length, 1);
      assert.deepEqual(
        [trades[0].OpenedQuantity, trades[0].ClosedQuantity, trades[0].AvgCloseFillPrice],
        [100, 100, 62],
      );
      const fills = await service.storage.db
        .selectFrom("fills")
        .select(["quantity", "trade_id", "commission"])
        .where("strategy_id", "=", strategyId)
        .orderBy("id")
        .execute();
      assert.deepEqual(
        fills.map((f) => f.quantity),
        ["100", "100", "50"],
      );
      assert.equal(new Set(fills.map((f) => f.trade_id)).size, 2);
    });

    test("a public strategy's record is open to every caller; a private one's only to those who may trade it", async () => {
      const hidden = await newStrategy(service, key);
      const outsider = await closedTrades(hidden, undefined, population.keys.personB);
      assert.equal(outsider.status, 404, "a private strategy is not there for those who may not read it");
      assert.equal(outsider.json.ResponseStatus.Errors[0].Message, `No strategy ${hidden}`);
      assert.equal((await closedTrades(hidden, undefined, population.keys.wlAdminA)).status, 200);
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: ADMIN_KEY,
        body: { StrategyName: "Public Record", StartingCapital: 50000, InitialSiteVisibility: true },
      });
      const visible = made.json.Results[0].StrategyId;
      assert.equal((await closedTrades(visible, undefined, population.keys.personB)).status, 200);
      assert.equal((await closedTrades(999_999)).status, 404);
    });

    test("GEN answers the same closed trades as WL under the same rules, never paginated", async () => {
      const strategyId = await newStrategy(service, key);
      await setQuote(service, "INTC", 30, 30.02);
      await placed(service, key, stockOrder(strategyId, "INTC", "buy", 10));
      await setQuote(service, "INTC", 31, 31.02);
      await placed(service, key, stockOrder(strategyId, "INTC", "sell", 10));
      const onWl = await closedTrades(strategyId, "Default");
      const onGen = await closedTrades(strategyId, "Default", key, "GEN");
      assert.equal(onGen.status, 200, onGen.text);
      assert.equal(onGen.json.Results.length, 1);
      assert.deepEqual(onGen.json.Results, onWl.json.Results);
      assert.equal(onGen.json.Results[0].ProfitLoss, 7.8);
      assert.ok(!("Pagination" in onGen.json), "clients treat a next_cursor here as an error");
      assert.equal((await closedTrades(strategyId, "Retail", key, "GEN")).status, 400);
      assert.equal(
        (await closedTrades(strategyId, undefined, population.keys.personB, "GEN")).status,
        404,
        "not there for those who may not see it",
      );
      assert.equal((await closedTrades(strategyId, undefined, population.keys.wlAdminA, "GEN")).status, 200);
      assert.equal((await closedTrades(999_999, undefined, key, "GEN")).status, 404);
    });
  });
}
