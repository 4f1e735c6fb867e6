import { MAX_SCALING_PERCENTAGE } from "./autotrade/settings.js";
import {
  abs,
  compare,
  type Decimal,
  div,
  fromInteger,
  isZero,
  mul,
  ONE,
  parseDecimal,
  sign,
  sub,
  ZERO,
} from "./decimal.js";

/**
 * StrategyMux's rules (docs/decisions.md "StrategyMux (issue 14)"): a
 * variant (child strategy) mirrors each order of its parent, scaled by its
 * percentage. An opening order (or one waiting on a parent order, whose
 * position does not exist yet) is the parent's quantity × the percentage;
 * a closing one closes the child's holding in the share the parent's order
 * closes of the parent's, all of it when the parent closes all of its own,
 * as the autotrade copier closes followers'. Quantities are whole units,
 * rounded toward zero.
 */

/** The prefix of the caller-chosen signal id a mirrored order carries (`mux:<parent order id>`). */
export const MUX_LOCAL_ID_PREFIX = "mux:";

export const muxLocalId = (parentOrderId: number): string => `${MUX_LOCAL_ID_PREFIX}${parentOrderId}`;

const HUNDRED = fromInteger(100);

/** Toward zero, to whole units. */
const whole = (quantity: Decimal): Decimal => sub(quantity, (quantity % ONE) as Decimal);

/** The parent's quantity scaled to the child, whole units toward zero (signed: a short stays short). */
export const scaled = (quantity: Decimal, scalingPercentage: Decimal): Decimal =>
  whole(mul(quantity, div(scalingPercentage, HUNDRED)));

export interface MuxOrder {
  readonly side: "buy" | "sell";
  readonly openClose: "open" | "close";
  readonly quantity: Decimal;
  /** The parent's position in the symbol when the order was accepted (signed). */
  readonly parentHeld: Decimal;
  /** It waits on another order of the parent: the position it acts on does not exist yet. */
  readonly conditional: boolean;
}

export type MuxDecision =
  | { readonly mirror: true; readonly quantity: Decimal }
  | { readonly mirror: false; readonly reason: "rounds_to_zero" | "nothing_to_close"; readonly message: string };

/** How much of the parent's order the child places, given what the child holds in the symbol now. */
export function muxQuantity(order: MuxOrder, childHeld: Decimal, scalingPercentage: Decimal): MuxDecision {
  if (order.openClose === "open" || order.conditional) {
    const quantity = scaled(order.quantity, scalingPercentage);
    return isZero(quantity)
      ? { mirror: false, reason: "rounds_to_zero", message: "The scaled quantity rounds to nothing" }
      : { mirror: true, quantity };
  }
  const holds = order.side === "sell" ? sign(childHeld) > 0 : sign(childHeld) < 0;
  if (!holds)
    return { mirror: false, reason: "nothing_to_close", message: "The variant holds nothing this order closes" };
  const held = abs(childHeld);
  const parentHeld = abs(order.parentHeld);
  if (isZero(parentHeld) || compare(order.quantity, parentHeld) >= 0) return { mirror: true, quantity: held };
  const share = whole(div(mul(held, order.quantity), parentHeld));
  if (isZero(share)) {
    return { mirror: false, reason: "rounds_to_zero", message: "The variant's share of the close rounds to nothing" };
  }
  return { mirror: true, quantity: compare(share, held) < 0 ? share : held };
}

/** A replacement's quantity: the child's order changed in the proportion the parent's was. */
export function replacementQuantity(childOld: Decimal, parentOld: Decimal, parentNew: Decimal): Decimal {
  if (isZero(parentOld)) return ZERO;
  return whole(div(mul(childOld, parentNew), parentOld));
}

/** A scaling percentage as an operator writes it: above 0, at most 1000, at most eight places; else null. */
export function readScaling(text: string): Decimal | null {
  const value = parseDecimal(text);
  if (value === null || value <= ZERO || value > fromInteger(MAX_SCALING_PERCENTAGE)) return null;
  return value;
}

/**
 * Whether making `child` a variant of `parent` closes a loop: walking up
 * from the parent through each strategy's parent reaches the child.
 */
export function wouldCycle(parentOf: ReadonlyMap<number, number>, parent: number, child: number): boolean {
  const seen = new Set<number>();
  for (let at: number | undefined = parent; at !== undefined; at = parentOf.get(at)) {
    if (at === child) return true;
    if (seen.has(at)) return true;
    seen.add(at);
  }
  return false;
}
