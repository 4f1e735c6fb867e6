import type { FastifyInstance } from "fastify";
import { Refusal } from "../../core/errors.js";
import { checkoutPage, declineCheckout, payCheckout } from "../../services/checkout.js";
import type { PaymentProvider } from "../../services/payments.js";
import type { Runtime } from "../../services/runtime.js";
import { SANDBOX_PAYMENT_REF } from "../../services/sandbox-payments.js";
import { failedForm, html, PAGE_TOKEN, UNFINISHED } from "../customer-page.js";
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

/** Paying again asks the provider for the same charge. */
const UNFINISHED_PAYMENT = `${UNFINISHED} Nothing is charged twice.`;

/** Adds the page to the general server; answers the server. */
export function registerCheckoutPage(app: FastifyInstance, deps: CheckoutPageDependencies): FastifyInstance {
  app.get<{ Params: { token: string } }>("/Checkout/:token", async (request, reply) => {
    const { token } = request.params;
    const page = PAGE_TOKEN.test(token) ? await checkoutPage(deps.runtime, token) : undefined;
    if (!page) return html(reply, 404, notFoundHtml());
    return html(reply, 200, checkoutHtml(page, `/Checkout/${token}`));
  });

  const action = (name: string, act: (token: string, fields: URLSearchParams) => Promise<void>) =>
    app.post<{ Params: { token: string } }>(`/Checkout/:token/${name}`, async (request, reply) => {
      const { token } = request.params;
      if (!PAGE_TOKEN.test(token)) return html(reply, 404, notFoundHtml());
      const fields = new URLSearchParams(typeof request.body === "string" ? request.body : "");
      try {
        await act(token, fields);
      } catch (error) {
        if (!(error instanceof Refusal)) {
          const page = async () => {
            const shown = await checkoutPage(deps.runtime, token);
            return shown && checkoutHtml(shown, `/Checkout/${token}`, UNFINISHED_PAYMENT);
          };
          return failedForm(request.log, reply, error, page, refusedHtml(UNFINISHED_PAYMENT));
        }
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
