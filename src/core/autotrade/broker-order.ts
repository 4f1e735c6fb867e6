import type { OrderStatus } from "../orders/status.js";

/**
 * The broker-order state machine: the life of an account order at the
 * broker, apart from the strategy's signal state machine
 * (src/core/orders/status.ts), whose simulator answers at once. A broker
 * answers later, so a cancel or a replace is first a request (PendingCancel,
 * PendingReplace) the broker may refuse: the order then goes back to where it
 * was (the prior status, kept beside the status). A replace the broker makes
 * amends the order in place (its key stays; the broker may give it a new
 * id), so the order works on at its new price. Fills may arrive while a
 * cancel or replace is pending. Statuses are the API's OrderStatus names, so
 * account orders read as orders (GetAutotradeActiveOrders).
 */
export type BrokerOrderEvent =
  /** The broker took the order: it works. */
  | "acknowledged"
  /** The broker refused the order (it never worked). */
  | "rejected"
  | "partiallyFilled"
  | "filled"
  /** The service asked the broker to cancel. */
  | "cancelRequested"
  /** The broker refused the cancel: the order works as before. */
  | "cancelRejected"
  /** The broker canceled the order (asked, or of its own accord: a delink, the end of the day). */
  | "canceled"
  /** The service asked the broker to replace the order's price. */
  | "replaceRequested"
  /** The broker refused the replace: the order works as before, at its old price. */
  | "replaceRejected"
  /** The broker amended the order's price: it works on, under the same key, at the new price. */
  | "replaced"
  | "expired";

export interface BrokerOrderState {
  readonly status: OrderStatus;
  /** Where a pending cancel or replace returns to when refused. */
  readonly prior: OrderStatus | null;
}

export type BrokerTransition =
  | { readonly ok: true; readonly state: BrokerOrderState }
  | { readonly ok: false; readonly reason: string };

type Live = "PendingNew" | "Working" | "PartiallyFilled";

/** Moves of an order that is not waiting on a request (the prior status stays null). */
const PLAIN: Readonly<Partial<Record<OrderStatus, Partial<Record<BrokerOrderEvent, OrderStatus>>>>> = {
  PendingNew: {
    acknowledged: "Working",
    rejected: "Rejected",
    partiallyFilled: "PartiallyFilled",
    filled: "Filled",
    canceled: "Canceled",
    expired: "Expired",
  },
  Working: { partiallyFilled: "PartiallyFilled", filled: "Filled", canceled: "Canceled", expired: "Expired" },
  PartiallyFilled: { partiallyFilled: "PartiallyFilled", filled: "Filled", canceled: "Canceled", expired: "Expired" },
};

const isLive = (status: OrderStatus): status is Live =>
  status === "PendingNew" || status === "Working" || status === "PartiallyFilled";

/** The state after an event, or why the event cannot happen to an order in this state. */
export function brokerTransition(state: BrokerOrderState, event: BrokerOrderEvent): BrokerTransition {
  const { status, prior } = state;
  const refused = (): BrokerTransition => ({
    ok: false,
    reason: `an account order that is ${status} cannot be ${event}`,
  });
  const to = (next: OrderStatus, nextPrior: OrderStatus | null = null): BrokerTransition => ({
    ok: true,
    state: { status: next, prior: nextPrior },
  });
  if (status === "PendingCancel" || status === "PendingReplace") {
    const back = prior ?? "Working";
    // A fill while a request is pending: the request stays pending, over a partly filled order.
    if (event === "partiallyFilled") return to(status, "PartiallyFilled");
    if (event === "filled") return to("Filled");
    if (event === "canceled") return to("Canceled");
    if (event === "expired") return to("Expired");
    if (status === "PendingCancel" && event === "cancelRejected") return to(back);
    if (status === "PendingReplace" && event === "replaceRejected") return to(back);
    if (status === "PendingReplace" && event === "replaced") return to(back);
    // The broker took an order the service had already asked to cancel: the cancel still stands.
    if (event === "acknowledged" && prior === "PendingNew") return to(status, "Working");
    // Or refused it: it never worked, and the cancel has nothing left to cancel.
    if (event === "rejected" && prior === "PendingNew") return to("Rejected");
    return refused();
  }
  if (!isLive(status)) return refused();
  if (event === "cancelRequested") return to("PendingCancel", status);
  // A price is replaced only on an order the broker holds.
  if (event === "replaceRequested") return status === "PendingNew" ? refused() : to("PendingReplace", status);
  const next = PLAIN[status]?.[event];
  return next === undefined ? refused() : to(next);
}

/** Orders no event moves any more. */
export const BROKER_TERMINAL: ReadonlySet<OrderStatus> = new Set(["Filled", "Canceled", "Rejected", "Expired"]);

/** Whether the order still holds (or may still hold) quantity at the broker. */
export const isOpenAtBroker = (status: OrderStatus): boolean => !BROKER_TERMINAL.has(status);
