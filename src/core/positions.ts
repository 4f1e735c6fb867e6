import { abs, add, compare, type Decimal, div, isZero, min, mul, neg, sign, sub, ZERO } from "./decimal.js";
import type { Side } from "./fills.js";

/**
 * A position in one instrument, kept at average cost: a signed quantity (short
 * below zero) and the signed cost of that quantity (the sum of quantity ×
 * price of what is open). Closing takes its share of the cost out, so cost
 * moves between open and realized without being lost to rounding.
 */
export interface Position {
  readonly quantity: Decimal;
  readonly cost: Decimal;
}

export const FLAT: Position = { quantity: ZERO, cost: ZERO };

export interface PositionChange {
  readonly position: Position;
  /** Quantity this fill closed (0 when it only opened or added). */
  readonly closedQuantity: Decimal;
  /** Money realized by the closing part, in the instrument's currency, before commissions. */
  readonly realized: Decimal;
}

/** A fill of `quantity` at `price` against the position; `multiplier` turns points into money. */
export function applyFill(
  position: Position,
  side: Side,
  quantity: Decimal,
  price: Decimal,
  multiplier: Decimal,
): PositionChange {
  if (compare(quantity, ZERO) <= 0) throw new RangeError("a fill's quantity is positive");
  const signed = side === "buy" ? quantity : neg(quantity);
  const held = sign(position.quantity);
  if (held === 0 || held === sign(signed)) {
    return {
      position: { quantity: add(position.quantity, signed), cost: add(position.cost, mul(signed, price)) },
      closedQuantity: ZERO,
      realized: ZERO,
    };
  }
  const size = abs(position.quantity);
  const closing = min(size, quantity);
  const closesAll = compare(closing, size) === 0;
  // The closed part's share of the cost: all of it when closing all, so nothing is left behind.
  const costShare = closesAll ? position.cost : div(mul(position.cost, closing), size);
  const closedSigned = held > 0 ? closing : neg(closing);
  const realized = mul(sub(mul(closedSigned, price), costShare), multiplier);
  const remaining: Position = { quantity: sub(position.quantity, closedSigned), cost: sub(position.cost, costShare) };
  const opening = sub(quantity, closing);
  if (isZero(opening)) return { position: remaining, closedQuantity: closing, realized };
  // The fill was larger than the position: the rest opens the other way.
  const reversed = side === "buy" ? opening : neg(opening);
  return { position: { quantity: reversed, cost: mul(reversed, price) }, closedQuantity: closing, realized };
}

/** The average price of the open quantity, or null when flat. */
export const averagePrice = (position: Position): Decimal | null =>
  isZero(position.quantity) ? null : div(position.cost, position.quantity);

/** Unrealized profit at a mark price, in money. */
export const openProfit = (position: Position, mark: Decimal, multiplier: Decimal): Decimal =>
  mul(sub(mul(position.quantity, mark), position.cost), multiplier);
