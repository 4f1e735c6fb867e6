import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { MAX_URL_LENGTH } from "../../../services/webhook-urls.js";
import { registerWebhook, unregisterWebhook } from "../../../services/webhooks.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { WebhookRegistrationRecord, WebhookUnregistrationRecord } from "../records.js";
import { Id } from "../schemas.js";

/**
 * The completion webhook's registration (issue 13; docs/webhooks.md): a
 * white-label site's admins register the URLs the site's events are posted
 * to, signed with a secret answered once. Service admins name the site with
 * WhiteLabelSiteId.
 */

const siteAdministrators = onlyRoles("admin", "whitelabel-admin");
const WhiteLabelSiteId = Type.Optional(Id({ description: "Service admin keys only: the site to act on" }));
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description:
    "The endpoint's absolute URL: https (http and hosts on the local network only in the sandbox), no user name, password or fragment",
});

export const webhookOperations = [
  defineOperation({
    id: "RegisterWebhook",
    method: "POST",
    path: "/Webhooks/Register",
    servers: ["WL"],
    summary:
      "Registers a URL the site's events are posted to (docs/webhooks.md) and answers its signing secret, this once. Registering a registered URL again rotates its secret: the old one signs nothing from then on, and deliveries still owed are signed with the new one. At most 10 endpoints per site.",
    input: Type.Object({ Url, WhiteLabelSiteId }),
    result: WebhookRegistrationRecord,
    permission: siteAdministrators,
    paginated: false,
    example: { Url: EXAMPLE.webhookUrl, WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input) => {
      const registration = await registerWebhook(ctx, {
        url: input.Url,
        siteId: input.WhiteLabelSiteId,
        sandbox: ctx.sandbox,
      });
      return [
        {
          Url: registration.url,
          WhiteLabelSiteId: registration.siteId,
          Secret: registration.secret,
          CreatedAt: new Date(registration.createdAt),
          IsSecretRotated: registration.secretRotated,
        },
      ];
    },
  }),
  defineOperation({
    id: "UnregisterWebhook",
    method: "DELETE",
    path: "/Webhooks/Register",
    servers: ["WL"],
    summary:
      "Removes the site's registration of a URL: no event is owed to it from then on, and deliveries still owed to it are dropped (one in flight may still arrive).",
    input: Type.Object({ Url, WhiteLabelSiteId }),
    result: WebhookUnregistrationRecord,
    permission: siteAdministrators,
    paginated: false,
    example: { Url: EXAMPLE.webhookUrl, WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input) => {
      const removed = await unregisterWebhook(ctx, { url: input.Url, siteId: input.WhiteLabelSiteId });
      return [
        {
          Url: removed.url,
          WhiteLabelSiteId: removed.siteId,
          CreatedAt: new Date(removed.createdAt),
          DeletedAt: new Date(removed.deletedAt),
          CanceledDeliveries: removed.canceledDeliveries,
        },
      ];
    },
  }),
];
