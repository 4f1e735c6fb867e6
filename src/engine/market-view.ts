import { add, type Decimal, div, fromInteger, isZero, neg, ONE } from "../core/decimal.js";
import type { MarketQuote } from "../core/market/quote.js";
import type { FillRecord, MarketView } from "../core/orders/execution.js";
import { scheduleOf, sessionAt } from "../core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../core/symbols/instrument.js";
import type { MarketData } from "./market-data.js";

/** A market view that also records what fills took from the quotes it showed. */
export interface TradingMarketView extends MarketView {
  /** Takes the fills' quantities from the quotes' sizes (negative: gives them back). */
  take(fills: readonly FillRecord[], direction?: 1 | -1): void;
}

/**
 * The view of the market at an instant, kept for the operations that follow
 * at the same instant: it shows the same until a hand quote is set (the
 * sizes fills take are looked up at each use).
 */
const views = new WeakMap<
  MarketData,
  { readonly nowMs: number; readonly handQuotes: number; readonly view: TradingMarketView }
>();

export function sharedMarketViewAt(market: MarketData, nowMs: number): TradingMarketView {
  const kept = views.get(market);
  if (kept && kept.nowMs === nowMs && kept.handQuotes === market.handQuotes) return kept.view;
  const view = marketViewAt(market, nowMs);
  views.set(market, { nowMs, handQuotes: market.handQuotes, view });
  return view;
}

/** Prices (less the size fills have taken), sessions and dollar rates at the moment, read once per symbol. */
export function marketViewAt(market: MarketData, nowMs: number): TradingMarketView {
  const quotes = new Map<string, MarketQuote | null>();
  const rawQuote = (instrument: Instrument) => {
    if (!quotes.has(instrument.fullSymbol)) quotes.set(instrument.fullSymbol, market.quoteAt(instrument, nowMs));
    return quotes.get(instrument.fullSymbol) ?? null;
  };
  const quoteOf = (instrument: Instrument) => {
    const quote = rawQuote(instrument);
    return quote && market.available(quote);
  };
  const mid = (symbol: string): Decimal | null => {
    const instrument = fromServiceSymbol(symbol, "forex");
    const quote = instrument && quoteOf(instrument);
    return quote ? div(add(quote.bid, quote.ask), fromInteger(2)) : null;
  };
  return {
    quote: quoteOf,
    quoteAt: (instrument, atMs) => market.quoteAt(instrument, atMs),
    isOpen: (instrument) => sessionAt(scheduleOf(instrument), nowMs) !== null,
    usdRate(currency) {
      if (currency === "USD") return ONE;
      const direct = mid(`${currency}USD`);
      if (direct !== null) return direct;
      const inverse = mid(`USD${currency}`);
      return inverse === null || isZero(inverse) ? null : div(ONE, inverse);
    },
    take(fills, direction = 1) {
      for (const fill of fills) {
        const quote = rawQuote(fill.instrument);
        if (quote) market.take(quote, fill.side, direction === 1 ? fill.quantity : neg(fill.quantity));
      }
    },
  };
}
