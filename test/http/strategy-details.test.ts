import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/** The StrategyDetails record's fields, as API.md lists them. */
const FIELDS =
  "StrategyId, StrategyName, ShortDescription, LongDescription, IsAlive, IsResellable, StartDate, PrimarySecurityTypes, SecurityTypesEnabled, MonthlyCost, StrategyOwnerId, StrategyOwnerName, SuggestedCapital, LastModified, Score, IsTradeOwnSystem, TradeOwnSystemPercent, WhiteLabelSiteId, IsPrivate, AUM, AUM_NumberOfAccounts, Return, ReturnLabel, Equity, Cash, StartingCash, ProfitFactor, CashDividends, BuyingPower, MarginUsed, AgeInDays, ModelAccountValue, NumTrades, NumWinners, NumLosers, PercentWinTrades, SumDollarWinners, SumDollarLosers, NumMonths, WinMonthsInUI, WinMonths, WinMonthsRatio, MaxDrawdown, MaxDrawdownDays, MaxDrawdownStartDate, MaxDrawdownEndDate, AvgWinDollars, AvgLossDollars, AvgTradeDuration, CorrelationSP500, SP500Return, ReturnVsSP500, AvgLeverage, MaxLeverage, CorrelationToSP500, Alpha, Beta, Treynor, Sortino, Sharpe, Calmar, NoSubsAllowed, LatestTrade".split(
    ", ",
  );

for (const backend of BACKENDS) {
  describe(`GetStrategyDetails (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
    });
    after(() => service.close());

    const details = async (strategyId: number, who = key) =>
      service.call("GEN", "GET", "/Strategies/GetStrategyDetails", {
        key: who,
        query: { StrategyId: String(strategyId) },
      });

    test("the record's statistics follow its trades, marks and model account", async () => {
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "SPY", 500, 500.02);
      await setQuote(service, "TSLA", 300, 300.1);
      const strategyId = await newStrategy(service, key);
      await placed(service, key, stockOrder(strategyId, "TSLA", "buy", 10));
      await setClock(service, "2026-03-10T21:00:00Z");
      await setQuote(service, "TSLA", 310, 310.1);
      await setClock(service, "2026-03-11T14:00:00Z");
      const before = await details(strategyId);
      assert.equal(before.json.Results[0].NumTrades, 0, "the trade is still open");
      await placed(service, key, stockOrder(strategyId, "TSLA", "sell", 10));
      await setClock(service, "2026-03-11T21:00:00Z");
      const r = await details(strategyId);
      assert.equal(r.status, 200, r.text);
      const d = r.json.Results[0];
      assert.deepEqual(Object.keys(d).sort(), [...FIELDS].sort());
      // Bought 10 at 300.10, sold 10 at 310: 99 of profit less $2 of commissions.
      assert.deepEqual([d.NumTrades, d.NumWinners, d.NumLosers], [1, 1, 0]);
      assert.equal(d.SumDollarWinners, 97);
      assert.equal(d.ProfitFactor, null, "no losers");
      assert.equal(d.PercentWinTrades, 1);
      assert.equal(d.Cash, 100097);
      assert.equal(d.Equity, 100097);
      assert.equal(d.ModelAccountValue, 100097);
      assert.equal(d.StartingCash, 100000);
      assert.equal(d.ReturnLabel, "Cumulative");
      assert.ok(Math.abs(d.Return - 0.00097) < 1e-12);
      assert.equal(d.NumMonths, 1);
      assert.equal(d.WinMonthsInUI, "1/1");
      assert.deepEqual(d.PrimarySecurityTypes, ["CS"]);
      assert.deepEqual(d.SecurityTypesEnabled, { Stocks: true, Options: false, Futures: false, Forex: false });
      assert.equal(d.LatestTrade, "2026-03-11T14:00:00.000Z");
      assert.equal(d.AUM, 0);
      assert.equal(d.IsPrivate, true);
      assert.equal(d.StrategyOwnerId, population.people.personA);
    });

    test("private strategies are shown only to those who may trade them; public ones to everyone; on GEO too", async () => {
      const hidden = await newStrategy(service, key, 10_000, "Hidden Record");
      const outsider = await details(hidden, population.keys.personB);
      const none = await details(987_654_321, population.keys.personB);
      assert.deepEqual([outsider.status, none.status], [404, 404], "a private strategy is not there for others");
      assert.deepEqual(
        outsider.json.ResponseStatus.Errors,
        none.json.ResponseStatus.Errors.map((e: { Message: string }) => ({
          ...e,
          Message: e.Message.replace("987654321", String(hidden)),
        })),
      );
      const made = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: ADMIN_KEY,
        body: { StrategyName: "Open Record", StartingCapital: 10000, InitialSiteVisibility: true },
      });
      const open = made.json.Results[0].StrategyId;
      const r = await service.call("GEO", "GET", "/Strategies/GetStrategyDetails", {
        key: population.keys.personB,
        query: { StrategyId: String(open) },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.Results[0].NumTrades, 0);
      assert.equal(r.json.Results[0].Return, null, "no marks yet");
      assert.equal((await details(999_999)).status, 404);
    });
  });
}
