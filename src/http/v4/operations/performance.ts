import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { abs, type Decimal, decimal, toNumber } from "../../../core/decimal.js";
import { exchangeSymbolOf, serviceSymbolOf } from "../../../core/symbols/instrument.js";
import { averageClosePrice, averageOpenPrice } from "../../../core/trades.js";
import { type ClosedTrade, closedTrades } from "../../../services/closed-trades.js";
import {
  type DailyEquity,
  dailyEquity,
  type EquitySeries,
  type MonthlyEquity,
  monthlyEquity,
} from "../../../services/equity.js";
import { type StrategyDetails, type StrategyRecord, strategyDetails } from "../../../services/strategy-details.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { oncePer, type RawJson, rawJson } from "../raw-json.js";
import { ClosedTradeRecord, DailyEquityRecord, MonthlyEquityRecord, StrategyDetailsRecord } from "../records.js";
import { DateTime, Id } from "../schemas.js";

const CommissionPlan = Type.String({
  maxLength: 40,
  description: "Default (when omitted), Institutional or None",
});

const sideCode = (side: "buy" | "sell") => (side === "buy" ? "1" : "2");
const maybe = <T>(value: T | null | undefined, map: (v: T) => unknown) =>
  value === null || value === undefined ? null : map(value);

function closedTradeOf(strategyId: number, { trade, commission, profit }: ClosedTrade) {
  const mae = trade.excursion;
  return {
    Id: trade.key,
    TradeId: trade.key,
    StrategyId: strategyId,
    OpenDate: new Date(trade.openedAtMs),
    CloseDate: new Date(trade.closedAtMs as number),
    AvgOpenFillPrice: toNumber(averageOpenPrice(trade)),
    AvgCloseFillPrice: maybe(averageClosePrice(trade), toNumber),
    OpenedQuantity: toNumber(trade.openedQuantity),
    ClosedQuantity: toNumber(trade.closedQuantity),
    OpenSide: sideCode(trade.side),
    CloseSide: sideCode(trade.side === "buy" ? "sell" : "buy"),
    ProfitLoss: toNumber(profit),
    Commission: toNumber(commission),
    MaxDrawdown: mae ? toNumber(mae.amount) : 0,
    MaxDrawdown_DateCalculated: new Date(trade.evaluatedAtMs),
    MaxDrawdown_WorstPrice: maybe(mae?.worstPrice, toNumber),
    MaxDrawdown_WorstPriceDate: maybe(mae?.worstPriceAtMs, (at) => new Date(at)),
    MaxDrawdown_StrategyEquity: maybe(mae?.equity, toNumber),
    MaxDrawdown_EntryPrice: maybe(mae?.entryPrice, toNumber),
    // The open size, unsigned like OpenedQuantity: OpenSide says which way.
    MaxDrawdown_OpenQuantity: maybe(mae?.openQuantity, (quantity) => toNumber(abs(quantity))),
    ServiceSymbol: serviceSymbolOf(trade.instrument),
    ExchangeSymbol: exchangeSymbolOf(trade.instrument),
  };
}

type StrategyRowOf = Pick<
  EquitySeries["strategy"],
  "trades_stocks" | "trades_options" | "trades_futures" | "trades_forex"
>;

/** The fields every Equity result shares. */
function equityHeader(strategy: EquitySeries["strategy"]) {
  return {
    StrategyId: strategy.id,
    StrategyName: strategy.name,
    StartDate: new Date(strategy.created_at),
    SecurityTypesEnabled: securityTypesOf(strategy),
    MonthlyCost: toNumber(decimal(strategy.monthly_cost)),
    StrategyOwnerId: strategy.owner_person_id,
  };
}

export const securityTypesOf = (strategy: StrategyRowOf) => ({
  Stocks: strategy.trades_stocks === 1,
  Options: strategy.trades_options === 1,
  Futures: strategy.trades_futures === 1,
  Forex: strategy.trades_forex === 1,
});

const amount = (value: Decimal) => toNumber(value);

const equityInput = Type.Object({ StrategyId: Id(), CommissionPlan: Type.Optional(CommissionPlan) });

/**
 * The fields made from the record alone (statistics but its age, the kinds
 * traded), serialized once per record version.
 */
