import { add, compare, type Decimal, div, isZero, mul, sub, ZERO } from "../decimal.js";
import { type OrderEventKind, type OrderStatus, TERMINAL, transition } from "./status.js";

/** The quantities and status of one order, as a fold over its events. */
export interface OrderState {
  readonly status: OrderStatus;
  readonly quantity: Decimal;
  readonly filledQuantity: Decimal;
  /** Sum of fill quantity × fill price: the average fill price is this over the filled quantity. */
  readonly filledNotional: Decimal;
  /** Ids of the events applied, so a repeated event is recognised and ignored. */
  readonly appliedEvents: readonly string[];
}

export type OrderEvent =
  | { readonly id: string; readonly kind: "fill"; readonly quantity: Decimal; readonly price: Decimal }
  | { readonly id: string; readonly kind: Exclude<OrderEventKind, "partiallyFilled" | "filled"> };

export type Applied =
  | { readonly ok: true; readonly state: OrderState; readonly duplicate: boolean }
  | { readonly ok: false; readonly reason: string };

export function newOrder(quantity: Decimal): OrderState {
  if (compare(quantity, ZERO) <= 0) throw new RangeError("an order's quantity is positive");
  return { status: "PendingNew", quantity, filledQuantity: ZERO, filledNotional: ZERO, appliedEvents: [] };
}

export const leavesQuantity = (order: OrderState): Decimal =>
  TERMINAL.has(order.status) ? ZERO : sub(order.quantity, order.filledQuantity);

export const averageFillPrice = (order: OrderState): Decimal | null =>
  isZero(order.filledQuantity) ? null : div(order.filledNotional, order.filledQuantity);

/**
 * Applies one event: a repeated event is a no-op; an illegal move or a fill
 * larger than what is left is refused and leaves the order as it was.
 */
export function applyEvent(order: OrderState, event: OrderEvent): Applied {
  if (order.appliedEvents.includes(event.id)) return { ok: true, state: order, duplicate: true };
  if (event.kind !== "fill") {
    const moved = transition(order.status, event.kind);
    if (!moved.ok) return moved;
    return {
      ok: true,
      duplicate: false,
      state: { ...order, status: moved.status, appliedEvents: [...order.appliedEvents, event.id] },
    };
  }
  if (compare(event.quantity, ZERO) <= 0) return { ok: false, reason: "a fill's quantity is positive" };
  const leaves = leavesQuantity(order);
  if (compare(event.quantity, leaves) > 0) {
    return { ok: false, reason: "a fill cannot be larger than the quantity left" };
  }
  const complete = compare(event.quantity, leaves) === 0;
  const moved = transition(order.status, complete ? "filled" : "partiallyFilled");
  if (!moved.ok) return moved;
  return {
    ok: true,
    duplicate: false,
    state: {
      ...order,
      status: moved.status,
      filledQuantity: add(order.filledQuantity, event.quantity),
      filledNotional: add(order.filledNotional, mul(event.quantity, event.price)),
      appliedEvents: [...order.appliedEvents, event.id],
    },
  };
}
