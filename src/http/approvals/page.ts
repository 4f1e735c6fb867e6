import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { Refusal } from "../../core/errors.js";
import { switchOn } from "../../services/autotrade-approval-switch.js";
import { approvalPage, approvalPath, approveApproval, declineApproval } from "../../services/autotrade-approvals.js";
import type { Runtime } from "../../services/runtime.js";
import { failedForm, html, PAGE_TOKEN, UNFINISHED } from "../customer-page.js";
import { approvalHtml, notFoundHtml, refusedHtml } from "./html.js";

/**
 * The page at an autotrade approval request's ApprovalUrl, on the
 * white-label server: GET shows the setup the site asks the customer to
 * approve; the forms approve it (with consent) or decline it. Each POST
 * answers 303 back to the page, so a reload does not post again. The page is
 * reached by its token alone (the customer's browser holds no API key); the
 * forms carry the request's form token, which a page elsewhere cannot read.
 */

/** Adds the page to the white-label server; answers the server. */
export function registerApprovalPage(app: FastifyInstance, runtime: Runtime): FastifyInstance {
  app.get<{ Params: { token: string } }>("/Approvals/:token", async (request, reply) => {
    const { token } = request.params;
    const page = PAGE_TOKEN.test(token) ? await approvalPage(runtime, token) : undefined;
    if (!page) return html(reply, 404, notFoundHtml());
    return html(reply, 200, approvalHtml(page, approvalPath(token)));
  });

  const action = (
    name: string,
    act: (token: string, fields: URLSearchParams, log: FastifyBaseLogger) => Promise<void>,
  ) =>
    app.post<{ Params: { token: string } }>(`/Approvals/:token/${name}`, async (request, reply) => {
      const { token } = request.params;
      if (!PAGE_TOKEN.test(token)) return html(reply, 404, notFoundHtml());
      const fields = new URLSearchParams(typeof request.body === "string" ? request.body : "");
      try {
        await act(token, fields, request.log);
      } catch (error) {
        if (!(error instanceof Refusal)) {
          const page = async () => {
            const shown = await approvalPage(runtime, token);
            return shown && approvalHtml(shown, approvalPath(token), UNFINISHED);
          };
          return failedForm(request.log, reply, error, page, refusedHtml(UNFINISHED));
        }
        const page = await approvalPage(runtime, token);
        if (!page) return html(reply, 404, notFoundHtml());
        return html(
          reply,
          error.status,
          error.status === 403 ? refusedHtml(error.message) : approvalHtml(page, approvalPath(token), error.message),
        );
      }
      return reply.code(303).header("Location", approvalPath(token)).header("Cache-Control", "no-store").send();
    });

  action("approve", async (token, fields, log) => {
    const approved = await approveApproval(
      runtime,
      token,
      fields.get("form_token") ?? "",
      fields.get("consent") === "yes",
    );
    if (approved === null) return;
    // The approval has committed: should switching on fail here, the page shows Processing and the scheduler retries.
    await switchOn(runtime, approved).catch((error: unknown) =>
      log.error({ err: error, approvalId: approved }, "switching on an approved request failed; the scheduler retries"),
    );
  });
  action("decline", (token, fields) => declineApproval(runtime, token, fields.get("form_token") ?? ""));
  return app;
}
