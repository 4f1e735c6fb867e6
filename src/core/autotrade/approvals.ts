/**
 * The white-label autotrade approval request's states, pure (API.md States;
 * docs/decisions.md has the table). A request waits for its customer
 * (PendingCustomer), is switched on once approved (Processing), waits for the
 * account to reach the service if it has not yet (PendingBroker), and ends
 * Completed, Failed, Expired or Superseded.
 */
export const APPROVAL_STATUSES = [
  "PendingCustomer",
  "Processing",
  "PendingBroker",
  "Completed",
  "Failed",
  "Expired",
  "Superseded",
] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export type ApprovalEvent =
  /** The customer approved on the page. */
  | "approve"
  /** The customer declined on the page. */
  | "decline"
  /** The approval window closed. */
  | "expire"
  /** The setup started or was modified. */
  | "started"
  /** The customer's account is not at the service yet. */
  | "awaitBroker"
  /** The setup could not be started (a refusal), or the account did not arrive in time. */
  | "fail";

const TRANSITIONS: Readonly<Record<ApprovalStatus, Partial<Record<ApprovalEvent, ApprovalStatus>>>> = {
  PendingCustomer: { approve: "Processing", decline: "Failed", expire: "Expired" },
  Processing: { started: "Completed", awaitBroker: "PendingBroker", fail: "Failed" },
  PendingBroker: { started: "Completed", fail: "Failed" },
  Completed: {},
  Failed: {},
  Expired: {},
  Superseded: {},
};

/** The status an event leads to, or null when the event is not allowed in `status`. */
export const nextApprovalStatus = (status: ApprovalStatus, event: ApprovalEvent): ApprovalStatus | null =>
  TRANSITIONS[status][event] ?? null;

/** Not yet finished: a newer start or a stop supersedes it. */
export const PENDING_APPROVAL_STATUSES: readonly ApprovalStatus[] = ["PendingCustomer", "Processing", "PendingBroker"];

export const isFinal = (status: ApprovalStatus): boolean => !PENDING_APPROVAL_STATUSES.includes(status);

/** How long a request waits for its customer: 7 days on the service clock. */
export const APPROVAL_LIFETIME_MS = 7 * 86_400_000;

/** How many business days (Monday to Friday, UTC) an approved request waits for the account to reach the service. */
export const PENDING_BROKER_BUSINESS_DAYS = 10;

/** The instant `businessDays` weekdays after `fromMs` (UTC), at the same time of day. */
export function afterBusinessDays(fromMs: number, businessDays: number): number {
  const day = 86_400_000;
  let at = fromMs;
  let left = businessDays;
  while (left > 0) {
    at += day;
    const weekday = new Date(at).getUTCDay();
    if (weekday !== 0 && weekday !== 6) left -= 1;
  }
  return at;
}

/** StatusDetail of each status unless a more specific one is given. */
export const APPROVAL_DETAILS: Readonly<Record<ApprovalStatus, string>> = {
  PendingCustomer: "Waiting for the customer to review and approve the setup at ApprovalUrl",
  Processing: "Approved by the customer; trading is being switched on",
  PendingBroker: "Approved by the customer; waiting for the broker to enable the account at the service",
  Completed: "Trading is on",
  Failed: "The request failed",
  Expired: "The customer did not approve in time",
  Superseded: "Replaced by a newer StartAutotrade or by StopAutotrade",
};

/** The type of the completion webhook's event for a request that ended in `status`. */
export const approvalEventType = (status: ApprovalStatus): string => `autotrade.approval.${status.toLowerCase()}`;

/** The completion webhook's event id: one per request and final status, stable across retries and processes. */
export const approvalEventId = (approvalId: number, status: ApprovalStatus): string =>
  `autotrade_approval.${approvalId}.${status}`;
