import { commissionPlan } from "../../../core/commissions.js";
import { div, formatDecimal, isZero } from "../../../core/decimal.js";
import { averageClosePrice, averageOpenPrice, type TradeRecord } from "../../../core/trades.js";
import { equitySeries } from "../../../services/equity.js";
import { symbolNames } from "../../../services/sent-symbols.js";
import { strategyTrades, type TradeFill, type TradeFilter } from "../../../services/strategy-trades.js";
import { type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { systemRead } from "../reach.js";
import { RequestAllTradesOverview, RequestTrades, RequestTradesOpen, RetrieveSystemEquity } from "../shapes/records.js";
import { newYorkTime } from "./signals.js";

/**
 * The legacy record commands (API.md 4.7): a system's trades and its equity
 * curve, read from the same records as the v4 closed trades and equity.
 * Numbers go out as strings; times as New York `YYYY-MM-DD HH:MM:SS` beside
 * unix seconds.
 */

/** An optional 0/1 flag (absent: 0). */
function flag(value: unknown, field: string): boolean {
  if (value === undefined || value === null || value === "") return false;
  const text = typeof value === "number" || typeof value === "string" ? String(value).trim() : "";
  if (text !== "0" && text !== "1") throw new LegacyFailure("InvalidRequest", `${field} must be 0 or 1`);
  return text === "1";
}

const actionOf = (trade: TradeRecord, fill: TradeFill) =>
  fill.side === "buy" ? (fill.side === trade.side ? "BTO" : "BTC") : fill.side === trade.side ? "STO" : "STC";

/** The trade rows of requestTrades, requestTradesOpen and requestAllTrades_overview, oldest first. */
async function tradeRows(ctx: LegacyRequestContext, strategyId: number, which: TradeFilter, withSignals: boolean) {
  const trades = await strategyTrades(ctx, strategyId, which, withSignals);
  const names = await symbolNames(ctx, strategyId);
  const now = newYorkTime(ctx.clock.nowMs()).text;
  return trades.map(({ trade, fills, lastCloseMs, profit }) => {
    const { instrument } = trade;
    // A future as the strategy's client wrote it, for the trade and its signals alike.
    const symbol = names(instrument.fullSymbol);
    const closePrice = averageClosePrice(trade);
    const opened = newYorkTime(trade.openedAtMs);
    const closed = newYorkTime(trade.closedAtMs);
    return {
      trade_id: String(trade.key),
      symbol,
      fullSymbol: symbol,
      symbol_description: instrument.description,
      instrument: instrument.symbolType,
      underlying: instrument.underlying ?? "",
      strike: instrument.strike === null ? "" : formatDecimal(instrument.strike),
      expir: instrument.expiry ?? "",
      putcall: instrument.putOrCall ?? "",
      open_or_closed: trade.closedAtMs === null ? "open" : "closed",
      long_or_short: trade.side === "buy" ? "long" : "short",
      quant_opened: formatDecimal(trade.openedQuantity),
      quant_closed: formatDecimal(trade.closedQuantity),
      opening_price_VWAP: formatDecimal(averageOpenPrice(trade)),
      closing_price_VWAP: closePrice === null ? "" : formatDecimal(closePrice),
      openVWAP_timestamp: opened.unix,
      closeVWAP_timestamp: newYorkTime(lastCloseMs).unix,
      openedWhen: opened.text,
      openedWhenUnixTimeStamp: opened.unix,
      closedWhen: closed.text,
      closedWhenUnixTimeStamp: closed.unix,
      markToMarket_time: now,
      ptValue: formatDecimal(instrument.multiplier),
      PL: formatDecimal(profit),
      currency: instrument.currency,
      ...(withSignals
        ? {
            component_signals: fills.map((fill) => ({
              symbol,
              signalid: String(fill.orderId),
              action: actionOf(trade, fill),
              quant: fill.quantity,
              instrument: instrument.symbolType,
              tradeprice: fill.price,
              tradedwhen: newYorkTime(fill.filledAtMs).text,
            })),
          }
        : {}),
    };
  });
}

export const recordCommands: readonly LegacyCommand[] = [
  {
    name: "requestTrades",
    summary: "The system's trades, open and closed, oldest first.",
    input: RequestTrades.input,
    answer: RequestTrades.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = await systemRead(ctx, request, false);
      return { response: await tradeRows(ctx, strategyId, "all", false) };
    },
  },
  {
    name: "requestTradesOpen",
    summary: "The system's open trades, oldest first.",
    input: RequestTradesOpen.input,
    answer: RequestTradesOpen.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = await systemRead(ctx, request, false);
      return { response: await tradeRows(ctx, strategyId, "open", false) };
    },
  },
  {
    name: "requestAllTrades_overview",
    summary:
      "The system's trades (all, open only or closed only), optionally with their fills. Open to subscribers too.",
    input: RequestAllTradesOverview.input,
    answer: RequestAllTradesOverview.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = await systemRead(ctx, request, true);
      const withSignals = flag(request.show_component_signals, "show_component_signals");
      const open = flag(request.openTrades, "openTrades");
      const closed = flag(request.closedTrades, "closedTrades") || flag(request.onlyClosedTrades, "onlyClosedTrades");
      // Both filters (or neither): every trade ever opened.
      const which: TradeFilter = open === closed ? "all" : open ? "open" : "closed";
      return { response: await tradeRows(ctx, strategyId, which, withSignals) };
    },
  },
  {
    name: "retrieveSystemEquity",
    summary:
      "The system's equity at every NYSE close, with and without the plan's commissions, beside the S&P 500 proxy. Open to subscribers too.",
    input: RetrieveSystemEquity.input,
    answer: RetrieveSystemEquity.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = await systemRead(ctx, request, true);
      const named = request.commission_plan;
      const planName = named === undefined || named === null || named === "" ? "Default" : String(named).trim();
      const plan = commissionPlan(planName);
      if (!plan) {
        throw new LegacyFailure(
          "UnknownCommissionPlan",
          `commission_plan must be Default, Institutional or None, not ${planName}`,
        );
      }
      const series = await equitySeries(ctx, strategyId, plan.name);
      const equityData = series.marks.map((mark, i) => ({
        strategy_with_cost: formatDecimal(mark.equity),
        strategy_raw: formatDecimal(series.raw[i]?.equity ?? mark.equity),
        index_price: formatDecimal(mark.benchmark),
        unix_timestamp: String(Math.floor((series.markedAtMs[i] ?? 0) / 1000)),
        YYYYMMDD: mark.day.replaceAll("-", ""),
      }));
      const first = series.marks[0];
      const scaling =
        first === undefined || isZero(first.benchmark) ? "" : formatDecimal(div(first.equity, first.benchmark));
      return {
        systemname: series.strategy.name,
        systemid: String(strategyId),
        equity_data: equityData,
        initial_index_to_equity_scaling_factor: scaling,
      };
    },
  },
];
