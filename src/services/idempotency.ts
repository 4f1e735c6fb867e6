import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { refuse } from "../core/errors.js";
import type { Storage } from "../store/storage.js";
import type { TradingRuntime } from "./trading.js";

/**
 * Idempotent order entry (the Idempotency-Key header). A key is claimed for
 * its request before it runs; the trading frame marks it committed in the
 * same commit as the orders the request made; its answer is kept once sent.
 * The same key with the same request within 24 hours gets that answer again
 * and makes nothing; with another request it is refused. A request refused
 * or failed makes nothing and leaves nothing: sent again, it runs again.
 */

/** What the trading frame writes with the orders a keyed request made: that the key's request is carried out. */
export interface IdempotencyMark {
  readonly personId: number;
  readonly key: string;
}

export interface IdempotentRequest extends IdempotencyMark {
  /** The operation and its input as read: the same key must come with the same request. */
  readonly operation: string;
  readonly input: unknown;
}

export type Claimed =
  | {
      readonly kind: "run";
      /** The request answered this: it is kept to be sent again. */
      answered(body: string): Promise<void>;
      /** The request was refused or failed before making anything: the key is free again. */
      abandon(): Promise<void>;
    }
  | { readonly kind: "replay"; readonly body: string };

/** How long a key is remembered, on the service clock. */
const REMEMBERED_MS = 24 * 3_600_000;
/** A pending claim older than this (real time) belongs to a process that died: another may take it. */
const CLAIM_LEASE_MS = 60_000;
/** How long a duplicate waits for the first request with its key to answer (real time). */
const WAIT_MS = 10_000;
const POLL_MS = 20;
/** Expired keys are deleted at most this often (real time). */
const PURGE_EVERY_MS = 600_000;

/** Requests with a claimed key running in this process, by storage and key: a duplicate waits for them. */
const runningHere = new WeakMap<Storage, Map<string, Promise<void>>>();
const lastPurge = new WeakMap<Storage, number>();

/** Claims the key for the request, or answers what the first request with it answered. */
export async function claimIdempotencyKey(ctx: TradingRuntime, request: IdempotentRequest): Promise<Claimed> {
  let local = runningHere.get(ctx.storage);
  if (!local) {
    local = new Map();
    runningHere.set(ctx.storage, local);
  }
  const id = `${request.personId}:${request.key}`;
  for (let earlier = local.get(id); earlier; earlier = local.get(id)) await earlier;
  let finish = () => {};
  const done = new Promise<void>((resolve) => {
    finish = () => {
      if (local.get(id) === done) local.delete(id);
      resolve();
    };
  });
  local.set(id, done);
  try {
    const claimed = await claim(ctx, request);
    if (claimed.kind === "replay") {
      finish();
      return claimed;
    }
    return {
      kind: "run",
      answered: (body) => claimed.answered(body).finally(finish),
      abandon: () => claimed.abandon().finally(finish),
    };
  } catch (error) {
    finish();
    throw error;
  }
}

async function claim(ctx: TradingRuntime, request: IdempotentRequest): Promise<Claimed> {
  const db = ctx.storage.db;
  const fingerprint = fingerprintOf(request.operation, request.input);
  const origin = ctx.frame.origin;
  const where = { person_id: request.personId, key: request.key };
  await purgeNowAndThen(ctx);
  const waitUntil = ctx.clock.realNowMs() + WAIT_MS;
  for (;;) {
    const claimedAt = ctx.clock.realNowMs();
    const inserted = await db
      .insertInto("idempotency_keys")
      .values({
        ...where,
        operation: request.operation,
        fingerprint,
        state: "pending",
        claimed_by: origin,
        claimed_at: claimedAt,
        created_at: ctx.clock.nowMs(),
        answer: null,
      })
      .onConflict((oc) => oc.columns(["person_id", "key"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return claimFor(ctx, request, origin);
    const row = await db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where("person_id", "=", request.personId)
      .where("key", "=", request.key)
      .executeTakeFirst();
    if (!row) continue;
    if (row.created_at + REMEMBERED_MS <= ctx.clock.nowMs()) {
      // Forgotten: the key is new again.
      await db
        .deleteFrom("idempotency_keys")
        .where("person_id", "=", request.personId)
        .where("key", "=", request.key)
        .where("created_at", "=", row.created_at)
        .execute();
      continue;
    }
    if (row.operation !== request.operation || row.fingerprint !== fingerprint) {
      throw refuse("IdempotencyKeyReused", {
        field: "Idempotency-Key",
        message: `Idempotency-Key ${request.key} was sent with another request (${row.operation}) in the last 24 hours`,
      });
    }
    if (row.state === "answered" && row.answer !== null) return { kind: "replay", body: row.answer };
    if (row.state === "committed") {
      throw refuse("IdempotencyKeyBusy", {
        field: "Idempotency-Key",
        message: `The request with Idempotency-Key ${request.key} was carried out, but its answer was lost: read the strategy's orders`,
      });
    }
    if (row.claimed_at + CLAIM_LEASE_MS <= ctx.clock.realNowMs()) {
      // Its process died before making anything (what it made would have marked the key committed).
      const taken = await db
        .updateTable("idempotency_keys")
        .set({ claimed_by: origin, claimed_at: claimedAt })
        .where("person_id", "=", request.personId)
        .where("key", "=", request.key)
        .where("state", "=", "pending")
        .where("claimed_at", "=", row.claimed_at)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return claimFor(ctx, request, origin);
      continue;
    }
    if (ctx.clock.realNowMs() >= waitUntil) {
      throw refuse("IdempotencyKeyBusy", {
        field: "Idempotency-Key",
        message: `The request with Idempotency-Key ${request.key} is still running: send it again later`,
      });
    }
    await sleep(POLL_MS);
  }
}

/** The claim of a request about to run. */
function claimFor(ctx: TradingRuntime, request: IdempotentRequest, origin: string): Claimed {
  const db = ctx.storage.db;
  return {
    kind: "run",
    async answered(body) {
      await db
        .updateTable("idempotency_keys")
        .set({ state: "answered", answer: body })
        .where("person_id", "=", request.personId)
        .where("key", "=", request.key)
        .where("claimed_by", "=", origin)
        .execute();
    },
    async abandon() {
      // Only a claim that made nothing: one marked committed keeps its key.
      await db
        .deleteFrom("idempotency_keys")
        .where("person_id", "=", request.personId)
        .where("key", "=", request.key)
        .where("claimed_by", "=", origin)
        .where("state", "=", "pending")
        .execute();
    },
  };
}

/** Deletes the keys older than 24 hours, at most every ten minutes. */
async function purgeNowAndThen(ctx: TradingRuntime): Promise<void> {
  const now = ctx.clock.realNowMs();
  if (now - (lastPurge.get(ctx.storage) ?? 0) < PURGE_EVERY_MS) return;
  lastPurge.set(ctx.storage, now);
  await ctx.storage.db
    .deleteFrom("idempotency_keys")
    .where("created_at", "<", ctx.clock.nowMs() - REMEMBERED_MS)
    .execute();
}

/** The operation and its input as read, hashed: key order and formatting do not matter. */
function fingerprintOf(operation: string, input: unknown): string {
  return createHash("sha256").update(operation).update("\n").update(canonicalJson(input)).digest("base64url");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
