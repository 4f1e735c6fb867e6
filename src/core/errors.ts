/**
 * The error catalogue: every service error code, defined once with its HTTP
 * status and default message. docs/errors.md documents each one (a test keeps
 * the two in step).
 */
export const ERRORS = {
  KeyRequired: { code: "1001", status: 401, message: "An API key is required: send Authorization: Bearer <key>" },
  Forbidden: { code: "1002", status: 403, message: "Not allowed" },
  RateLimited: { code: "1003", status: 429, message: "Rate limit exceeded" },
  UnknownOperation: { code: "1004", status: 404, message: "Unknown operation" },
  NotAvailable: { code: "1005", status: 501, message: "This operation is not available on this server" },
  InvalidValue: { code: "1101", status: 400, message: "Invalid value" },
  MissingValue: { code: "1102", status: 400, message: "Missing value" },
  MalformedBody: { code: "1103", status: 400, message: "The request body is not valid JSON" },
  InvalidCursor: { code: "1104", status: 400, message: "The cursor is not valid for this query" },
  RequestTimeout: { code: "1105", status: 408, message: "The request did not arrive in time" },
  InvalidSymbol: { code: "1121", status: 400, message: "Invalid symbol" },
  AlreadyExists: { code: "1201", status: 409, message: "Already exists" },
  WrongState: { code: "1202", status: 409, message: "The object is not in a state that allows this" },
  IdempotencyKeyReused: {
    code: "1203",
    status: 409,
    message: "This Idempotency-Key was sent with another request",
  },
  IdempotencyKeyBusy: {
    code: "1204",
    status: 409,
    message: "The request with this Idempotency-Key has not answered yet",
  },
  LimitReached: { code: "1210", status: 409, message: "A limit is reached" },
  Internal: { code: "1500", status: 500, message: "Internal error" },
  Unavailable: {
    code: "1503",
    status: 503,
    message:
      "Storage cannot take the request now (full, locked or unreachable): send it again after Retry-After seconds",
  },
  NewOrderRejected: { code: "2010", status: 409, message: "New order rejected" },
  CancelRejected: { code: "2011", status: 409, message: "Cancel rejected" },
  NotFound: { code: "2013", status: 404, message: "Not found" },
  InsufficientFunds: { code: "2020", status: 402, message: "Insufficient house account funds" },
  MalformedKey: { code: "2014", status: 401, message: "Malformed API key" },
  UnknownKey: { code: "2015", status: 401, message: "Unknown API key" },
  ExpiredKey: { code: "2016", status: 401, message: "The API key has expired" },
  RevokedKey: { code: "2017", status: 401, message: "The API key has been revoked" },
} as const;

export type ErrorName = keyof typeof ERRORS;

export interface ErrorEntry {
  readonly name: ErrorName;
  /** The request field at fault, in the API's PascalCase; empty when none. */
  readonly field?: string;
  /** Overrides the catalogue message with a more specific one. */
  readonly message?: string;
  /** Machine-readable detail, e.g. { SubscriptionId: 12 }. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/**
 * An expected refusal. Thrown from services so that the surrounding
 * transaction rolls back; the transport maps it to its own error shape.
 */
export class Refusal extends Error {
  readonly entries: readonly ErrorEntry[];

  constructor(entries: readonly ErrorEntry[]) {
    const first = entries[0];
    super(first ? (first.message ?? ERRORS[first.name].message) : "Refused");
    this.name = "Refusal";
    this.entries = entries;
  }

  /** The HTTP status of the first entry. */
  get status(): number {
    const first = this.entries[0];
    return first ? ERRORS[first.name].status : 400;
  }
}

export function refuse(name: ErrorName, detail: Omit<ErrorEntry, "name"> = {}): Refusal {
  return new Refusal([{ name, ...detail }]);
}