const recordFieldsOf = oncePer((record: StrategyRecord) => {
  const st = record.statistics;
  const money = (value: Decimal | null) => (value === null ? null : toNumber(value));
  const fields = {
    PrimarySecurityTypes: record.primarySecurityTypes,
    Return: st.return,
    ReturnLabel: st.returnLabel,
    ProfitFactor: st.profitFactor,
    NumTrades: st.numTrades,
    NumWinners: st.numWinners,
    NumLosers: st.numLosers,
    PercentWinTrades: st.percentWinTrades,
    SumDollarWinners: toNumber(st.sumDollarWinners),
    SumDollarLosers: toNumber(st.sumDollarLosers),
    NumMonths: st.numMonths,
    WinMonthsInUI: st.winMonthsInUI,
    WinMonths: st.winMonths,
    WinMonthsRatio: st.winMonthsRatio,
    MaxDrawdown: st.maxDrawdown,
    MaxDrawdownDays: st.maxDrawdownDays,
    MaxDrawdownStartDate: st.maxDrawdownStartDate,
    MaxDrawdownEndDate: st.maxDrawdownEndDate,
    AvgWinDollars: money(st.avgWinDollars),
    AvgLossDollars: money(st.avgLossDollars),
    AvgTradeDuration: st.avgTradeDuration,
    CorrelationSP500: st.correlationSP500,
    SP500Return: st.sp500Return,
    ReturnVsSP500: st.returnVsSP500,
    AvgLeverage: st.avgLeverage,
    MaxLeverage: st.maxLeverage,
    CorrelationToSP500: st.correlationToSP500,
    Alpha: st.alpha,
    Beta: st.beta,
    Treynor: st.treynor,
    Sortino: st.sortino,
    Sharpe: st.sharpe,
    Calmar: st.calmar,
    LatestTrade: st.latestTrade === null ? null : new Date(st.latestTrade),
  };
  return Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, rawJson(value)])) as Record<
    keyof typeof fields,
    RawJson
  >;
});

/** The StrategyDetails record: the description and the model account as they are now, the record's fields as kept. */
function detailsOf(details: StrategyDetails) {
  const { strategy, account } = details;
  const r = recordFieldsOf(details.record);
  return {
    StrategyId: strategy.id,
    StrategyName: strategy.name,
    ShortDescription: strategy.short_description,
    LongDescription: strategy.long_description,
    IsAlive: strategy.is_alive === 1,
    IsResellable: strategy.is_private === 0,
    StartDate: new Date(strategy.created_at),
    PrimarySecurityTypes: r.PrimarySecurityTypes,
    SecurityTypesEnabled: securityTypesOf(strategy),
    MonthlyCost: toNumber(decimal(strategy.monthly_cost)),
    StrategyOwnerId: strategy.owner_person_id,
    StrategyOwnerName: details.ownerName,
    SuggestedCapital: toNumber(decimal(strategy.starting_capital)),
    LastModified: new Date(strategy.updated_at),
    Score: null,
    IsTradeOwnSystem: details.autotrade.tradesOwnSystem,
    TradeOwnSystemPercent: toNumber(details.autotrade.ownSystemPercent),
    WhiteLabelSiteId: strategy.white_label_site_id,
    IsPrivate: strategy.is_private === 1,
    AUM: toNumber(details.autotrade.aum),
    AUM_NumberOfAccounts: details.autotrade.accounts,
    Return: r.Return,
    ReturnLabel: r.ReturnLabel,
    Equity: toNumber(account.equity),
    Cash: toNumber(account.cash),
    StartingCash: toNumber(decimal(strategy.starting_capital)),
    ProfitFactor: r.ProfitFactor,
    CashDividends: 0,
    BuyingPower: toNumber(account.buyingPower),
    MarginUsed: toNumber(account.marginUsed),
    AgeInDays: details.statistics.ageInDays,
    ModelAccountValue: toNumber(account.equity),
    NumTrades: r.NumTrades,
    NumWinners: r.NumWinners,
    NumLosers: r.NumLosers,
    PercentWinTrades: r.PercentWinTrades,
    SumDollarWinners: r.SumDollarWinners,
    SumDollarLosers: r.SumDollarLosers,
    NumMonths: r.NumMonths,
    WinMonthsInUI: r.WinMonthsInUI,
    WinMonths: r.WinMonths,
    WinMonthsRatio: r.WinMonthsRatio,
    MaxDrawdown: r.MaxDrawdown,
    MaxDrawdownDays: r.MaxDrawdownDays,
    MaxDrawdownStartDate: r.MaxDrawdownStartDate,
    MaxDrawdownEndDate: r.MaxDrawdownEndDate,
    AvgWinDollars: r.AvgWinDollars,
    AvgLossDollars: r.AvgLossDollars,
    AvgTradeDuration: r.AvgTradeDuration,
    CorrelationSP500: r.CorrelationSP500,
    SP500Return: r.SP500Return,
    ReturnVsSP500: r.ReturnVsSP500,
    AvgLeverage: r.AvgLeverage,
    MaxLeverage: r.MaxLeverage,
    CorrelationToSP500: r.CorrelationToSP500,
    Alpha: r.Alpha,
    Beta: r.Beta,
    Treynor: r.Treynor,
    Sortino: r.Sortino,
    Sharpe: r.Sharpe,
    Calmar: r.Calmar,
    // A private strategy is followed only through those who manage it; one that stopped trading takes nobody new.
    NoSubsAllowed: strategy.is_private === 1 || strategy.is_alive !== 1,
    LatestTrade: r.LatestTrade,
  };
}

