import type { ErrorName } from "../../core/errors.js";

/**
 * Every title a legacy v3 failure answers with, in one table: each refusal of
 * the error catalogue (src/core/errors.ts) by its name, and each failure of
 * the legacy layer itself (the address, the key, reading the request).
 * docs/errors.md documents each title with when it is used; a test keeps the
 * two in step.
 */
export const LEGACY_TITLES = {
  // Refusals of the services, and of the key as v4 names them.
  KeyRequired: "Missing apikey",
  MalformedKey: "Invalid apikey",
  UnknownKey: "Invalid apikey",
  ExpiredKey: "Expired apikey",
  RevokedKey: "Revoked apikey",
  Forbidden: "Unable to access this systemid",
  RateLimited: "Too many requests",
  UnknownOperation: "Unknown command",
  NotAvailable: "Wrong context",
  InvalidValue: "Invalid value",
  MissingValue: "Invalid value",
  MalformedBody: "Malformed request",
  InvalidCursor: "Invalid request",
  RequestTimeout: "Request timeout",
  InvalidSymbol: "Invalid symbol",
  AlreadyExists: "Id already used",
  WrongState: "Refused",
  // Only v4 reads an Idempotency-Key; the table names every refusal all the same.
  IdempotencyKeyReused: "Refused",
  IdempotencyKeyBusy: "Refused",
  // No legacy command keeps a watchlist: the table names every refusal all the same.
  LimitReached: "Refused",
  Internal: "Internal error",
  Unavailable: "Service unavailable",
  NewOrderRejected: "Signal rejected",
  CancelRejected: "Signal could not be canceled",
  NotFound: "Not found",
  InsufficientFunds: "Insufficient funds",
  // Failures only the legacy layer answers.
  UnknownAddress: "Unknown address",
  UnreadableRequest: "Bad request",
  BodyTooLarge: "Request too large",
  WrongPlatform: "Unable to access this platform",
  InvalidRequest: "Invalid request",
  InvalidSignal: "Invalid signal",
  UnknownSignal: "Unknown signal",
  SignalTraded: "Signal was traded",
  UnreachablePerson: "Unable to access this person",
  UnknownCommissionPlan: "Unknown commission plan",
} as const satisfies Readonly<Record<ErrorName, string>> & Readonly<Record<string, string>>;

export type LegacyFailureName = keyof typeof LEGACY_TITLES;
