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
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/** The StrategyDetails fields in the order they are answered. */
const DETAILS_FIELDS =
  "StrategyId, StrategyName, ShortDescription, LongDescription, IsAlive, IsResellable, StartDate, PrimarySecurityTypes, SecurityTypesEnabled, MonthlyCost, StrategyOwnerId, StrategyOwnerName, SuggestedCapital, LastModified, Score, IsTradeOwnSystem, TradeOwnSystemPercent, WhiteLabelSiteId, IsPrivate, AUM, AUM_NumberOfAccounts, Return, ReturnLabel, Equity, Cash, StartingCash, ProfitFactor, CashDividends, BuyingPower, MarginUsed, AgeInDays, ModelAccountValue, NumTrades, NumWinners, NumLosers, PercentWinTrades, SumDollarWinners, SumDollarLosers, NumMonths, WinMonthsInUI, WinMonths, WinMonthsRatio, MaxDrawdown, MaxDrawdownDays, MaxDrawdownStartDate, MaxDrawdownEndDate, AvgWinDollars, AvgLossDollars, AvgTradeDuration, CorrelationSP500, SP500Return, ReturnVsSP500, AvgLeverage, MaxLeverage, CorrelationToSP500, Alpha, Beta, Treynor, Sortino, Sharpe, Calmar, NoSubsAllowed, LatestTrade".split(
    ", ",
  );

/** Every read of a record the services keep: details, and daily and monthly equity under each plan. */
const READS: readonly (readonly [string, "WL" | "GEN" | "GEO", string, Record<string, string>])[] = [
  ["details", "GEN", "GetStrategyDetails", {}],
  ["details on GEO", "GEO", "GetStrategyDetails", {}],
  ["daily", "GEN", "GetStrategyHistoricalDailyEquity", {}],
  ["daily on WL", "WL", "GetStrategyHistoricalDailyEquity", {}],
  ["daily Institutional", "GEN", "GetStrategyHistoricalDailyEquity", { CommissionPlan: "Institutional" }],
  ["daily None", "GEN", "GetStrategyHistoricalDailyEquity", { CommissionPlan: "None" }],
  ["monthly", "GEN", "GetStrategyHistoricalEquity", {}],
  ["monthly Institutional", "WL", "GetStrategyHistoricalEquity", { CommissionPlan: "Institutional" }],
  ["monthly None", "GEN", "GetStrategyHistoricalEquity", { CommissionPlan: "None" }],
];

type Answers = Record<string, string>;

/** The body of every read, each checked to be what JSON.stringify gives for its values. */
async function readRecord(service: TestService, strategyId: number, key: string): Promise<Answers> {
  const answers: Answers = {};
  for (const [name, server, operation, query] of READS) {
    const r = await service.call(server, "GET", `/Strategies/${operation}`, {
      key,
      query: { StrategyId: String(strategyId), ...query },
    });
    assert.equal(r.status, 200, `${name}: ${r.text}`);
    assert.equal(r.headers["content-type"], "application/json; charset=utf-8", name);
    assert.equal(JSON.stringify(JSON.parse(r.text)), r.text, `${name} is serialized as JSON.stringify does`);
    answers[name] = r.text;
  }
  return answers;
}

const resultOf = (text: string | undefined) => JSON.parse(text ?? "null").Results[0];

