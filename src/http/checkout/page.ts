import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from "fastify";
import { Refusal } from "../../core/errors.js";
import { checkoutPage, declineCheckout, payCheckout } from "../../services/checkout.js";
import type { PaymentProvider } from "../../services/payments.js";
import type { Runtime } from "../../services/runtime.js";
import { SANDBOX_PAYMENT_REF } from "../../services/sandbox-payments.js";
import { checkoutHtml, notFoundHtml, refusedHtml } from "./html.js";

/**
 * The page at a checkout's ApprovalUrl, on the general server: GET shows the
 * strategy, price and terms; the forms consent and pay, confirm a further
 * step, or decline. Each POST answers 303 back to the page (so a reload does
 * not post again). The page is reached by its token alone (no API key: the
 * customer's browser holds none); forms carry the checkout's form token,
 * which a page elsewhere cannot read.
 */

export interface CheckoutPageDependencies {
  readonly runtime: Runtime;
  readonly payments: PaymentProvider;
}

/** Page tokens are 43 base64url characters (an HMAC-SHA256). */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

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

const UNFINISHED =
  "This could not be finished just now. Nothing is charged twice: try again in a few seconds, or check this page again.";

const html = (reply: FastifyReply, status: number, body: string) => reply.code(status).headers(HEADERS).send(body);

/** Adds the page to the general server; answers the server. */
export function registerCheckoutPage(app: FastifyInstance, deps: CheckoutPageDependencies): FastifyInstance {
  app.get<{ Params: { token: string } }>("/Checkout/:token", async (request, reply) => {
    const { token } = request.params;
    const page = TOKEN.test(token) ? await checkoutPage(deps.runtime, token) : undefined;
    if (!page) return html(reply, 404, notFoundHtml());
    return html(reply, 200, checkoutHtml(page, `/Checkout/${token}`));
  });

  const action = (name: string, act: (token: string, fields: URLSearchParams) => Promise<void>) =>
    app.post<{ Params: { token: string } }>(`/Checkout/:token/${name}`, async (request, reply) => {
      const { token } = request.params;
      if (!TOKEN.test(token)) return html(reply, 404, notFoundHtml());
      const fields = new URLSearchParams(typeof request.body === "string" ? request.body : "");
      try {
        await act(token, fields);
      } catch (error) {
        if (!(error instanceof Refusal)) return failed(request.log, reply, token, error);
        const message = error.message;
        const page = await checkoutPage(deps.runtime, token);
        if (!page) return html(reply, 404, notFoundHtml());
        return html(
          reply,
          error.status,
          error.status === 403 ? refusedHtml(message) : checkoutHtml(page, `/Checkout/${token}`, message),
        );
      }
      return reply.code(303).header("Location", `/Checkout/${token}`).header("Cache-Control", "no-store").send();
    });

  /**
   * The service failed the form (the payment provider or storage did not
   * answer): the customer's browser gets the page as it stands, saying so,
   * not the API's JSON. The checkout is as its last step left it, and paying
   * again asks the provider for the same charge, so nothing is charged twice.
   */
  async function failed(log: FastifyBaseLogger, reply: FastifyReply, token: string, error: unknown) {
    log.error({ err: error }, "checkout form failed");
    const page = await checkoutPage(deps.runtime, token).catch(() => undefined);
    return html(reply, 503, page ? checkoutHtml(page, `/Checkout/${token}`, UNFINISHED) : refusedHtml(UNFINISHED));
  }

  const payWith = (event: "pay" | "confirm") => (token: string, fields: URLSearchParams) =>
    payCheckout({ ...deps.runtime, payments: deps.payments }, token, fields.get("form_token") ?? "", {
      event,
      consented: fields.get("consent") === "yes",
      paymentRef: SANDBOX_PAYMENT_REF,
    });
  action("pay", payWith("pay"));
  action("confirm", payWith("confirm"));
  action("decline", (token, fields) => declineCheckout(deps.runtime, token, fields.get("form_token") ?? ""));
  return app;
}
