import type { BillingInterval } from "./billing.js";

/**
 * The GEN subscription checkout's states, pure (docs/decisions.md has the
 * table). A checkout waits for its customer (PendingCustomer), is charged
 * once they consent (Processing), and ends Active, Declined, Canceled (the
 * customer declined), Expired or Superseded; a provider asking for a further
 * step puts it in RequiresAction until the customer confirms. Nothing is
 * charged outside Processing, and Processing is left only by the provider's
 * answer: money in flight is never abandoned.
 */
export const CHECKOUT_STATUSES = [
  "PendingCustomer",
  "RequiresAction",
  "Processing",
  "Active",
  "Declined",
  "Canceled",
  "Expired",
  "Superseded",
] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

export type CheckoutEvent =
  /** The customer consented and pays. */
  | "pay"
  /** The customer finished the further step the provider asked for. */
  | "confirm"
  /** The charge is asked again after an interruption (same reference: the provider answers once). */
  | "resume"
  /** What the provider answered. */
  | "settled"
  | "declined"
  | "action_required"
  /** The customer declined on the page. */
  | "cancel"
  /** The approval window closed. */
  | "expire"
  /** A newer checkout with other terms for the same customer and strategy. */
  | "supersede";

const TRANSITIONS: Readonly<Record<CheckoutStatus, Partial<Record<CheckoutEvent, CheckoutStatus>>>> = {
  PendingCustomer: { pay: "Processing", cancel: "Canceled", expire: "Expired", supersede: "Superseded" },
  RequiresAction: { confirm: "Processing", cancel: "Canceled", expire: "Expired", supersede: "Superseded" },
  Processing: { resume: "Processing", settled: "Active", declined: "Declined", action_required: "RequiresAction" },
  Active: {},
  Declined: {},
  Canceled: {},
  Expired: {},
  Superseded: {},
};

/** The status an event leads to, or null when the event is not allowed in `status`. */
export const nextStatus = (status: CheckoutStatus, event: CheckoutEvent): CheckoutStatus | null =>
  TRANSITIONS[status][event] ?? null;

/** Not yet finished: the checkout holds the customer's one pending place for the strategy. */
export const isPending = (status: CheckoutStatus): boolean =>
  status === "PendingCustomer" || status === "RequiresAction" || status === "Processing";

/** A human step is pending: the status carries ApprovalUrl. */
export const awaitsCustomer = (status: CheckoutStatus): boolean =>
  status === "PendingCustomer" || status === "RequiresAction";

/** How long a checkout waits for its customer's consent. */
export const CHECKOUT_LIFETIME_MS = 24 * 3_600_000;

/** Checkout terms: up to 12 months, or up to 3 years, per billing interval. */
export const MAX_INTERVAL_COUNT: Readonly<Record<BillingInterval, number>> = { month: 12, year: 3 };

/** The customer may poll a checkout's status once per this interval. */
export const POLL_INTERVAL_MS = 3_000;

export interface CheckoutPrices {
  /** The owner's monthly price in cents. */
  readonly monthlyCents: number;
  /** The yearly price in cents; null: the strategy offers no annual billing. */
  readonly annualCents: number | null;
}

export type CheckoutTerms =
  | { readonly ok: true; readonly priceCents: number }
  | { readonly ok: false; readonly field: "BillingInterval" | "BillingIntervalCount"; readonly message: string };

/** The price per interval of `count` months or years, or why those terms are not offered. */
export function checkoutTerms(prices: CheckoutPrices, interval: BillingInterval, count: number): CheckoutTerms {
  const max = MAX_INTERVAL_COUNT[interval];
  if (!Number.isInteger(count) || count < 1 || count > max) {
    return {
      ok: false,
      field: "BillingIntervalCount",
      message: `BillingIntervalCount must be 1 to ${max} for BillingInterval ${interval}`,
    };
  }
  if (interval === "year") {
    if (prices.annualCents === null) {
      return { ok: false, field: "BillingInterval", message: "The strategy offers no annual billing: use month" };
    }
    return { ok: true, priceCents: prices.annualCents * count };
  }
  return { ok: true, priceCents: prices.monthlyCents * count };
}

/** What a status means to the customer (StatusDetail), when nothing more specific is known. */
export const STATUS_DETAILS: Readonly<Record<CheckoutStatus, string>> = {
  PendingCustomer: "Waiting for the customer to review, consent and pay at ApprovalUrl",
  RequiresAction: "The payment provider asks the customer for a further step at ApprovalUrl",
  Processing: "The payment is being processed",
  Active: "The subscription is active",
  Declined: "The payment was declined; nothing was charged",
  Canceled: "The customer declined the subscription; nothing was charged",
  Expired: "The checkout expired before the customer approved it; nothing was charged",
  Superseded: "Replaced by a newer checkout for the same strategy; nothing was charged",
};
