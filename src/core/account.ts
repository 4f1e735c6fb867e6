import { abs, add, compare, type Decimal, decimal, div, max, mul, ONE, round, sub, ZERO } from "./decimal.js";
import type { Side } from "./fills.js";
import type { MarketView } from "./market/view.js";
import { averagePrice, openProfit, type Position } from "./positions.js";
import type { Instrument } from "./symbols/instrument.js";

/**
 * The model account of a strategy, in US dollars.
 *
 * - Stocks and options settle in cash: a buy pays quantity × price ×
 *   multiplier, a sell receives it (a short sale too); the position's market
 *   value is part of equity. Cash may go negative (a margin loan).
 * - Futures and forex are margined: a fill moves no cash, closing realizes
 *   the P&L into cash, and the open P&L is part of equity.
 * - Every fill pays its commission from cash.
 * - Amounts in other currencies are converted to dollars at the rate of the
 *   moment (a fill's at the fill, a mark's at the mark); each fill's cash
 *   movement is rounded to the cent.
 *
 * Margin used (what the positions tie up): stocks 50% of market value (Reg T,
 * long or short), short options 100% of their value (long options are paid in
 * full and tie up nothing more), futures 5% of notional, forex 2% of notional
 * between the majors and 5% for other pairs. Buying power is the excess
 * (equity − margin used) at the stock rate: twice the excess.
 */
export const MARGIN_RATES = {
  stock: decimal("0.5"),
  shortOption: ONE,
  future: decimal("0.05"),
  forexMajor: decimal("0.02"),
  forexOther: decimal("0.05"),
} as const;

const TWO = decimal("2");

const MAJOR_CURRENCIES = new Set(["USD", "EUR", "JPY", "GBP", "CHF", "CAD", "AUD", "NZD"]);

const settlesInCash = (instrument: Instrument) =>
  instrument.symbolType === "stock" || instrument.symbolType === "option";

/** One open position with the price and dollar rate to mark it at. */
export interface MarkedPosition {
  readonly instrument: Instrument;
  readonly position: Position;
  readonly mark: Decimal;
  /** Dollars per unit of the instrument's currency. */
  readonly usdRate: Decimal;
}

export interface AccountSummary {
  readonly cash: Decimal;
  readonly equity: Decimal;
  readonly marginUsed: Decimal;
  readonly buyingPower: Decimal;
}

const notional = (instrument: Instrument, quantity: Decimal, price: Decimal, usdRate: Decimal) =>
  mul(mul(mul(abs(quantity), price), instrument.multiplier), usdRate);

/** What a position of this signed quantity at this price ties up, in dollars. */
export function marginOf(instrument: Instrument, quantity: Decimal, price: Decimal, usdRate: Decimal): Decimal {
  const value = notional(instrument, quantity, price, usdRate);
  switch (instrument.symbolType) {
    case "stock":
      return mul(value, MARGIN_RATES.stock);
    case "option":
      return compare(quantity, ZERO) < 0 ? mul(value, MARGIN_RATES.shortOption) : ZERO;
    case "future":
      return mul(value, MARGIN_RATES.future);
    case "forex": {
      const base = instrument.fullSymbol.slice(0, 3);
      const major = MAJOR_CURRENCIES.has(base) && MAJOR_CURRENCIES.has(instrument.currency);
      return mul(value, major ? MARGIN_RATES.forexMajor : MARGIN_RATES.forexOther);
    }
  }
}

/**
 * What opening `quantity` more on `side` needs of the excess: the margin it
 * will tie up, and for a long option its whole premium (options are not bought
 * on margin).
 */
export function openingRequirement(
  instrument: Instrument,
  side: Side,
  quantity: Decimal,
  price: Decimal,
  usdRate: Decimal,
): Decimal {
  if (instrument.symbolType === "option" && side === "buy") return notional(instrument, quantity, price, usdRate);
  return marginOf(instrument, side === "buy" ? quantity : sub(ZERO, quantity), price, usdRate);
}

/** The dollar cash a fill moves, before commission: the notional for cash-settled instruments, else the realized P&L. */
export function cashOfFill(
  instrument: Instrument,
  side: Side,
  quantity: Decimal,
  price: Decimal,
  realized: Decimal,
  usdRate: Decimal,
): Decimal {
  if (!settlesInCash(instrument)) return round(mul(realized, usdRate), 2);
  const paid = notional(instrument, quantity, price, usdRate);
  return round(side === "buy" ? sub(ZERO, paid) : paid, 2);
}

/** What a marked position adds to equity: its market value when cash-settled, else its open P&L. */
const equityShareOf = ({ instrument, position, mark, usdRate }: MarkedPosition): Decimal =>
  settlesInCash(instrument)
    ? mul(mul(mul(position.quantity, mark), instrument.multiplier), usdRate)
    : mul(openProfit(position, mark, instrument.multiplier), usdRate);

/** The account marked to market. */
export function summarize(cash: Decimal, positions: readonly MarkedPosition[]): AccountSummary {
  const equity = equityOf(cash, positions);
  let marginUsed = ZERO;
  for (const { instrument, position, mark, usdRate } of positions) {
    marginUsed = add(marginUsed, marginOf(instrument, position.quantity, mark, usdRate));
  }
  marginUsed = round(marginUsed, 2);
  const excess = max(sub(equity, marginUsed), ZERO);
  return { cash, equity, marginUsed, buyingPower: round(div(excess, MARGIN_RATES.stock), 2) };
}

/** The account's equity alone (summarize's, without the margin): what an open trade's excursion notes at each new worst. */
export function equityOf(cash: Decimal, positions: readonly MarkedPosition[]): Decimal {
  let equity = cash;
  for (const marked of positions) equity = add(equity, equityShareOf(marked));
  return round(equity, 2);
}

/**
 * Open positions with the price and dollar rate to mark them at: the middle of
 * the quote, or the average price when no quote (or no dollar rate) is known,
 * valued at cost.
 */
export function markPositions(
  positions: Iterable<{ readonly instrument: Instrument; readonly position: Position }>,
  market: MarketView,
): MarkedPosition[] {
  return [...positions].map((held) => {
    const quote = market.quote(held.instrument);
    const rate = market.usdRate(held.instrument.currency);
    return {
      instrument: held.instrument,
      position: held.position,
      mark: quote && rate ? div(add(quote.bid, quote.ask), TWO) : (averagePrice(held.position) ?? ZERO),
      usdRate: rate ?? ONE,
    };
  });
}

/** Gross exposure in dollars: the sum of the positions' absolute notional values (leverage = exposure / equity). */
export function exposureOf(positions: readonly MarkedPosition[]): Decimal {
  let total = ZERO;
  for (const { instrument, position, mark, usdRate } of positions) {
    total = add(total, notional(instrument, position.quantity, mark, usdRate));
  }
  return round(total, 2);
}
