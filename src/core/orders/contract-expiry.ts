import { addDays, instantOf } from "../calendar.js";
import { add, compare, type Decimal, div, formatDecimal, fromInteger, max, sub, ZERO } from "../decimal.js";
import type { MarketView } from "../market/view.js";
import { averagePrice, type Position } from "../positions.js";
import { lastSessionBefore, scheduleOf } from "../sessions.js";
import { fromServiceSymbol, type Instrument } from "../symbols/instrument.js";

/**
 * Options and futures stop trading: an option after its expiry date, a
 * futures contract after its contract month (New York dates, as orders in
 * them are refused). At that instant the service settles what is left in
 * them: their live orders expire and their positions close at the settlement
 * price (docs/decisions.md, "Contract expiry").
 */
const NEW_YORK = "America/New_York";

/** Worked out once per instrument: instruments are kept once each, and the fill loop asks at every catch-up. */
const tradingEnds = new WeakMap<Instrument, number | null>();

/** The first instant the contract can no longer trade (New York midnight after its last day); null when it never expires. */
export function tradingEndOf(instrument: Instrument): number | null {
  const known = tradingEnds.get(instrument);
  if (known !== undefined) return known;
  const end = endOf(instrument);
  tradingEnds.set(instrument, end);
  return end;
}

function endOf(instrument: Instrument): number | null {
  const { expiry } = instrument;
  if (expiry === null) return null;
  const [year, month, day] = expiry.split("-").map(Number) as [number, number, number | undefined];
  const next =
    instrument.symbolType === "future"
      ? month === 12
        ? { year: year + 1, month: 1, day: 1 }
        : { year, month: month + 1, day: 1 }
      : addDays({ year, month, day: day ?? 1 }, 1);
  return instantOf(NEW_YORK, next, 0);
}

/** Whether the contract (future) or option can no longer trade at the instant. */
export function hasExpired(instrument: Instrument, atMs: number): boolean {
  const end = tradingEndOf(instrument);
  return end !== null && atMs >= end;
}

/** An expired position's settlement price, and how it was reached (the closing order's note). */
export interface Settlement {
  readonly price: Decimal;
  readonly note: string;
}

const TWO = fromInteger(2);

/** The middle of the instrument's quote at the close of the last session before the contract's end, or null. */
function closingMark(market: MarketView, instrument: Instrument, endMs: number): Decimal | null {
  const close = lastSessionBefore(scheduleOf(instrument), endMs);
  if (!close || !market.quoteAt) return null;
  const quote = market.quoteAt(instrument, close.closesAtMs - 1);
  return quote ? div(add(quote.bid, quote.ask), TWO) : null;
}

/**
 * What an expired contract settles at. A future settles at its last price
 * (the middle of its quote at its last session's close). An option settles in
 * cash at its value at expiry: what it is in the money by against its
 * underlying's last price (a call the price less the strike, a put the strike
 * less the price), nothing when out of the money; without the underlying's
 * price, at its own last price. Null when no price is known.
 */
export function settlementOf(instrument: Instrument, market: MarketView): Settlement | null {
  const endMs = tradingEndOf(instrument);
  if (endMs === null) return null;
  const underlying =
    instrument.symbolType === "option" && instrument.underlying !== null
      ? fromServiceSymbol(instrument.underlying, "stock")
      : null;
  if (underlying && instrument.strike !== null) {
    const last = closingMark(market, underlying, endMs);
    if (last !== null) {
      const inTheMoney = instrument.putOrCall === "call" ? sub(last, instrument.strike) : sub(instrument.strike, last);
      const value = max(inTheMoney, ZERO);
      const against = `against ${underlying.fullSymbol} at ${formatDecimal(last)}`;
      return compare(value, ZERO) > 0
        ? { price: value, note: `Settled at expiry: in the money ${against}` }
        : { price: value, note: `Expired worthless: out of the money ${against}` };
    }
  }
  const own = closingMark(market, instrument, endMs);
  return own === null ? null : { price: own, note: "Settled at expiry at the contract's last price" };
}

/**
 * What an expired position of the model account settles at: as above, and
 * without any price its average price (no profit or loss, as equity marks a
 * position nothing quotes).
 */
export const modelSettlementOf = (instrument: Instrument, position: Position, market: MarketView): Settlement =>
  settlementOf(instrument, market) ?? {
    price: averagePrice(position) ?? ZERO,
    note: "Settled at expiry at the average price: no last price was known",
  };
