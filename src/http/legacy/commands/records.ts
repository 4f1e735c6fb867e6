import { markPositions } from "../../../core/account.js";
import { commissionPlan } from "../../../core/commissions.js";
import { add, decimal, div, formatDecimal, isZero, mul, round, sub } from "../../../core/decimal.js";
import { openProfit } from "../../../core/positions.js";
import { averageClosePrice, averageOpenPrice, type TradeRecord } from "../../../core/trades.js";
import { marketViewAt } from "../../../engine/market-view.js";
import { equitySeries } from "../../../services/equity.js";
import { tradeOfRow } from "../../../store/trading-state.js";
import { type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { newYorkTime, service, system } from "./signals.js";

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
  if (text !== "0" && text !== "1") throw new LegacyFailure("Invalid request", `${field} must be 0 or 1`);
  return text === "1";
}

/** Which of a system's trades to answer. */
type Which = "all" | "open" | "closed";

function tradesOf(ctx: LegacyRequestContext, strategyId: number, which: Which) {
  const query = ctx.storage.db.selectFrom("trades").where("strategy_id", "=", strategyId);
  if (which === "open") return query.where("closed_at", "is", null);
  if (which === "closed") return query.where("closed_at", "is not", null);
  return query;
}

interface FillRow {
  readonly trade_id: number | null;
  readonly order_id: number;
  readonly side: "buy" | "sell";
  readonly quantity: string;
  readonly price: string;
  readonly filled_at: number;
}

const actionOf = (trade: TradeRecord, fill: FillRow) =>
  fill.side === "buy" ? (fill.side === trade.side ? "BTO" : "BTC") : fill.side === trade.side ? "STO" : "STC";

/**
 * The trade rows of requestTrades, requestTradesOpen and
 * requestAllTrades_overview, oldest first. A closed trade's PL is its realized
 * profit less the commissions the model account paid on it; an open trade's is
 * the same so far plus its open profit at the middle of the current quote.
 */
async function tradeRows(ctx: LegacyRequestContext, strategyId: number, which: Which, withSignals: boolean) {
  const rows = await tradesOf(ctx, strategyId, which).selectAll().orderBy("opened_at").orderBy("id").execute();
  if (rows.length === 0) return [];
  const db = ctx.storage.db;
  // Fills give the component signals and the last closing fill of an open trade (a closed one's is its close).
  const wanted = rows.filter((row) => withSignals || row.closed_at === null).map((row) => row.id);
  const fills: FillRow[] = [];
  for (let i = 0; i < wanted.length; i += 500) {
    const part = await db
      .selectFrom("fills")
      .select(["trade_id", "order_id", "side", "quantity", "price", "filled_at"])
      .where("strategy_id", "=", strategyId)
      .where("trade_id", "in", wanted.slice(i, i + 500))
      .orderBy("id")
      .execute();
    fills.push(...part);
  }
  const fillsByTrade = new Map<number, FillRow[]>();
  for (const fill of fills) {
    if (fill.trade_id === null) continue;
    const list = fillsByTrade.get(fill.trade_id) ?? [];
    list.push(fill);
    fillsByTrade.set(fill.trade_id, list);
  }
  const positions = rows.some((row) => row.closed_at === null)
    ? await db
        .selectFrom("positions")
        .select(["trade_id", "quantity", "cost"])
        .where("strategy_id", "=", strategyId)
        .execute()
    : [];
  const nowMs = ctx.clock.nowMs();
  const view = marketViewAt(ctx.market, nowMs);
  const now = newYorkTime(nowMs).text;
  return rows.map((row) => {
    const trade = tradeOfRow(row);
    const { instrument } = trade;
    const tradeFills = fillsByTrade.get(trade.key) ?? [];
    const closing = tradeFills.filter((fill) => fill.side !== trade.side);
    const lastCloseMs = trade.closedAtMs ?? closing[closing.length - 1]?.filled_at ?? null;
    let profit = sub(trade.realized, trade.commission);
    if (trade.closedAtMs === null) {
      const held = positions.find((p) => p.trade_id === trade.key);
      if (held) {
        const position = { quantity: decimal(held.quantity), cost: decimal(held.cost) };
        const [marked] = markPositions([{ instrument, position }], view);
        if (marked) {
          const open = mul(openProfit(position, marked.mark, instrument.multiplier), marked.usdRate);
          profit = add(profit, round(open, 2));
        }
      }
    }
    const closePrice = averageClosePrice(trade);
    const opened = newYorkTime(trade.openedAtMs);
    const closed = newYorkTime(trade.closedAtMs);
    return {
      trade_id: String(trade.key),
      symbol: instrument.fullSymbol,
      fullSymbol: instrument.fullSymbol,
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
            component_signals: tradeFills.map((fill) => ({
              symbol: instrument.fullSymbol,
              signalid: String(fill.order_id),
              action: actionOf(trade, fill),
              quant: fill.quantity,
              instrument: instrument.symbolType,
              tradeprice: fill.price,
              tradedwhen: newYorkTime(fill.filled_at).text,
            })),
          }
        : {}),
    };
  });
}

export const recordCommands: readonly LegacyCommand[] = [
  {
    name: "requestTrades",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId } = await system(ctx, request);
      return { response: await tradeRows(ctx, strategyId, "all", false) };
    },
  },
  {
    name: "requestTradesOpen",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId } = await system(ctx, request);
      return { response: await tradeRows(ctx, strategyId, "open", false) };
    },
  },
  {
    name: "requestAllTrades_overview",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId } = await system(ctx, request, { subscribers: true });
      const withSignals = flag(request.show_component_signals, "show_component_signals");
      const open = flag(request.openTrades, "openTrades");
      const closed = flag(request.closedTrades, "closedTrades") || flag(request.onlyClosedTrades, "onlyClosedTrades");
      // Both filters (or neither): every trade ever opened.
      const which: Which = open === closed ? "all" : open ? "open" : "closed";
      return { response: await tradeRows(ctx, strategyId, which, withSignals) };
    },
  },
  {
    name: "retrieveSystemEquity",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId, acting } = await system(ctx, request, { subscribers: true });
      const named = request.commission_plan;
      const planName = named === undefined || named === null || named === "" ? "Default" : String(named).trim();
      const plan = commissionPlan(planName);
      if (!plan) {
        throw new LegacyFailure(
          "Unknown commission plan",
          `commission_plan must be Default, Institutional or None, not ${planName}`,
        );
      }
      const marked = await ctx.storage.db
        .selectFrom("equity_marks")
        .select(["day", "marked_at"])
        .where("strategy_id", "=", strategyId)
        .execute();
      const markedAt = new Map(marked.map((row) => [row.day, row.marked_at]));
      const series = await service(() => equitySeries(acting, strategyId, plan.name));
      const equityData = series.marks.flatMap((mark, i) => {
        const at = markedAt.get(mark.day);
        // A mark made after the times were read waits for the next request.
        if (at === undefined) return [];
        return [
          {
            strategy_with_cost: formatDecimal(mark.equity),
            strategy_raw: formatDecimal(series.raw[i]?.equity ?? mark.equity),
            index_price: formatDecimal(mark.benchmark),
            unix_timestamp: String(Math.floor(at / 1000)),
            YYYYMMDD: mark.day.replaceAll("-", ""),
          },
        ];
      });
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
