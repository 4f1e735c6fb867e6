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
