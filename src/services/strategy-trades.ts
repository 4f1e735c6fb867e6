import { markPositions } from "../core/account.js";
import { add, type Decimal, decimal, mul, round, sub } from "../core/decimal.js";
import { openProfit } from "../core/positions.js";
import type { TradeRecord } from "../core/trades.js";
import { marketViewAt } from "../engine/market-view.js";
import { tradeOfRow } from "../store/trading-state.js";
import { dbOf } from "./runtime.js";
import type { TradingRuntime } from "./trading.js";

/**
 * A strategy's trades, open and closed, as the legacy trade lists show them:
 * with their fills and their profit so far. These read what the caller has
 * been found to reach; they check no rights themselves.
 */
export type TradeFilter = "all" | "open" | "closed";

/** A fill of a trade, its numbers as stored. */
export interface TradeFill {
  readonly orderId: number;
  readonly side: "buy" | "sell";
  readonly quantity: string;
  readonly price: string;
  readonly filledAtMs: number;
}

export interface TradeSoFar {
  readonly trade: TradeRecord;
  /** The trade's fills, oldest first, when they were asked for (empty otherwise). */
  readonly fills: readonly TradeFill[];
  /** When the trade last closed some of its quantity: its close, or an open trade's last closing fill. */
  readonly lastCloseMs: number | null;
  /**
   * Realized profit less the commissions the model account paid on the trade;
   * for an open trade, plus its open profit at the middle of the current quote.
   */
  readonly profit: Decimal;
}

/** The strategy's trades (all, the open or the closed ones), oldest first. */
export async function strategyTrades(
  runtime: TradingRuntime,
  strategyId: number,
  which: TradeFilter,
  withFills: boolean,
): Promise<TradeSoFar[]> {
  const db = dbOf(runtime);
  let query = db.selectFrom("trades").selectAll().where("strategy_id", "=", strategyId);
  if (which === "open") query = query.where("closed_at", "is", null);
  if (which === "closed") query = query.where("closed_at", "is not", null);
  const rows = await query.orderBy("opened_at").orderBy("id").execute();
  if (rows.length === 0) return [];
  // An open trade's fills give its last closing fill (a closed one's is its close).
  const wanted = rows.filter((row) => withFills || row.closed_at === null).map((row) => row.id);
  const fillsByTrade = new Map<number, TradeFill[]>();
  for (let i = 0; i < wanted.length; i += 500) {
    const part = await db
      .selectFrom("fills")
      .select(["trade_id", "order_id", "side", "quantity", "price", "filled_at"])
      .where("strategy_id", "=", strategyId)
      .where("trade_id", "in", wanted.slice(i, i + 500))
      .orderBy("id")
      .execute();
    for (const fill of part) {
      if (fill.trade_id === null) continue;
      const list = fillsByTrade.get(fill.trade_id) ?? [];
      list.push({
        orderId: fill.order_id,
        side: fill.side,
        quantity: fill.quantity,
        price: fill.price,
        filledAtMs: fill.filled_at,
      });
      fillsByTrade.set(fill.trade_id, list);
    }
  }
  const positions = rows.some((row) => row.closed_at === null)
    ? await db
        .selectFrom("positions")
        .select(["trade_id", "quantity", "cost"])
        .where("strategy_id", "=", strategyId)
        .execute()
    : [];
  const view = marketViewAt(runtime.market, runtime.clock.nowMs());
  return rows.map((row) => {
    const trade = tradeOfRow(row);
    const fills = fillsByTrade.get(trade.key) ?? [];
    const closing = fills.filter((fill) => fill.side !== trade.side);
    let profit = sub(trade.realized, trade.commission);
    if (trade.closedAtMs === null) {
      const held = positions.find((p) => p.trade_id === trade.key);
      if (held) {
        const position = { quantity: decimal(held.quantity), cost: decimal(held.cost) };
        const [marked] = markPositions([{ instrument: trade.instrument, position }], view);
        if (marked) {
          const open = mul(openProfit(position, marked.mark, trade.instrument.multiplier), marked.usdRate);
          profit = add(profit, round(open, 2));
        }
      }
    }
    return {
      trade,
      fills: withFills ? fills : [],
      lastCloseMs: trade.closedAtMs ?? closing[closing.length - 1]?.filledAtMs ?? null,
      profit,
    };
  });
}
