import { type Decimal, ONE } from "../decimal.js";
import { FOREX_PAIRS, forexPair } from "./forex.js";
import { FUTURE_CONTRACTS } from "./futures.js";
import { SPECIAL_STOCK_SYMBOLS, type SymbolType } from "./instrument.js";

/**
 * What GetSupportedSymbols lists: every futures root, every forex pair and the
 * stock symbols that need special symbology. US stocks and all US equity
 * options are supported by default and not listed.
 */
export interface SupportedSymbol {
  readonly symbolType: Exclude<SymbolType, "option">;
  /** Futures: `@` + root (add month code and year to trade); forex: the pair; stocks: the ticker. */
  readonly symbol: string;
  readonly description: string;
  readonly exchange: string;
  readonly currency: string;
  readonly multiplier: Decimal;
  readonly tickSize: Decimal;
  /** Futures: the month codes the contract is listed in. */
  readonly contractMonths: string | null;
}

const CENT = 1_000_000n as Decimal;

export const SUPPORTED_SYMBOLS: readonly SupportedSymbol[] = [
  ...FUTURE_CONTRACTS.map(
    (c): SupportedSymbol => ({
      symbolType: "future",
      symbol: `@${c.root}`,
      description: c.description,
      exchange: c.exchange,
      currency: c.currency,
      multiplier: c.pointValue,
      tickSize: c.tickSize,
      contractMonths: c.months,
    }),
  ),
  ...FOREX_PAIRS.map((pair): SupportedSymbol => {
    const p = forexPair(pair);
    if (!p) throw new Error(`forex pair ${pair} does not parse`);
    return {
      symbolType: "forex",
      symbol: pair,
      description: `${p.base}/${p.quote}`,
      exchange: "DEFAULT",
      currency: p.quote,
      multiplier: ONE,
      tickSize: p.tickSize,
      contractMonths: null,
    };
  }),
  ...SPECIAL_STOCK_SYMBOLS.map(
    (symbol): SupportedSymbol => ({
      symbolType: "stock",
      symbol,
      description: symbol,
      exchange: "DEFAULT",
      currency: "USD",
      multiplier: ONE,
      tickSize: CENT,
      contractMonths: null,
    }),
  ),
];
