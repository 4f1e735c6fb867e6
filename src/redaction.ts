/**
 * Secrets kept out of what the service logs: the values of fields and query
 * parameters named like a key, token or password, bearer credentials,
 * page tokens in paths (/Checkout/<token>, /Approvals/<token>,
 * /Confirmations/<token>) and JSON members of
 * those names inside text (an error quoting a request body). Names are compared without case, `-` or `_`, query parameter names
 * also URL-decoded. Values are replaced, never logged in part.
 */

export const REDACTED = "[redacted]";

const SECRET_NAME =
  /apikey|accesskey|adminkey|privatekey|secret|token|passw|passphrase|authorization|cookie|credential/;

/** Past this depth a logged object is cut off: no log line needs more, and walking has to end. */
const MAX_DEPTH = 8;

export const isSecretName = (name: string): boolean => SECRET_NAME.test(name.toLowerCase().replace(/[-_\s]/g, ""));

const QUERY_PARAMETER = /(^|[?&;])([^=&?#\s"';]+)=[^&#\s"';]*/g;
const JSON_MEMBER = /"([^"\\]{1,100})"(\s*:\s*)"(?:[^"\\]|\\.)*"?/g;
const BEARER = /\b(bearer)\s+[^\s"',;]+/gi;
/** A page's address is its credential (src/http/checkout/, approvals/, confirmations/). */
const PAGE_PATH = /(\/(?:checkout|approvals|confirmations)\/)[^/?#\s"']+/gi;

/** Text with the values of secret query parameters and JSON members, and bearer credentials, replaced. */
export function redactText(text: string): string {
  let out = text;
  if (out.includes("=")) {
    out = out.replace(QUERY_PARAMETER, (whole, lead: string, name: string) =>
      isSecretName(decodedName(name)) ? `${lead}${name}=${REDACTED}` : whole,
    );
  }
  if (out.includes('"')) {
    out = out.replace(JSON_MEMBER, (whole, name: string, colon: string) =>
      isSecretName(name) ? `"${name}"${colon}"${REDACTED}"` : whole,
    );
  }
  if (/bearer/i.test(out)) out = out.replace(BEARER, `$1 ${REDACTED}`);
  if (/\/(?:checkout|approvals|confirmations)\//i.test(out)) out = out.replace(PAGE_PATH, `$1${REDACTED}`);
  return out;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll("+", " "));
  } catch {
    return name;
  }
}

/**
 * A copy of a value to log with its secrets replaced: plain objects and
 * lists walked, errors written as records (type, message, stack and their
 * own fields, causes included), raw bytes by their size. Other objects are
 * left to their serializers.
 */
export function redacted(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => redacted(item, depth + 1));
  // Raw bytes (an unparsable request's packet, on a client error) may hold anything.
  if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  if (value instanceof Error) return redactedEntries(errorRecord(value), depth);
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  return redactedEntries(value as Record<string, unknown>, depth);
}

function redactedEntries(value: Readonly<Record<string, unknown>>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    out[name] = isSecretName(name) ? REDACTED : redacted(item, depth + 1);
  }
  return out;
}

function errorRecord(error: Error): Record<string, unknown> {
  return {
    ...error,
    type: error.constructor?.name ?? error.name,
    message: error.message,
    stack: error.stack,
    ...(error.cause === undefined ? {} : { cause: error.cause }),
    ...(error instanceof AggregateError ? { errors: error.errors } : {}),
  };
}
