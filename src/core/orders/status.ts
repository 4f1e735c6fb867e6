/**
 * Order statuses and the one table of moves between them. Status codes are the
 * API's (API.md "Order status codes"). Anything not in the table is an illegal
 * move and is refused, never silently applied.
 */
export const ORDER_STATUS_CODES = {
  PendingNew: "A",
  Working: "0",
  PartiallyFilled: "1",
  Filled: "2",
  Canceled: "4",
  Replaced: "5",
  PendingCancel: "6",
  Rejected: "8",
  Expired: "C",
  PendingReplace: "E",
} as const;

export type OrderStatus = keyof typeof ORDER_STATUS_CODES;
export type OrderStatusCode = (typeof ORDER_STATUS_CODES)[OrderStatus];

/** What can happen to an order. Past tense: these are facts, applied in order. */
export type OrderEventKind =
  /** Accepted, but held: parked until a time, or waiting for its parent to fill. */
  | "held"
  /** Accepted and working: its fills may now happen. */
  | "accepted"
  | "partiallyFilled"
  | "filled"
  | "canceled"
  | "replaced"
  | "expired"
  | "rejected";

const MOVES: Readonly<Record<OrderStatus, Partial<Record<OrderEventKind, OrderStatus>>>> = {
  PendingNew: {
    held: "PendingNew",
    accepted: "Working",
    rejected: "Rejected",
    canceled: "Canceled",
    replaced: "Replaced",
    expired: "Expired",
  },
  Working: {
    partiallyFilled: "PartiallyFilled",
    filled: "Filled",
    canceled: "Canceled",
    replaced: "Replaced",
    expired: "Expired",
  },
  PartiallyFilled: {
    partiallyFilled: "PartiallyFilled",
    filled: "Filled",
    canceled: "Canceled",
    replaced: "Replaced",
    expired: "Expired",
  },
  // The simulator answers cancels and replaces at once; these pending states exist in the
  // code list for orders at a real broker (autotrade), where the answer comes later.
  PendingCancel: { canceled: "Canceled", partiallyFilled: "PendingCancel", filled: "Filled", expired: "Expired" },
  PendingReplace: { replaced: "Replaced", partiallyFilled: "PendingReplace", filled: "Filled", canceled: "Canceled" },
  Filled: {},
  Canceled: {},
  Replaced: {},
  Rejected: {},
  Expired: {},
};

export type Transition =
  | { readonly ok: true; readonly status: OrderStatus }
  | { readonly ok: false; readonly reason: string };

/** The status after an event, or why the event cannot happen to an order in this status. */
export function transition(status: OrderStatus, event: OrderEventKind): Transition {
  const next = MOVES[status][event];
  return next === undefined
    ? { ok: false, reason: `an order that is ${status} cannot be ${event}` }
    : { ok: true, status: next };
}

/** No event moves an order out of these. */
export const TERMINAL: ReadonlySet<OrderStatus> = new Set(["Filled", "Canceled", "Replaced", "Rejected", "Expired"]);
/** Orders that may fill now. */
export const WORKING: ReadonlySet<OrderStatus> = new Set(["Working", "PartiallyFilled"]);
/** Orders a client may cancel or replace. */
export const CANCELLABLE: ReadonlySet<OrderStatus> = new Set(["PendingNew", "Working", "PartiallyFilled"]);
/** Orders shown by GetStrategyActiveOrders. */
export const ACTIVE: ReadonlySet<OrderStatus> = new Set([
  "PendingNew",
  "Working",
  "PartiallyFilled",
  "PendingCancel",
  "PendingReplace",
]);

export function statusOfCode(code: string): OrderStatus | undefined {
  return (Object.keys(ORDER_STATUS_CODES) as OrderStatus[]).find((s) => ORDER_STATUS_CODES[s] === code);
}
