import { add, type Decimal, isZero, mul, sub, ZERO } from "../decimal.js";
import type { Side } from "../fills.js";
import type { Instrument } from "../symbols/instrument.js";
import { cashFlowOf, heldBefore, NO_MARK, nextPnlMark, type PnlMark } from "./account-returns.js";

/**
 * A brokerage account marked at an NYSE close (account-returns.ts says what
 * the marks are for): its value, the broker's cash and positions at the
 * close's prices, and for each strategy it follows the value of what that
 * setup holds and its running profit and loss.
 *
 * The account is read after the close (the marker runs when the clock has
 * passed it), so what it holds then is what it holds now less the fills
 * since: the service's own fills are taken back out (an execution the service
 * did not send after the close is not known to it, and stays in). Amounts in
 * another currency are taken into dollars at the close's rate. An account a
 * price or a rate is missing for is not marked at that close (null): its next
 * mark covers the interval, each mark going on from the one before.
 */
export interface MarkFill {
  readonly strategyId: number;
  readonly instrument: Instrument;
  readonly side: Side;
  readonly quantity: Decimal;
  readonly price: Decimal;
  readonly filledAt: number;
}

export interface Holding {
  readonly instrument: Instrument;
  /** Signed: short below zero. */
  readonly quantity: Decimal;
}

/** A setup's holdings in the account (now) and its last mark before the close, if any. */
export interface Book {
  readonly strategyId: number;
  readonly held: readonly Holding[];
  readonly previous: (PnlMark & { readonly markedAt: number }) | null;
}

export interface AccountNow {
  /** The broker's cash and positions now. */
  readonly cash: Decimal;
  readonly positions: readonly Holding[];
  readonly books: readonly Book[];
  /** The account's fills since the earliest of its books' previous marks (and its reset), oldest first. */
  readonly fills: readonly MarkFill[];
  /** A book marked for the first time counts the fills after this (the account's paper reset, or 0). */
  readonly sinceMs: number;
}

/** What the market said at the close. */
export interface ClosePrices {
  mid(instrument: Instrument): Decimal | null;
  usdRate(currency: string): Decimal | null;
}

export interface BookMark extends PnlMark {
  readonly strategyId: number;
}

export interface AccountMark {
  readonly value: Decimal;
  readonly cash: Decimal;
  readonly books: readonly BookMark[];
}

/** Dollars of a holding at the close, or null when its price or rate is missing. */
function valueAt(holding: Holding, prices: ClosePrices): Decimal | null {
  if (isZero(holding.quantity)) return ZERO;
  const mid = prices.mid(holding.instrument);
  const rate = prices.usdRate(holding.instrument.currency);
  if (mid === null || rate === null) return null;
  return mul(mul(mul(holding.quantity, mid), holding.instrument.multiplier), rate);
}

/** Dollars of fills' cash flows at the close's rates, or null when a rate is missing. */
function flowOf(fills: readonly MarkFill[], prices: ClosePrices): Decimal | null {
  let total = ZERO;
  for (const fill of fills) {
    const rate = prices.usdRate(fill.instrument.currency);
    if (rate === null) return null;
    total = add(total, mul(cashFlowOf({ ...fill, multiplier: fill.instrument.multiplier }), rate));
  }
  return total;
}

/** What was held at the close of each holding: now, less the fills after it. */
function heldAt(held: readonly Holding[], later: readonly MarkFill[]): Holding[] {
  const bySymbol = new Map(held.map((h) => [h.instrument.fullSymbol, h]));
  // A holding closed since the close is flat now, and was held then.
  for (const fill of later) {
    if (!bySymbol.has(fill.instrument.fullSymbol))
      bySymbol.set(fill.instrument.fullSymbol, { instrument: fill.instrument, quantity: ZERO });
  }
  return [...bySymbol.values()].map((h) => ({
    instrument: h.instrument,
    quantity: heldBefore(
      h.quantity,
      later.filter((f) => f.instrument.fullSymbol === h.instrument.fullSymbol),
    ),
  }));
}

/** The account's mark at the close, or null when a price or rate it needs is missing. */
export function markAccountAt(account: AccountNow, closeMs: number, prices: ClosePrices): AccountMark | null {
  const later = account.fills.filter((f) => f.filledAt > closeMs);
  const laterFlow = flowOf(later, prices);
  if (laterFlow === null) return null;
  const cash = sub(account.cash, laterFlow);
  let value = cash;
  for (const holding of heldAt(account.positions, later)) {
    const dollars = valueAt(holding, prices);
    if (dollars === null) return null;
    value = add(value, dollars);
  }
  const books: BookMark[] = [];
  for (const book of account.books) {
    const mine = account.fills.filter((f) => f.strategyId === book.strategyId);
    let holdingsValue = ZERO;
    for (const holding of heldAt(
      book.held,
      mine.filter((f) => f.filledAt > closeMs),
    )) {
      const dollars = valueAt(holding, prices);
      if (dollars === null) return null;
      holdingsValue = add(holdingsValue, dollars);
    }
    const since = book.previous?.markedAt ?? account.sinceMs;
    const flow = flowOf(
      mine.filter((f) => f.filledAt > since && f.filledAt <= closeMs),
      prices,
    );
    if (flow === null) return null;
    books.push({ strategyId: book.strategyId, ...nextPnlMark(book.previous ?? NO_MARK, flow, holdingsValue) });
  }
  return { value, cash, books };
}
