import { createHash } from "node:crypto";
import { sql } from "kysely";
import { addMonths } from "../core/billing.js";
import { refuse } from "../core/errors.js";
import { covers, houseAccount } from "../core/ledger.js";
import { centsOfText, dollarsOf } from "../core/money.js";
import { type Tx, withTransaction } from "../store/transaction.js";
import { stopAutotradingUnfollowed } from "./autotrade-control.js";
import { chargeHouses } from "./charges.js";
import { balances, lockAccounts } from "./ledger.js";
import type { RequestContext } from "./runtime.js";
import { catalogEntry } from "./site-catalog.js";
import { commerceSite, customerOf } from "./site-scope.js";
import { endSubscription, liveSubscription, type SubscriptionRow, startSubscription } from "./subscription-rows.js";

/**
 * WhiteLabelStartSubscription and WhiteLabelStopSubscription: a site gives
 * its customer a strategy it owns by a finite grant (lane grant, no charge)
 * or sells one of its catalog by an open-ended monthly subscription billed
 * to its house account at the wholesale price (lane resale). The recurring
 * biller takes over from next_charge_at (docs/decisions.md "White-label
 * commerce").
 */

export type Lane = "Owned" | "Resold";

export interface WhiteLabelStart {
  readonly siteId: number | undefined;
  readonly personId: number;
  readonly strategyId: number;
  readonly idempotencyKey: string;
  readonly months?: number | undefined;
  readonly accessUntilMs?: number | undefined;
}

export interface StartedSubscription {
  readonly lane: Lane;
  readonly isIdempotentReplay: boolean;
  /** Resold: whether the first wholesale charge settled; owned: null (nothing is charged). */
  readonly isFirstChargeSuccessful: boolean | null;
  readonly row: SubscriptionRow;
  /** Owned: the end of access this call granted (a replay: what the original call granted). */
  readonly accessUntilMs: number | null;
}

const ALREADY_SUBSCRIBED = "Already subscribed";

const alreadySubscribed = (row: SubscriptionRow) =>
  refuse("AlreadyExists", { field: "StrategyId", message: ALREADY_SUBSCRIBED, meta: { SubscriptionId: row.id } });

const fingerprintOf = (input: WhiteLabelStart): string =>
  createHash("sha256")
    .update(JSON.stringify([input.personId, input.strategyId, input.months ?? null, input.accessUntilMs ?? null]))
    .digest("hex");

export async function startWhiteLabelSubscription(
  ctx: RequestContext,
  input: WhiteLabelStart,
): Promise<StartedSubscription> {
  return withTransaction(ctx, async (inTx) => {
    const { tx } = inTx;
    const site = await commerceSite(ctx, tx, input.siteId);
    await customerOf(tx, site.id, input.personId);
    const strategy = await tx
      .selectFrom("strategies")
      .select(["white_label_site_id", "is_private", "is_alive", "monthly_cost"])
      .where("id", "=", input.strategyId)
      .executeTakeFirst();
    if (!strategy) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${input.strategyId}` });
    if (strategy.white_label_site_id === site.id) {
      return grant(inTx, site.id, input, strategy.is_alive === 1);
    }
    if (input.months !== undefined || input.accessUntilMs !== undefined) {
      throw refuse("InvalidValue", {
        field: input.months !== undefined ? "Months" : "AccessUntil",
        message: "A resold strategy takes no term: it is billed monthly until stopped",
      });
    }
    const entry = await catalogEntry(tx, site.id, input.strategyId);
    if (!entry) {
      if (strategy.is_private === 1) {
        throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${input.strategyId}` });
      }
      throw refuse("WrongState", {
        field: "StrategyId",
        message: "The site neither owns this strategy nor resells it: add it with UpdateSiteCatalog first",
      });
    }
    if (strategy.is_alive !== 1) throw notAlive();
    const wholesaleCents = centsOfText(strategy.monthly_cost) ?? 0;
    if (wholesaleCents <= 0) {
      throw refuse("WrongState", { field: "StrategyId", message: "The strategy has no monthly price to resell at" });
    }
    return resell(inTx, site, input, wholesaleCents, entry.markupCents);
  });
}

const notAlive = () => refuse("WrongState", { field: "StrategyId", message: "The strategy is no longer alive" });

/**
 * The owned lane: access until the term's end, extended by each new key
 * (from the current end while it lasts), replayed by a key used before with
 * the same parameters, refused with different ones.
 */
