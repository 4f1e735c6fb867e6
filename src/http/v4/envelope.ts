import { ERRORS, type ErrorEntry } from "../../core/errors.js";

/** The v4 response envelope (WIRE.md "Envelope and errors"). */

const STATUS_MESSAGES: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  413: "PayloadTooLarge",
  429: "TooManyRequests",
  500: "InternalServerError",
  501: "NotImplemented",
};

export interface Pagination {
  readonly prev_cursor: string | null;
  readonly next_cursor: string | null;
}

export function successBody(results: readonly unknown[], pagination?: Pagination) {
  return {
    Results: results,
    ...(pagination ? { Pagination: pagination } : {}),
    ResponseStatus: { ErrorCode: "200", Message: "OK", Errors: [] },
  };
}

export function failureBody(status: number, entries: readonly ErrorEntry[], meta: Record<string, unknown> = {}) {
  return {
    Results: null,
    ResponseStatus: {
      ErrorCode: String(status),
      Message: STATUS_MESSAGES[status] ?? "Error",
      Errors: entries.map((entry) => ({
        ErrorCode: ERRORS[entry.name].code,
        FieldName: entry.field ?? "",
        Message: entry.message ?? ERRORS[entry.name].message,
        Meta: entry.meta ?? {},
      })),
      Meta: meta,
    },
  };
}
