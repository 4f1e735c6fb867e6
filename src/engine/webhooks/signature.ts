import { createHmac } from "node:crypto";

/**
 * How a delivery proves where it comes from (docs/webhooks.md): an
 * HMAC-SHA256, keyed with the endpoint's secret, over "<t>.<body>", where t
 * is the time of sending in unix seconds; the receiver recomputes it and
 * refuses a t too far from its own clock, so a captured request cannot be
 * replayed later.
 */
export const SIGNATURE_HEADER = "Webhook-Signature";

/** The event's id, the same on every attempt: receivers dedupe by it. */
export const EVENT_ID_HEADER = "Webhook-Id";

/** The value of the Webhook-Signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const digest = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${digest}`;
}