async function grant(
  ctx: RequestContext & { readonly tx: Tx },
  siteId: number,
  input: WhiteLabelStart,
  alive: boolean,
): Promise<StartedSubscription> {
  const { tx } = ctx;
  const now = ctx.clock.nowMs();
  if ((input.months === undefined) === (input.accessUntilMs === undefined)) {
    throw refuse(input.months === undefined ? "MissingValue" : "InvalidValue", {
      field: "Months",
      message: "An owned strategy's access needs a term: Months or AccessUntil, not both",
    });
  }
  if (input.accessUntilMs !== undefined && input.accessUntilMs <= now) {
    throw refuse("InvalidValue", { field: "AccessUntil", message: "AccessUntil must be in the future" });
  }
  const fingerprint = fingerprintOf(input);
  // The key is claimed first: a concurrent call with it waits here (PostgreSQL) and then replays.
  const claimed = await tx
    .insertInto("subscription_grants")
    .values({
      site_id: siteId,
      idempotency_key: input.idempotencyKey,
      request_fingerprint: fingerprint,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(["site_id", "idempotency_key"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  if (!claimed) return replay(tx, siteId, input.idempotencyKey, fingerprint);
  if (!alive) throw notAlive();
  const until = (from: number) =>
    input.months !== undefined ? addMonths(from, input.months) : (input.accessUntilMs as number);
  const granted = {
    idempotency_key: input.idempotencyKey,
    request_fingerprint: fingerprint,
  };
  let live = await liveSubscription(tx, input.personId, input.strategyId, now);
  if (live?.kind === "simulated") {
    await endSubscription(tx, live.id, now, now, "superseded");
    live = undefined;
  }
  if (!live) {
    const end = until(now);
    const started = await startSubscription(tx, input.personId, input.strategyId, now, {
      kind: "real",
      lane: "grant",
      site_id: siteId,
      price_cents: 0,
      paid_until: end,
      ended_at: end,
      end_reason: "lapsed",
      ...granted,
    });
    if (started.started) return recordGrant(tx, claimed.id, started.row, end);
    live = started.live;
  }
  if (live.kind !== "real" || live.lane !== "grant" || live.site_id !== siteId) throw alreadySubscribed(live);
  const current = await lockedRow(ctx, live.id);
  // Never shortens: an AccessUntil before the current end leaves it (stop Immediate, then grant, to shorten).
  const end = Math.max(until(Math.max(current.ended_at ?? now, now)), current.ended_at ?? now);
  await tx
    .updateTable("subscriptions")
    .set({ ended_at: end, paid_until: end, ...granted })
    .where("id", "=", current.id)
    .execute();
  return recordGrant(tx, claimed.id, { ...current, ended_at: end, paid_until: end, ...granted }, end);
}

async function recordGrant(tx: Tx, grantId: number, row: SubscriptionRow, end: number): Promise<StartedSubscription> {
  await tx
    .updateTable("subscription_grants")
    .set({ subscription_id: row.id, granted_until: end })
    .where("id", "=", grantId)
    .execute();
  return { lane: "Owned", isIdempotentReplay: false, isFirstChargeSuccessful: null, row, accessUntilMs: end };
}

async function replay(tx: Tx, siteId: number, key: string, fingerprint: string): Promise<StartedSubscription> {
  const earlier = await tx
    .selectFrom("subscription_grants")
    .selectAll()
    .where("site_id", "=", siteId)
    .where("idempotency_key", "=", key)
    .executeTakeFirstOrThrow();
  if (earlier.request_fingerprint !== fingerprint || earlier.subscription_id === null) {
    throw refuse("IdempotencyKeyReused", {
      field: "IdempotencyKey",
      message: `IdempotencyKey ${key} was used for another grant: use a fresh key for each renewal`,
    });
  }
  const row = await tx
    .selectFrom("subscriptions")
    .selectAll()
    .where("id", "=", earlier.subscription_id)
    .executeTakeFirstOrThrow();
  return {
    lane: "Owned",
    isIdempotentReplay: true,
    isFirstChargeSuccessful: null,
    row,
    accessUntilMs: earlier.granted_until,
  };
}

/** The subscription's row, held until the transaction ends (PostgreSQL; SQLite's write transactions are serial). */
async function lockedRow(ctx: RequestContext & { readonly tx: Tx }, id: number): Promise<SubscriptionRow> {
  if (ctx.storage.backend === "postgres") {
    await sql`select id from subscriptions where id = ${id} for update`.execute(ctx.tx);
  }
  return ctx.tx.selectFrom("subscriptions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

/**
 * The resold lane: an open-ended monthly subscription at the wholesale price,
 * its first period charged to the house account in the call. The house
 * account is locked first, so starts of one site are decided one after the
 * other on the balance the one before left.
 */
async function resell(
  ctx: RequestContext & { readonly tx: Tx },
  site: { readonly id: number; readonly allowNegativeBilling: boolean },
  input: WhiteLabelStart,
  wholesaleCents: number,
  markupCents: number,
): Promise<StartedSubscription> {
  const { tx } = ctx;
  const backend = ctx.storage.backend;
  const now = ctx.clock.nowMs();
  const house = houseAccount(site.id);
  await lockAccounts(tx, backend, [house], now);
  const live = await liveSubscription(tx, input.personId, input.strategyId, now);
  if (live && live.kind !== "simulated") throw alreadySubscribed(live);
  const balance = (await balances(tx, [house])).get(house) ?? 0;
  if (!covers(balance, wholesaleCents, site.allowNegativeBilling)) {
    throw refuse("InsufficientFunds", {
      message: `The house account holds ${dollarsOf(balance)}, less than the first wholesale charge of ${dollarsOf(wholesaleCents)}`,
      meta: { HouseAccountBalance: dollarsOf(balance), WholesaleMonthly: dollarsOf(wholesaleCents) },
    });
  }
  if (live) await endSubscription(tx, live.id, now, now, "superseded");
  const started = await startSubscription(tx, input.personId, input.strategyId, now, {
    kind: "real",
    lane: "resale",
    site_id: site.id,
    price_cents: wholesaleCents,
    base_price_cents: wholesaleCents,
    markup_cents: markupCents,
    billing_interval: "month",
    billing_interval_count: 1,
    next_charge_at: now,
    next_charge_cents: wholesaleCents,
    idempotency_key: input.idempotencyKey,
    request_fingerprint: fingerprintOf(input),
  });
  if (!started.started) throw alreadySubscribed(started.live);
  const [charge] = await chargeHouses(tx, backend, [started.row], now);
  const row = await tx
    .selectFrom("subscriptions")
    .selectAll()
    .where("id", "=", started.row.id)
    .executeTakeFirstOrThrow();
  return {
    lane: "Resold",
    isIdempotentReplay: false,
    isFirstChargeSuccessful: charge?.settled ?? false,
    row,
    accessUntilMs: row.paid_until,
  };
}

export type StopMode = "EndOfTerm" | "Immediate";

export interface WhiteLabelStop {
  readonly siteId: number | undefined;
  readonly personId: number;
  readonly strategyId: number;
  readonly mode: StopMode;
  /** What becomes of an autotrading customer's positions; required when the stop ends access now. */
  readonly autotradePositions?: AutotradePositions | undefined;
}

export type AutotradePositions = "LeaveInPlace" | "AttemptToClose";

export interface StoppedSubscription {
  readonly lane: Lane;
  readonly row: SubscriptionRow;
}

/**
 * EndOfTerm: billing stops and access runs to the end of what was paid or
 * granted (a grant's end is confirmed as it is); repeating changes nothing.
 * Immediate: ends now, the rest of the term forfeited. A stop that ends
 * access now also stops the customer's autotrading of the strategy, leaving
 * its positions in place or closing them as AutotradePositions says; without
 * it such a stop is refused (API.md 4.6 rule 3).
 */
export async function stopWhiteLabelSubscription(
  ctx: RequestContext,
  input: WhiteLabelStop,
): Promise<StoppedSubscription> {
  return withTransaction(ctx, async (inTx) => {
    const { tx } = inTx;
    const site = await commerceSite(ctx, tx, input.siteId);
    await customerOf(tx, site.id, input.personId);
    const now = ctx.clock.nowMs();
    const live = await liveSubscription(tx, input.personId, input.strategyId, now);
    if (live?.kind === "simulated" || live?.kind === "paper") {
      throw refuse("WrongState", {
        field: "StrategyId",
        message: "That is a simulated subscription: stop it with StopSim",
      });
    }
    if (!live || live.site_id !== site.id || (live.lane !== "grant" && live.lane !== "resale")) {
      throw refuse("NotFound", {
        field: "StrategyId",
        message: `Customer ${input.personId} holds no live subscription of the site to strategy ${input.strategyId}`,
      });
    }
    const lane: Lane = live.lane === "grant" ? "Owned" : "Resold";
    const row = await lockedRow(inTx, live.id);
    if (input.mode === "Immediate") {
      await endSubscription(tx, row.id, now, now, "immediate");
    } else if (row.lane === "resale" && row.cancel_pending === 0) {
      const end = row.paid_until !== null && row.paid_until > now ? row.paid_until : now;
      await endSubscription(tx, row.id, end, now, "stopped");
      await tx.updateTable("subscriptions").set({ cancel_pending: 1 }).where("id", "=", row.id).execute();
    }
    await stopAutotradingUnfollowed(
      inTx,
      input,
      input.autotradePositions === undefined ? undefined : input.autotradePositions === "LeaveInPlace",
      "AutotradePositions",
    );
    return {
      lane,
      row: await tx.selectFrom("subscriptions").selectAll().where("id", "=", row.id).executeTakeFirstOrThrow(),
    };
  });
}
