import type { Tx } from "../store/transaction.js";

/**
 * Events owed to a white-label site's webhook endpoints: one delivery row
 * per live endpoint, in the caller's transaction (an event is owed exactly
 * when what it tells of commits), deduplicated by event id. The deliverer
 * (src/engine/webhooks) sends them, signed, retrying with backoff.
 */
export interface SiteEvent {
  /** Stable per business event: the receiver dedupes by it. */
  readonly id: string;
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export async function enqueueSiteEvent(db: Tx, siteId: number, event: SiteEvent, nowMs: number): Promise<void> {
  const endpoints = await db
    .selectFrom("webhook_endpoints")
    .select("id")
    .where("site_id", "=", siteId)
    .where("deleted_at", "is", null)
    .execute();
  if (endpoints.length === 0) return;
  const payload = JSON.stringify({
    id: event.id,
    type: event.type,
    created: new Date(nowMs).toISOString(),
    data: event.data,
  });
  await db
    .insertInto("webhook_deliveries")
    .values(
      endpoints.map((endpoint) => ({
        endpoint_id: endpoint.id,
        event_id: event.id,
        event_type: event.type,
        payload,
        status: "pending" as const,
        attempts: 0,
        next_attempt_at: nowMs,
        claimed_until: null,
        last_error: null,
        created_at: nowMs,
        delivered_at: null,
      })),
    )
    .onConflict((oc) => oc.columns(["endpoint_id", "event_id"]).doNothing())
    .execute();
}
