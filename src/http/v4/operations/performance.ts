import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { toNumber } from "../../../core/decimal.js";
import { exchangeSymbolOf, serviceSymbolOf } from "../../../core/symbols/instrument.js";
import { averageClosePrice, averageOpenPrice } from "../../../core/trades.js";
import { type ClosedTrade, closedTrades } from "../../../services/closed-trades.js";
import { defineOperation } from "../operation.js";
import { ClosedTradeRecord } from "../records.js";
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
    MaxDrawdown_OpenQuantity: maybe(mae?.openQuantity, toNumber),
    ServiceSymbol: serviceSymbolOf(trade.instrument),
    ExchangeSymbol: exchangeSymbolOf(trade.instrument),
  };
}

/** A strategy's performance record (API.md 4.5): its closed trades. */
export const performanceOperations = [
  defineOperation({
    id: "GetStrategyHistoricalClosedTrades",
    method: "GET",
    path: "/Strategies/GetStrategyHistoricalClosedTrades",
    servers: ["WL"],
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
    handler: async (ctx, input) =>
      (
        await closedTrades(ctx, input.StrategyId, input.CommissionPlan, {
          startMs: input.StartDate === undefined ? undefined : Date.parse(input.StartDate),
          endMs: input.EndDate === undefined ? undefined : Date.parse(input.EndDate),
        })
      ).map((closed) => closedTradeOf(input.StrategyId, closed)),
  }),
];
