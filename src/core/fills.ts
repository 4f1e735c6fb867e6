import { compare, type Decimal, max, min, ZERO } from "./decimal.js";

/**
 * Fill rules of the simulated broker: whether a working order fills against a
 * quote, at what price and for how much.
 *
 * - Market: buys at the ask, sells at the bid.
 * - Limit: a buy fills once the ask is at or below the limit, at the ask (so
 *   at the better price when the market gaps through the limit); a sell once
 *   the bid is at or above the limit, at the bid.
 * - Stop: a buy stop triggers once the ask reaches the stop and fills at the
 *   worse of stop and ask (a gap above the stop fills at the ask); a sell stop
 *   once the bid reaches the stop, at the worse of stop and bid.
 * - Size: at most the size shown on the side it takes; without a size the
 *   whole order fills. The rest keeps working (a partial fill).
 */
export type OrderType = "market" | "limit" | "stop";
export type Side = "buy" | "sell";

export interface WorkingOrder {
  readonly type: OrderType;
  readonly side: Side;
  readonly limit: Decimal | null;
  readonly stop: Decimal | null;
  readonly leaves: Decimal;
}

export interface Quote {
  readonly bid: Decimal;
  readonly ask: Decimal;
  /** Shares/contracts/units offered at the bid and ask; null when the feed gives none. */
  readonly bidSize: Decimal | null;
  readonly askSize: Decimal | null;
}

export interface Fill {
  readonly quantity: Decimal;
  readonly price: Decimal;
}

export function fillAgainst(order: WorkingOrder, quote: Quote): Fill | null {
  if (compare(order.leaves, ZERO) <= 0) return null;
  const buying = order.side === "buy";
  const touched = buying ? quote.ask : quote.bid;
  if (compare(touched, ZERO) <= 0) return null;
  let price: Decimal | null = null;
  switch (order.type) {
    case "market":
      price = touched;
      break;
    case "limit":
      if (order.limit === null) return null;
      if (buying ? compare(touched, order.limit) <= 0 : compare(touched, order.limit) >= 0) price = touched;
      break;
    case "stop":
      if (order.stop === null) return null;
      if (buying ? compare(touched, order.stop) >= 0 : compare(touched, order.stop) <= 0) {
        price = buying ? max(order.stop, touched) : min(order.stop, touched);
      }
      break;
  }
  if (price === null) return null;
  const size = buying ? quote.askSize : quote.bidSize;
  if (size !== null && compare(size, ZERO) <= 0) return null;
  return { price, quantity: size === null ? order.leaves : min(order.leaves, size) };
}
