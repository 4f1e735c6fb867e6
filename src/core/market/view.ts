import type { Decimal } from "../decimal.js";
import type { Quote } from "../fills.js";
import type { Instrument } from "../symbols/instrument.js";

/** What trading rules need to know of the market at a moment. */
export interface MarketView {
  quote(instrument: Instrument): Quote | null;
  isOpen(instrument: Instrument): boolean;
  /** Dollars per unit of the currency, or null when no quote gives the rate. */
  usdRate(currency: string): Decimal | null;
  /** The quote as it stood at an earlier instant (an expired contract's settlement); absent where no history is kept. */
  quoteAt?(instrument: Instrument, atMs: number): Quote | null;
}
