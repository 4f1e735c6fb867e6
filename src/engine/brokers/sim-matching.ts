import { type Decimal, fromInteger, isZero, mul, ONE, sub } from "../../core/decimal.js";
import type { MarketQuote } from "../../core/market/quote.js";

/** What the simulated broker's matching needs of an order. */
export interface MatchedOrder {
  readonly side: "buy" | "sell";
  readonly orderType: "market" | "limit" | "stop";
  readonly limit: Decimal | null;
  readonly stop: Decimal | null;
}

/**
 * The price an order executes at against a quote, or null when the quote does
 * not cross it: a buy takes the ask, a sell the bid. A limit executes when the
 * touch is at or better than its price (at the touch, which may improve on
 * it); a stop becomes a market order once the touch reaches its price.
 */
export function executionPrice(order: MatchedOrder, quote: MarketQuote): Decimal | null {
  const touch = order.side === "buy" ? quote.ask : quote.bid;
  switch (order.orderType) {
    case "market":
      return touch;
    case "limit":
      if (order.limit === null) return null;
      return (order.side === "buy" ? touch <= order.limit : touch >= order.limit) ? touch : null;
    case "stop":
      if (order.stop === null) return null;
      return (order.side === "buy" ? touch >= order.stop : touch <= order.stop) ? touch : null;
  }
}

/**
 * How much of the remaining quantity one execution takes. Under a partialFill
 * fault the order's first execution takes the fraction of its quantity, in
 * whole units and at least one, and leaves the rest resting; an order of one
 * unit fills whole.
 */
export function executionQuantity(quantity: Decimal, filled: Decimal, partialFraction: Decimal | null): Decimal {
  const remaining = sub(quantity, filled);
  if (partialFraction === null || !isZero(filled)) return remaining;
  const wholeUnits = mul(quantity, partialFraction) / ONE;
  const part = wholeUnits < 1n ? ONE : fromInteger(wholeUnits);
  return part < remaining ? part : remaining;
}