/** A month's entries, serialized once per version of the marks. */
const monthlyResultsJson = oncePer((months: readonly MonthlyEquity[]) =>
  rawJson(
    months.map((month) => ({
      Month: month.month,
      StartEquity: amount(month.startEquity),
      EndEquity: amount(month.endEquity),
      Return: month.return,
      ReturnWithoutCommissions: month.returnWithoutCommissions,
      BenchmarkStart: amount(month.startBenchmark),
      BenchmarkEnd: amount(month.endBenchmark),
      BenchmarkReturn: month.benchmarkReturn,
    })),
  ),
);

/** The daily entries, serialized once per version of the marks. */
const dailyResultsJson = oncePer((days: readonly DailyEquity[]) =>
  rawJson(
    days.map((day) => ({
      Date: day.day,
      Equity: amount(day.equity),
      EquityWithoutCommissions: amount(day.equityWithoutCommissions),
      Return: day.return,
      ReturnWithoutCommissions: day.returnWithoutCommissions,
      Benchmark: amount(day.benchmark),
      BenchmarkReturn: day.benchmarkReturn,
    })),
  ),
);

/** A strategy's performance record (API.md 4.5): its details and statistics, closed trades and equity. */
export const performanceOperations = [
  defineOperation({
    id: "GetStrategyDetails",
    method: "GET",
    path: "/Strategies/GetStrategyDetails",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "A strategy's description, its model account now, and the statistics of its record (docs/statistics.md). Public strategies are open to every caller; private ones to those who may trade them.",
    input: Type.Object({ StrategyId: Id() }),
    result: StrategyDetailsRecord,
    permission: anyCaller,
    paginated: false,
    preSerialized: true,
    example: { StrategyId: EXAMPLE.strategyId },
    handler: async (ctx, input) => [detailsOf(await strategyDetails(ctx, input.StrategyId))],
  }),
  defineOperation({
    id: "GetStrategyHistoricalClosedTrades",
    method: "GET",
    path: "/Strategies/GetStrategyHistoricalClosedTrades",
    // Clients of the original service call it on GEN too (WIRE.md); never paginated there either.
    servers: ["WL", "GEN"],
    summary:
      "The strategy's closed trades (flat to flat), oldest first, with commissions and profit under CommissionPlan and each trade's maximum adverse excursion. Public strategies' records are open to every caller; private ones to those who may trade them.",
    input: Type.Object({
      StrategyId: Id(),
      CommissionPlan: Type.Optional(CommissionPlan),
      StartDate: Type.Optional(DateTime({ description: "Closed at or after (UTC)" })),
      EndDate: Type.Optional(DateTime({ description: "Closed before (UTC)" })),
    }),
    result: ClosedTradeRecord,
    permission: anyCaller,
    paginated: false,
    example: { StrategyId: EXAMPLE.strategyId, CommissionPlan: "Institutional", StartDate: "2026-01-01T00:00:00Z" },
    handler: async (ctx, input) =>
      (
        await closedTrades(ctx, input.StrategyId, input.CommissionPlan, {
          startMs: input.StartDate === undefined ? undefined : Date.parse(input.StartDate),
          endMs: input.EndDate === undefined ? undefined : Date.parse(input.EndDate),
        })
      ).map((closed) => closedTradeOf(input.StrategyId, closed)),
  }),
  defineOperation({
    id: "GetStrategyHistoricalEquity",
    method: "GET",
    path: "/Strategies/GetStrategyHistoricalEquity",
    servers: ["WL", "GEN"],
    summary:
      "Monthly results of the model account (equity at each month's last NYSE close) after CommissionPlan's commissions and without any, beside the S&P 500 proxy.",
    input: equityInput,
    result: MonthlyEquityRecord,
    permission: anyCaller,
    paginated: false,
    preSerialized: true,
    example: { StrategyId: EXAMPLE.strategyId },
    handler: async (ctx, input) => {
      const { strategy, months } = await monthlyEquity(ctx, input.StrategyId, input.CommissionPlan);
      return [{ ...equityHeader(strategy), MonthlyResults: monthlyResultsJson(months) }];
    },
  }),
  defineOperation({
    id: "GetStrategyHistoricalDailyEquity",
    method: "GET",
    path: "/Strategies/GetStrategyHistoricalDailyEquity",
    servers: ["WL", "GEN"],
    summary:
      "The model account at every NYSE close since the strategy started, after CommissionPlan's commissions and without any, beside the S&P 500 proxy.",
    input: equityInput,
    result: DailyEquityRecord,
    permission: anyCaller,
    paginated: false,
    preSerialized: true,
    example: { StrategyId: EXAMPLE.strategyId, CommissionPlan: "None" },
    handler: async (ctx, input) => {
      const { strategy, days } = await dailyEquity(ctx, input.StrategyId, input.CommissionPlan);
      return [{ ...equityHeader(strategy), MonthlyResults: dailyResultsJson(days) }];
    },
  }),
];
