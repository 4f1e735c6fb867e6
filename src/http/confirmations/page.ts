import type { FastifyInstance, FastifyReply } from "fastify";
import { Refusal } from "../../core/errors.js";
import {
  type ConfirmationDeps,
  type ConfirmationDesk,
  confirmationPage,
  confirmationPath,
  decideHeldCopy,
} from "../../services/autotrade-confirmations.js";
import { failedForm, html, PAGE_TOKEN, UNFINISHED } from "../customer-page.js";
import { closedHtml, confirmationHtml, DONE, refusedHtml } from "./html.js";

/**
 * The page at a held-copies notice's address, on the WL and GEN servers: GET
 * lists the account's copies held for confirmation; the forms confirm or
 * discard one. Each POST that succeeds answers 303 back to the page (saying
 * what was done), so a reload does not post again. The page is reached by
 * its token alone (the customer's browser holds no API key); the forms carry
 * the link's form token, which a page elsewhere cannot read.
 */

/** Adds the page to a server; answers the server. */
export function registerConfirmationPage(
  app: FastifyInstance,
  deps: ConfirmationDeps & { readonly desk: ConfirmationDesk },
): FastifyInstance {
  const show = async (reply: FastifyReply, token: string, status: number, shown: { note?: string; error?: string }) => {
    const page = PAGE_TOKEN.test(token) ? await confirmationPage(deps, deps.desk, token) : undefined;
    if (!page) return html(reply, 404, closedHtml("unknown"));
    // The last copy's decision spends the link: its redirect still says what was done.
    if (page.state !== "live")
      return html(reply, 410, closedHtml(page.state, page.state === "used" ? shown.note : undefined));
    return html(reply, status, confirmationHtml(page, confirmationPath(token), shown));
  };

  app.get<{ Params: { token: string }; Querystring: { done?: string } }>(
    "/Confirmations/:token",
    async (request, reply) => {
      const done = request.query.done;
      return show(reply, request.params.token, 200, {
        ...(done === "confirmed" || done === "discarded" ? { note: DONE[done] } : {}),
      });
    },
  );

  for (const name of ["confirm", "discard"] as const) {
    app.post<{ Params: { token: string } }>(`/Confirmations/:token/${name}`, async (request, reply) => {
      const { token } = request.params;
      if (!PAGE_TOKEN.test(token)) return html(reply, 404, closedHtml("unknown"));
      const fields = new URLSearchParams(typeof request.body === "string" ? request.body : "");
      try {
        await decideHeldCopy(deps, deps.desk, token, {
          formToken: fields.get("form_token") ?? "",
          key: fields.get("copy") ?? "",
          confirmed: name === "confirm",
        });
      } catch (error) {
        if (!(error instanceof Refusal)) {
          const page = async () => {
            const shown = await confirmationPage(deps, deps.desk, token);
            return shown?.state === "live"
              ? confirmationHtml(shown, confirmationPath(token), { error: UNFINISHED })
              : undefined;
          };
          return failedForm(request.log, reply, error, page, refusedHtml(UNFINISHED));
        }
        if (error.status === 403) return html(reply, 403, refusedHtml(error.message));
        return show(reply, token, error.status, { error: error.message });
      }
      const done = name === "confirm" ? "confirmed" : "discarded";
      return reply
        .code(303)
        .header("Location", `${confirmationPath(token)}?done=${done}`)
        .header("Cache-Control", "no-store")
        .send();
    });
  }
  return app;
}
