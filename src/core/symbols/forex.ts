import { type Decimal, decimal } from "../decimal.js";

/** Currency pairs the service trades: base/quote, priced in the quote currency. */
export const FOREX_PAIRS: readonly string[] = [
  "EURUSD",
  "GBPUSD",
  "USDJPY",
  "USDCHF",
  "AUDUSD",
  "USDCAD",
  "NZDUSD",
  "EURJPY",
  "EURGBP",
  "EURCHF",
  "EURAUD",
  "EURCAD",
  "EURNZD",
  "EURSEK",
  "EURNOK",
  "EURPLN",
  "GBPJPY",
  "GBPCHF",
  "GBPAUD",
  "GBPCAD",
  "GBPNZD",
  "AUDJPY",
  "AUDNZD",
  "AUDCAD",
  "AUDCHF",
  "NZDJPY",
  "NZDCAD",
  "NZDCHF",
  "CADJPY",
  "CADCHF",
  "CHFJPY",
  "USDMXN",
  "USDZAR",
  "USDSEK",
  "USDNOK",
  "USDDKK",
  "USDSGD",
  "USDHKD",
  "USDTRY",
  "USDPLN",
  "USDCNH",
];

const SUPPORTED = new Set(FOREX_PAIRS);

export interface ForexPair {
  readonly base: string;
  readonly quote: string;
  readonly tickSize: Decimal;
}

/** A supported pair written `EURUSD` or `EUR/USD` (any case), or null. */
export function forexPair(text: string): ForexPair | null {
  const compact = text.trim().toUpperCase().replace("/", "");
  if (!/^[A-Z]{6}$/.test(compact) || !SUPPORTED.has(compact)) return null;
  const quote = compact.slice(3);
  // Yen pairs are quoted to three places, the others to five.
  return { base: compact.slice(0, 3), quote, tickSize: decimal(quote === "JPY" ? "0.001" : "0.00001") };
}
