import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from "./signature.js";

/** One delivery attempt: what is sent where, and how it is signed. */
export interface Attempt {
  readonly url: string;
  readonly secret: string;
  readonly eventId: string;
  /** The body, exactly as stored: the signature covers these bytes. */
  readonly payload: string;
  /** The service clock at sending, unix seconds (the signature's t). */
  readonly unixSeconds: number;
}

export type AttemptOutcome =
  | { readonly delivered: true; readonly status: number }
  /** Not delivered: why, in words that name neither the URL nor the secret (they are logged and stored). */
  | { readonly delivered: false; readonly reason: string; readonly stopped: boolean };

/**
 * POSTs the event to the endpoint. Only a 2xx answer delivers it; redirects
 * are not followed (a moved endpoint is registered again), and the answer's
 * body is not read. Gives up after `timeoutMs`, or at once when `stop` fires.
 */
export async function sendAttempt(attempt: Attempt, timeoutMs: number, stop: AbortSignal): Promise<AttemptOutcome> {
  // A controller of its own, held here with its timer until the attempt ends: signals composed with
  // AbortSignal.any and AbortSignal.timeout can be collected mid-request in Node 20, and never fire.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const stopped = () => abort.abort();
  stop.addEventListener("abort", stopped);
  try {
    const response = await fetch(attempt.url, {
      method: "POST",
      redirect: "manual",
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "strategy-hub-webhooks/1",
        [SIGNATURE_HEADER]: signatureHeader(attempt.secret, attempt.payload, attempt.unixSeconds),
        [EVENT_ID_HEADER]: attempt.eventId,
      },
      body: attempt.payload,
      signal: abort.signal,
    });
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { delivered: true, status: response.status };
    return { delivered: false, reason: `HTTP ${response.status}`, stopped: false };
  } catch (error) {
    if (stop.aborted) return { delivered: false, reason: "stopped", stopped: true };
    if (abort.signal.aborted) return { delivered: false, reason: `no answer within ${timeoutMs} ms`, stopped: false };
    return { delivered: false, reason: failureReason(error), stopped: false };
  } finally {
    clearTimeout(timer);
    stop.removeEventListener("abort", stopped);
  }
}

/** A network failure in a few words: the error's code (ECONNREFUSED...) or name, never its message (it may quote the URL). */
function failureReason(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (typeof cause?.code === "string") return cause.code;
  return error instanceof Error ? error.name : "failed";
}
