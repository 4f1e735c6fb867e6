import { equityOf, markPositions } from "../../core/account.js";
import { add, type Decimal, div, fromInteger } from "../../core/decimal.js";
import type { SymbolType } from "../../core/symbols/instrument.js";
import { instrumentOf } from "../../store/trading-state.js";
import type { TradingFrame } from "../frame/frame.js";
import type { MarketData } from "../market-data.js";
import { marketViewAt } from "../market-view.js";
import type { CopierMarket } from "./copier.js";

/**
 * What the copier values with: the strategy's model account at market (its
 * equity, from the frame's memory: the account whose events are being copied
 * was just worked there) and the middle of a symbol's quote.
 */
export function copierMarket(frame: TradingFrame, market: MarketData, clock: { nowMs(): number }): CopierMarket {
  return {
    modelValue(strategyId: number): Decimal | null {
      const account = frame.heldAccount(strategyId);
      if (!account) return null;
      const view = marketViewAt(market, clock.nowMs());
      return equityOf(account.state.cash, markPositions(account.state.positions.values(), view));
    },
    price(symbol: string, symbolType: SymbolType): Decimal | null {
      const quote = market.quoteAt(instrumentOf(symbol, symbolType), clock.nowMs());
      return quote ? div(add(quote.bid, quote.ask), fromInteger(2)) : null;
    },
  };
}
