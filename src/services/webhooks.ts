import { randomBytes } from "node:crypto";
import { refuse } from "../core/errors.js";
import { withTransaction } from "../store/transaction.js";
import type { RequestContext } from "./runtime.js";
import { commerceSite } from "./site-scope.js";
import { endpointUrl, parsedUrl } from "./webhook-urls.js";

/**
 * A white-label site's webhook endpoints (POST and DELETE
 * /Webhooks/Register): where the site is told of its events (docs/webhooks.md).
 * White-label admins register for their own site; service admins name one
 * with WhiteLabelSiteId. Registering a URL again rotates its secret; the
 * choices are in docs/decisions.md "Webhook endpoints (issue 13)".
 */

/** Live endpoints a site may have at once. */
export const MAX_ENDPOINTS_PER_SITE = 10;

export interface Registration {
  readonly siteId: number;
  readonly url: string;
  /** The signing secret: answered here only, never again. */
  readonly secret: string;
  readonly createdAt: number;
  /** The URL was registered already: it keeps its deliveries and gets this new secret. */
  readonly secretRotated: boolean;
}

export interface Unregistration {
  readonly siteId: number;
  readonly url: string;
  readonly createdAt: number;
  readonly deletedAt: number;
  /** Deliveries still owed to the endpoint, now never sent. */
  readonly canceledDeliveries: number;
}

const newSecret = (): string => `whsec_${randomBytes(32).toString("base64url")}`;

const liveKey = (siteId: number, url: string): string => `${siteId}:${url}`;

export async function registerWebhook(
  ctx: RequestContext,
  input: { readonly url: string; readonly siteId: number | undefined; readonly sandbox: boolean },
): Promise<Registration> {
  return withTransaction(ctx, async (inTx) => {
    const { tx } = inTx;
    const site = await commerceSite(inTx, tx, input.siteId);
    const url = endpointUrl(input.url, input.sandbox);
    const nowMs = ctx.clock.nowMs();
    const secret = newSecret();
    const key = liveKey(site.id, url);
    const existing = await tx
      .selectFrom("webhook_endpoints")
      .select(["id", "created_at"])
      .where("live_key", "=", key)
      .executeTakeFirst();
    if (existing) {
      await tx.updateTable("webhook_endpoints").set({ secret }).where("id", "=", existing.id).execute();
      return { siteId: site.id, url, secret, createdAt: existing.created_at, secretRotated: true };
    }
    const live = await tx
      .selectFrom("webhook_endpoints")
      .select((eb) => eb.fn.countAll<number | string>().as("count"))
      .where("site_id", "=", site.id)
      .where("deleted_at", "is", null)
      .executeTakeFirstOrThrow();
    if (Number(live.count) >= MAX_ENDPOINTS_PER_SITE) {
      throw refuse("WrongState", {
        field: "Url",
        message: `A site may register at most ${MAX_ENDPOINTS_PER_SITE} webhook endpoints; unregister one first`,
        meta: { Limit: MAX_ENDPOINTS_PER_SITE },
      });
    }
    // Two registrations of one URL at once: the later one rotates the secret the earlier one made.
    const row = await tx
      .insertInto("webhook_endpoints")
      .values({ site_id: site.id, url, secret, live_key: key, created_at: nowMs, deleted_at: null })
      .onConflict((oc) => oc.column("live_key").doUpdateSet({ secret }))
      .returning(["created_at"])
      .executeTakeFirstOrThrow();
    return { siteId: site.id, url, secret, createdAt: row.created_at, secretRotated: row.created_at !== nowMs };
  });
}

/**
 * Removes the site's registration of the URL. Events from then on are not
 * owed to it, and those still owed are dropped (failed, "endpoint
 * unregistered"): a delivery in flight may still arrive.
 */
export async function unregisterWebhook(
  ctx: RequestContext,
  input: { readonly url: string; readonly siteId: number | undefined },
): Promise<Unregistration> {
  return withTransaction(ctx, async (inTx) => {
    const { tx } = inTx;
    const site = await commerceSite(inTx, tx, input.siteId);
    const url = parsedUrl(input.url).href;
    const nowMs = ctx.clock.nowMs();
    const endpoint = await tx
      .selectFrom("webhook_endpoints")
      .select(["id", "created_at"])
      .where("live_key", "=", liveKey(site.id, url))
      .executeTakeFirst();
    if (!endpoint) {
      throw refuse("NotFound", { field: "Url", message: `No webhook endpoint ${url} on site ${site.id}` });
    }
    await tx
      .updateTable("webhook_endpoints")
      .set({ deleted_at: nowMs, live_key: null })
      .where("id", "=", endpoint.id)
      .execute();
    const canceled = await tx
      .updateTable("webhook_deliveries")
      .set({ status: "failed", next_attempt_at: null, last_error: "endpoint unregistered" })
      .where("endpoint_id", "=", endpoint.id)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return {
      siteId: site.id,
      url,
      createdAt: endpoint.created_at,
      deletedAt: nowMs,
      canceledDeliveries: Number(canceled.numUpdatedRows),
    };
  });
}
