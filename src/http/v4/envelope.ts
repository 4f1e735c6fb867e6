import { ERRORS, type ErrorEntry } from "../../core/errors.js";
import { jsonChunks } from "./raw-json.js";

/** The v4 response envelope (WIRE.md "Envelope and errors"). */

export const STATUS_MESSAGES: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  402: "PaymentRequired",
  403: "Forbidden",
  404: "NotFound",
  408: "RequestTimeout",
  409: "Conflict",
  413: "PayloadTooLarge",
  431: "RequestHeaderFieldsTooLarge",
  429: "TooManyRequests",
  500: "InternalServerError",
  501: "NotImplemented",
  503: "ServiceUnavailable",
};

export interface Pagination {
  readonly prev_cursor: string | null;
  readonly next_cursor: string | null;
}

/** `message`: a detail the success carries instead of OK (a first charge that did not settle). */
export function successBody(results: readonly unknown[], pagination?: Pagination, message = "OK") {
  return {
    Results: results,
    ...(pagination ? { Pagination: pagination } : {}),
    ResponseStatus: { ErrorCode: "200", Message: message, Errors: [] },
  };
}

/** The success envelope around its Results, as text: what comes before the entries' `[` and after their `]`. */
const SUCCESS_TEXT = JSON.stringify(successBody([]));
const SUCCESS_HEAD = SUCCESS_TEXT.slice(0, SUCCESS_TEXT.indexOf("[]"));
const SUCCESS_TAIL = SUCCESS_TEXT.slice(SUCCESS_TEXT.indexOf("[]") + 2);

/** The last answer sent around each RawJson of bytes, sent again while the text around it is the same. */
const answersAround = new WeakMap<
  Buffer,
  { readonly before: string; readonly after: string; readonly bytes: Buffer }
>();

/**
 * successBody's JSON, with the entries' RawJson fields (raw-json.ts) spliced
 * in as they are: text when there are no bytes among them; else the bytes of
 * the whole answer, reused while a single RawJson of bytes has the same text
 * around it (the long part of a record kept at its version).
 */
export function successPayload(results: readonly unknown[]): string | Buffer {
  const chunks = jsonChunks(SUCCESS_HEAD, results, SUCCESS_TAIL);
  const [before, raw, after] = chunks;
  if (chunks.length === 1) return before as string;
  if (chunks.length === 3 && raw instanceof Buffer) {
    const kept = answersAround.get(raw);
    if (kept !== undefined && kept.before === before && kept.after === after) return kept.bytes;
    const bytes = joined(chunks);
    answersAround.set(raw, { before: before as string, after: after as string, bytes });
    return bytes;
  }
  return joined(chunks);
}

function joined(chunks: readonly (string | Buffer)[]): Buffer {
  let length = 0;
  for (const chunk of chunks) length += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  for (const chunk of chunks) at += typeof chunk === "string" ? bytes.write(chunk, at) : chunk.copy(bytes, at);
  return bytes;
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
