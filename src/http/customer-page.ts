import type { FastifyBaseLogger, FastifyReply } from "fastify";

/**
 * What the customer's pages (checkout, autotrade approval, held-copy
 * confirmation) share: they are reached by a token in their address alone
 * (the customer's browser holds no API key) and answered as HTML, also when
 * the service fails a form.
 */

/** Page tokens are 43 base64url characters (an HMAC-SHA256). */
export const PAGE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

const HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  // The token is in the address: no page the customer goes on to may learn it.
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

export const html = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).headers(HEADERS).send(body);

/** What a page says when the service failed its form. */
export const UNFINISHED = "This could not be finished just now: try again in a few seconds.";

/**
 * The service failed a form (storage, or the payment provider, did not
 * answer): the browser gets the page as it stands with `message` (503), or
 * `fallback` when the page cannot be read either; the details go to the log,
 * never to the page.
 */
export async function failedForm(
  log: FastifyBaseLogger,
  reply: FastifyReply,
  error: unknown,
  page: () => Promise<string | undefined>,
  fallback: string,
): Promise<FastifyReply> {
  log.error({ err: error }, "a customer page's form failed");
  const shown = await page().catch(() => undefined);
  return html(reply, 503, shown ?? fallback);
}
