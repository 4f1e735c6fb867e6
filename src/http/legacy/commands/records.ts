import { Type } from "@sinclair/typebox";
import { commissionPlan } from "../../../core/commissions.js";
import { div, formatDecimal, isZero } from "../../../core/decimal.js";
import { averageClosePrice, averageOpenPrice, type TradeRecord } from "../../../core/trades.js";
import { equitySeries } from "../../../services/equity.js";
import { symbolNames } from "../../../services/sent-symbols.js";
import { strategyTrades, type TradeFill, type TradeFilter } from "../../../services/strategy-trades.js";
import { defineLegacyCommand, type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { flag, id, text } from "../fields.js";
import { mustReadPerformance, mustReadSystem } from "../reach.js";
import { RequestAllTradesOverview, RequestTrades, RequestTradesOpen, RetrieveSystemEquity } from "../shapes/records.js";
import { newYorkTime } from "./signals.js";

/**
 * The legacy record commands (API.md 4.7): a system's trades and its equity
 * curve, read from the same records as the v4 closed trades and equity.
 * Numbers go out as strings; times as New York `YYYY-MM-DD HH:MM:SS` beside
 * unix seconds.
 */

/** An optional 0/1 flag (absent: 0). */
const isSet = (value: string | undefined) => value?.trim() === "1";

const SystemOnly = Type.Object({ systemid: id() });

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
  defineLegacyCommand({
    name: "requestTrades",
    contexts: ["world", "platform"],
    summary: "The system's trades, open and closed, oldest first.",
    answer: RequestTrades.answer,
    input: SystemOnly,
    async handler(ctx, { systemid }) {
      await mustReadSystem(ctx, systemid, false);
      return { response: await tradeRows(ctx, systemid, "all", false) };
    },
  }),
  defineLegacyCommand({
    name: "requestTradesOpen",
    contexts: ["world", "platform"],
    summary: "The system's open trades, oldest first.",
    answer: RequestTradesOpen.answer,
    input: SystemOnly,
    async handler(ctx, { systemid }) {
      await mustReadSystem(ctx, systemid, false);
      return { response: await tradeRows(ctx, systemid, "open", false) };
    },
  }),
  defineLegacyCommand({
    name: "requestAllTrades_overview",
    contexts: ["world", "platform"],
    summary:
      "The system's trades (all, open only or closed only), optionally with their fills. Open to subscribers too.",
    answer: RequestAllTradesOverview.answer,
    input: Type.Object({
      systemid: id(),
      show_component_signals: Type.Optional(flag()),
      openTrades: Type.Optional(flag()),
      closedTrades: Type.Optional(flag()),
      onlyClosedTrades: Type.Optional(flag()),
    }),
    async handler(ctx, input) {
      await mustReadSystem(ctx, input.systemid, true);
      const open = isSet(input.openTrades);
      const closed = isSet(input.closedTrades) || isSet(input.onlyClosedTrades);
      // Both filters (or neither): every trade ever opened.
      const which: TradeFilter = open === closed ? "all" : open ? "open" : "closed";
      return { response: await tradeRows(ctx, input.systemid, which, isSet(input.show_component_signals)) };
    },
  }),
  defineLegacyCommand({
    name: "retrieveSystemEquity",
    contexts: ["world", "platform"],
    summary:
      "The system's equity at every NYSE close, with and without the plan's commissions, beside the S&P 500 proxy. Open to subscribers too, simulated ones included (aggregate performance).",
    answer: RetrieveSystemEquity.answer,
    input: Type.Object({
      systemid: id(),
      commission_plan: Type.Optional(text(40, { failure: "UnknownCommissionPlan" })),
    }),
    async handler(ctx, input) {
      const strategyId = input.systemid;
      await mustReadPerformance(ctx, strategyId);
      const planName = input.commission_plan?.trim() || "Default";
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
  }),
];
