import type { Decimal } from "../decimal.js";

/** A market quote for one instrument (by its ServiceSymbol.FullSymbol). */
export interface MarketQuote {
  readonly symbol: string;
  readonly bid: Decimal;
  readonly ask: Decimal;
  readonly last: Decimal;
  /** Size offered at the bid and the ask; null when the source gives none. */
  readonly bidSize: Decimal | null;
  readonly askSize: Decimal | null;
  readonly atMs: number;
}

/**
 * Whether two quotes of a symbol are the same quote: the same object, or one
 * with the same prices, sizes and time (a new one is new liquidity, and
 * offers its sizes afresh). Compared field by field: the fill loop asks this
 * of every quote, and the market of every open position marked.
 */
export const sameQuote = (a: MarketQuote, b: MarketQuote): boolean =>
  a === b ||
  (a.atMs === b.atMs && a.bid === b.bid && a.ask === b.ask && a.bidSize === b.bidSize && a.askSize === b.askSize);
