import type { Logger } from "pino";
import type { Runtime } from "../../services/runtime.js";
import { transaction } from "../../store/transaction.js";
import { nextAttemptAt } from "./schedule.js";
import { type AttemptOutcome, sendAttempt } from "./send.js";

/**
 * A delivery pass: every delivery due on the service clock is attempted once.
 * Deliveries are claimed in batches first (real time, like the biller's
 * claims: a standing sandbox clock must not hold a claim forever), so that
 * several processes never send the same attempt at once; each outcome is
 * recorded as it comes. A process that dies mid-send leaves its claim to run
 * out, and whichever process passes next sends again (the receiver dedupes by
 * event id). One stopped mid-send hands its claims back.
 */

export interface DeliveryOptions {
  /** Deliveries claimed at a time (default 50). */
  readonly batch?: number;
  /** Requests in flight at once (default 8). */
  readonly concurrency?: number;
  /** How long one request may take, real milliseconds (default 5 s). */
  readonly timeoutMs?: number;
  /** How long a claim holds, real milliseconds (default 2 minutes: longer than a batch's sends can take). */
  readonly claimMs?: number;
}

export interface DeliveryPass {
  readonly delivered: number;
  readonly retrying: number;
  readonly failed: number;
}

interface Claimed {
  readonly id: number;
  readonly endpointId: number;
  readonly eventId: string;
  readonly payload: string;
  readonly attempts: number;
  readonly owedAt: number;
  readonly url: string;
  readonly secret: string;
  readonly claim: number;
}

/** Batches in a pass at most: a pass ends even when events keep coming. */
const MAX_BATCHES = 100;

export async function deliverDue(
  runtime: Runtime,
  logger: Logger,
  stop: AbortSignal,
  options: DeliveryOptions = {},
): Promise<DeliveryPass> {
  const batch = options.batch ?? 50;
  const counts = { delivered: 0, retrying: 0, failed: 0 };
  for (let i = 0; i < MAX_BATCHES && !stop.aborted; i++) {
    const claimed = await claimDue(runtime, batch, options.claimMs ?? 120_000);
    let next = 0;
    const worker = async () => {
      while (next < claimed.length) {
        const delivery = claimed[next++] as Claimed;
        const outcome = stop.aborted
          ? ({ delivered: false, reason: "stopped", stopped: true } as const)
          : await sendAttempt(
              {
                url: delivery.url,
                secret: delivery.secret,
                eventId: delivery.eventId,
                payload: delivery.payload,
                unixSeconds: Math.floor(runtime.clock.nowMs() / 1000),
              },
              options.timeoutMs ?? 5000,
              stop,
            );
        const result = await record(runtime, logger, delivery, outcome);
        if (result) counts[result] += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, claimed.length) }, worker));
    if (claimed.length < batch) break;
  }
  return counts;
}

/** Due deliveries to live endpoints, oldest due first, claimed for this process; on PostgreSQL others' locks are skipped. */
async function claimDue(runtime: Runtime, limit: number, claimMs: number): Promise<Claimed[]> {
  return transaction(runtime.storage, async (tx) => {
    const realNow = runtime.clock.realNowMs();
    let query = tx
      .selectFrom("webhook_deliveries as d")
      .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
      .select(["d.id", "d.endpoint_id", "d.event_id", "d.payload", "d.attempts", "d.created_at", "e.url", "e.secret"])
      .where("d.status", "=", "pending")
      .where("d.next_attempt_at", "<=", runtime.clock.nowMs())
      .where((eb) => eb.or([eb("d.claimed_until", "is", null), eb("d.claimed_until", "<", realNow)]))
      .where("e.deleted_at", "is", null)
      .orderBy("d.next_attempt_at")
      .orderBy("d.id")
      .limit(limit);
    if (runtime.storage.backend === "postgres") query = query.forUpdate("d").skipLocked();
    const due = await query.execute();
    if (due.length === 0) return [];
    const claim = realNow + claimMs;
    await tx
      .updateTable("webhook_deliveries")
      .set({ claimed_until: claim })
      .where(
        "id",
        "in",
        due.map((row) => row.id),
      )
      .execute();
    return due.map((row) => ({
      id: row.id,
      endpointId: row.endpoint_id,
      eventId: row.event_id,
      payload: row.payload,
      attempts: row.attempts,
      owedAt: row.created_at,
      url: row.url,
      secret: row.secret,
      claim,
    }));
  });
}

/**
 * Writes an attempt's outcome, if the claim still holds and the delivery is
 * still pending (an endpoint unregistered meanwhile ended it). A stopped
 * attempt counts for nothing: its claim is handed back.
 */
async function record(
  runtime: Runtime,
  logger: Logger,
  delivery: Claimed,
  outcome: AttemptOutcome,
): Promise<keyof DeliveryPass | undefined> {
  const nowMs = runtime.clock.nowMs();
  const mine = runtime.storage.db
    .updateTable("webhook_deliveries")
    .where("id", "=", delivery.id)
    .where("status", "=", "pending")
    .where("claimed_until", "=", delivery.claim);
  const facts = { deliveryId: delivery.id, endpointId: delivery.endpointId, eventId: delivery.eventId };
  if (outcome.delivered) {
    await mine
      .set({
        status: "delivered",
        attempts: delivery.attempts + 1,
        delivered_at: nowMs,
        next_attempt_at: null,
        claimed_until: null,
        last_error: null,
      })
      .execute();
    logger.debug({ ...facts, attempt: delivery.attempts + 1, httpStatus: outcome.status }, "webhook delivered");
    return "delivered";
  }
  if (outcome.stopped) {
    await mine.set({ claimed_until: null }).execute();
    return undefined;
  }
  const attempts = delivery.attempts + 1;
  const next = nextAttemptAt(delivery.owedAt, attempts, nowMs);
  await mine
    .set({
      status: next === null ? "failed" : "pending",
      attempts,
      next_attempt_at: next,
      claimed_until: null,
      last_error: outcome.reason,
    })
    .execute();
  if (next === null) {
    logger.warn({ ...facts, attempts, reason: outcome.reason }, "webhook delivery failed for good");
    return "failed";
  }
  logger.info(
    { ...facts, attempt: attempts, reason: outcome.reason, retryAt: new Date(next).toISOString() },
    "webhook delivery failed; retried later",
  );
  return "retrying";
}