for (const backend of BACKENDS) {
  describe(`records kept per version (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
    });
    after(() => service.close());

    /** What a process that has kept nothing answers: another instance on the same storage, started now. */
    async function freshRecord(strategyId: number, who = key): Promise<Answers> {
      const fresh = await service.sibling();
      try {
        return await readRecord(fresh, strategyId, who);
      } finally {
        await fresh.close();
      }
    }

    const roundTrip = async (on: TestService, strategyId: number, quantity: number) => {
      await placed(on, key, stockOrder(strategyId, "AAPL", "buy", quantity));
      await placed(on, key, stockOrder(strategyId, "AAPL", "sell", quantity));
    };

    test("kept answers equal fresh ones after a trade and after a mark, under each commission plan", async () => {
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "SPY", 500, 500.02);
      await setQuote(service, "AAPL", 200, 200.05);
      const strategyId = await newStrategy(service, key, 100_000, "Kept Record");
      await roundTrip(service, strategyId, 10);
      await setClock(service, "2026-03-10T21:00:00Z");

      const first = await readRecord(service, strategyId, key);
      assert.deepEqual(Object.keys(resultOf(first.details)), DETAILS_FIELDS);
      assert.equal(resultOf(first.details).NumTrades, 1);
      assert.equal(first["details on GEO"], first.details);
      assert.equal(first["daily on WL"], first.daily);
      assert.notEqual(first["daily Institutional"], first.daily, "each plan has its own series");
      assert.deepEqual(await readRecord(service, strategyId, key), first, "answered again from what was kept");
      assert.deepEqual(await freshRecord(strategyId), first);

      await setClock(service, "2026-03-11T14:00:00Z");
      await setQuote(service, "AAPL", 210, 210.05);
      await roundTrip(service, strategyId, 20);
      const traded = await readRecord(service, strategyId, key);
      assert.equal(resultOf(traded.details).NumTrades, 2);
      assert.equal(traded.daily, first.daily, "no mark yet");
      assert.deepEqual(traded, await freshRecord(strategyId));

      await setClock(service, "2026-03-11T21:00:00Z");
      const marked = await readRecord(service, strategyId, key);
      assert.equal(resultOf(marked.daily).MonthlyResults.length, 2);
      assert.notEqual(marked.details, traded.details, "the statistics take the new mark");
      assert.deepEqual(marked, await freshRecord(strategyId));
    });

    test("a trade or a mark made by another process is answered at once", async () => {
      await setClock(service, "2026-03-12T14:00:00Z");
      const strategyId = await newStrategy(service, key, 100_000, "Traded Elsewhere");
      await roundTrip(service, strategyId, 10);
      const kept = await readRecord(service, strategyId, key);
      assert.equal(resultOf(kept.details).NumTrades, 1);
      assert.equal(resultOf(kept.daily).MonthlyResults.length, 0);

      const other = await service.sibling();
      try {
        await setQuote(other, "SPY", 501, 501.02);
        await setQuote(other, "AAPL", 205, 205.05);
        await roundTrip(other, strategyId, 30);
        assert.equal(resultOf((await readRecord(service, strategyId, key)).details).NumTrades, 2);
        await setClock(other, "2026-03-12T21:00:00Z");
      } finally {
        await other.close();
      }
      // The same time here, so that the age in days is the same too.
      await setClock(service, "2026-03-12T21:00:00Z");
      const marked = await readRecord(service, strategyId, key);
      assert.equal(resultOf(marked.daily).MonthlyResults.length, 1);
      assert.equal(resultOf(marked.daily).MonthlyResults[0].Benchmark, 501.01, "the other process's mark");
      assert.deepEqual(marked, await freshRecord(strategyId));
    });

    test("kept results follow the starting capital (which may change until the strategy trades) and the name around them", async () => {
      await setClock(service, "2026-03-13T14:00:00Z");
      const strategyId = await newStrategy(service, key, 100_000, "Not Traded Yet");
      // Nine closes: the daily entries are long enough to be kept as bytes.
      await setClock(service, "2026-03-25T21:00:00Z");
      const kept = await readRecord(service, strategyId, key);
      assert.equal(resultOf(kept.details).Return, 0);
      const changed = await legacyCall(
        service,
        "changeSystemAttribute",
        { systemid: strategyId, equitycurve_startingcapital: 50_000 },
        key,
      );
      assert.equal(changed.ok, 1, JSON.stringify(changed));
      const now = await readRecord(service, strategyId, key);
      // The mark still says 100,000: measured from 50,000 that is a 100% return.
      assert.equal(resultOf(now.details).Return, 1);
      assert.equal(resultOf(now.daily).MonthlyResults[0].Return, 1);
      assert.deepEqual(now, await freshRecord(strategyId));

      const renamed = await legacyCall(
        service,
        "changeSystemAttribute",
        { systemid: strategyId, name: "Renamed" },
        key,
      );
      assert.equal(renamed.ok, 1, JSON.stringify(renamed));
      const afterRename = await readRecord(service, strategyId, key);
      for (const name of ["details", "daily", "monthly"]) {
        assert.equal(
          resultOf(afterRename[name]).StrategyName,
          "Renamed",
          `${name}: the fields around the kept entries`,
        );
      }
      assert.equal(resultOf(afterRename.daily).MonthlyResults.length, 9);
      assert.deepEqual(resultOf(afterRename.daily).MonthlyResults, resultOf(now.daily).MonthlyResults);
      assert.deepEqual(afterRename, await freshRecord(strategyId));
    });

    test("a kept record of a private strategy is still not there for those who may not read it", async () => {
      await setClock(service, "2026-03-26T14:00:00Z");
      const strategyId = await newStrategy(service, key, 100_000, "Kept Private");
      await roundTrip(service, strategyId, 10);
      await setClock(service, "2026-03-26T21:00:00Z");
      const owners = await readRecord(service, strategyId, key);
      assert.equal(resultOf(owners.details).IsPrivate, true);
      for (const outsider of [population.keys.personB, population.keys.wlAdminB]) {
        for (const [name, server, operation, query] of READS) {
          const r = await service.call(server, "GET", `/Strategies/${operation}`, {
            key: outsider,
            query: { StrategyId: String(strategyId), ...query },
          });
          assert.equal(r.status, 404, `${name}: ${r.text}`);
          assert.equal(r.json.Results, null);
          assert.equal(r.json.ResponseStatus.Errors[0].FieldName, "StrategyId");
          assert.equal(r.json.ResponseStatus.Errors[0].Message, `No strategy ${strategyId}`);
        }
      }
      assert.deepEqual(await readRecord(service, strategyId, population.keys.wlAdminA), owners, "its site's admin");
    });
  });
}
