import { abs, add, type Decimal, div, fromInteger, isZero, mul, ONE, sign, sub } from "../decimal.js";
import { tickAt } from "../orders/terms.js";
import type { Position } from "../positions.js";
import type { Instrument } from "../symbols/instrument.js";

/**
 * The automatic stop loss of a copied position (AutoStopLossDollars, 4.3): a
 * stop order for the whole holding, resting beside the strategy's own exits,
 * at the price where the holding has lost that many dollars from its average
 * cost, on the instrument's price grid (rounded toward the average cost, so
 * the loss at the stop is never more than asked). Null when flat, or when the loss could
 * only be reached at a price of zero or below.
 */
export function autoStopPrice(position: Position, dollars: number, instrument: Instrument): Decimal | null {
  if (isZero(position.quantity) || dollars <= 0) return null;
  const average = div(position.cost, position.quantity);
  const perUnit = div(fromInteger(dollars), mul(abs(position.quantity), instrument.multiplier));
  const long = sign(position.quantity) > 0;
  const raw = long ? sub(average, perUnit) : add(average, perUnit);
  if (sign(raw) <= 0) return null;
  const tick = tickAt(instrument, raw);
  const steps = div(raw, tick);
  const whole = sub(steps, (steps % ONE) as Decimal);
  // A long's stop rounds up, a short's down: toward the average cost.
  const onGrid = mul(!long || whole === steps ? whole : add(whole, ONE), tick);
  return sign(onGrid) > 0 ? onGrid : null;
}
