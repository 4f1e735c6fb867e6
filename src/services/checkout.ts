import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Selectable } from "kysely";
import { isServiceAdmin } from "../core/access.js";
import type { BillingInterval } from "../core/billing.js";
import {
  awaitsCustomer,
  CHECKOUT_LIFETIME_MS,
  type CheckoutEvent,
  checkoutTerms,
  isPending,
  nextStatus,
  STATUS_DETAILS,
} from "../core/checkout.js";
import { refuse } from "../core/errors.js";
import { centsOfText } from "../core/money.js";
import type { SubscriptionCheckoutsTable } from "../store/schema.js";
import { settingOrInit } from "../store/settings.js";
import { type Tx, transaction, withTransaction } from "../store/transaction.js";
import { chargeReference, recordProviderCharges } from "./charges.js";
import { viewableStrategy } from "./closed-trades.js";
import type { PaymentOutcome, PaymentProvider } from "./payments.js";
import type { RequestContext, Runtime } from "./runtime.js";
import { endSubscription, liveKeyOf, liveSubscription, startSubscription } from "./subscription-rows.js";

/**
 * The GEN subscription checkout (CreateSubscriptionCheckout,
 * GetSubscriptionCheckoutStatus and the page at ApprovalUrl). Creating one
 * charges nothing; the customer consents and pays on the page, reached by an
 * unguessable token. The database keeps the token's hash, not the token: the
 * token (and the page's form token) are HMACs of the checkout's nonce under
 * the service's checkout secret, so the status can show ApprovalUrl again.
 * The charge is asked of the payment provider outside any transaction, between
 * the claim (Processing) and the record of its answer; its reference
 * charge:<subscription>:1 makes asking again after an interruption safe.
 */

export type CheckoutRow = Selectable<SubscriptionCheckoutsTable>;

/** The page's address on the general server. */
export const checkoutPath = (token: string): string => `/Checkout/${token}`;

const SECRET_SETTING = "checkout_secret";

const secretOf = (db: Tx) => settingOrInit(db, SECRET_SETTING, randomBytes(32).toString("base64url"));

const mac = (secret: string, purpose: string, nonce: string) =>
  createHmac("sha256", secret).update(`${purpose}:${nonce}`).digest("base64url");

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** The record the operations answer (SubscriptionCheckout). */
export interface CheckoutView {
  readonly row: CheckoutRow;
  /** The page's token while a human step is pending; null otherwise. */
  readonly token: string | null;
}

async function viewOf(db: Tx, row: CheckoutRow): Promise<CheckoutView> {
  return { row, token: awaitsCustomer(row.status) ? mac(await secretOf(db), "page", row.nonce) : null };
}

/** CreateSubscriptionCheckout: the caller's checkout of a paid strategy; nothing is charged. */
export async function createCheckout(
  ctx: RequestContext,
  input: { readonly strategyId: number; readonly interval: BillingInterval; readonly count: number },
): Promise<CheckoutView> {
  return withTransaction(ctx, async (inner) => {
    const { tx } = inner;
    const nowMs = ctx.clock.nowMs();
    const personId = ctx.caller.personId;
    const strategy = await viewableStrategy(inner, input.strategyId);
    if (strategy.owner_person_id === personId) {
      throw refuse("InvalidValue", {
        field: "StrategyId",
        message: "The owner cannot subscribe to their own strategy",
      });
    }
    if (strategy.is_private === 1 || strategy.is_alive !== 1) {
      throw refuse("WrongState", {
        field: "StrategyId",
        message: `Strategy ${strategy.id} takes no subscriptions (NoSubsAllowed): it is private or no longer alive`,
      });
    }
    const monthlyCents = centsOfText(strategy.monthly_cost) ?? 0;
    if (monthlyCents <= 0) {
      throw refuse("InvalidValue", {
        field: "StrategyId",
        message: `Strategy ${strategy.id} is free: it needs no checkout`,
      });
    }
    const terms = checkoutTerms(
      { monthlyCents, annualCents: centsOfText(strategy.annual_cost) },
      input.interval,
      input.count,
    );
    if (!terms.ok) throw refuse("InvalidValue", { field: terms.field, message: terms.message });

    const pendingKey = liveKeyOf(personId, strategy.id);
    const found = await tx
      .selectFrom("subscription_checkouts")
      .selectAll()
      .where("pending_key", "=", pendingKey)
      .executeTakeFirst();
    const current = found && (await expireIfDue(tx, found, nowMs));
    const stillPending = current !== undefined && current.pending_key !== null;
    // The subscription a pending checkout made at consent (no access until paid) is that checkout's:
    // it is answered, superseded or waited for below, never "Already subscribed".
    await refuseLiveReal(tx, personId, strategy.id, nowMs, stillPending ? current.subscription_id : null);
    if (current) {
      const sameTerms =
        current.billing_interval === input.interval &&
        current.billing_interval_count === input.count &&
        current.price_cents === terms.priceCents;
      if (current.pending_key !== null && sameTerms) return viewOf(tx, current);
      if (current.pending_key !== null && !(await move(tx, current, "supersede", nowMs))) {
        throw refuse("WrongState", {
          field: "StrategyId",
          message: `Checkout ${current.id} for this strategy is being paid; wait for its outcome`,
          meta: { IntentId: current.id },
        });
      }
    }
    const nonce = randomBytes(24).toString("base64url");
    const secret = await secretOf(tx);
    const inserted = await tx
      .insertInto("subscription_checkouts")
      .values({
        person_id: personId,
        strategy_id: strategy.id,
        status: "PendingCustomer",
        status_detail: STATUS_DETAILS.PendingCustomer,
        billing_interval: input.interval,
        billing_interval_count: input.count,
        price_cents: terms.priceCents,
        nonce,
        token_hash: hashOf(mac(secret, "page", nonce)),
        pending_key: pendingKey,
        subscription_id: null,
        payment_ref: null,
        created_at: nowMs,
        updated_at: nowMs,
        expires_at: nowMs + CHECKOUT_LIFETIME_MS,
      })
      // A concurrent create won the customer's pending place: its checkout is the answer.
      .onConflict((oc) => oc.column("pending_key").doNothing())
      .returningAll()
      .executeTakeFirst();
    const row =
      inserted ??
      (await tx
        .selectFrom("subscription_checkouts")
        .selectAll()
        .where("pending_key", "=", pendingKey)
        .executeTakeFirstOrThrow());
    return viewOf(tx, row);
  });
}

/** Refuses a customer who holds a live real subscription to the strategy, other than the one `ownOfPending` made. */
async function refuseLiveReal(
  tx: Tx,
  personId: number,
  strategyId: number,
  nowMs: number,
  ownOfPending: number | null,
): Promise<void> {
  const live = await liveSubscription(tx, personId, strategyId, nowMs);
  if (live?.kind === "real" && live.id !== ownOfPending) {
    throw refuse("AlreadyExists", {
      field: "StrategyId",
      message: "Already subscribed",
      meta: { SubscriptionId: live.id },
    });
  }
}

/** GetSubscriptionCheckoutStatus: only its customer and service admins see a checkout; to others it does not exist. */
export async function checkoutStatus(ctx: RequestContext, intentId: number): Promise<CheckoutView> {
  return withTransaction(ctx, async ({ tx }) => {
    const row = await tx.selectFrom("subscription_checkouts").selectAll().where("id", "=", intentId).executeTakeFirst();
    if (!row || (row.person_id !== ctx.caller.personId && !isServiceAdmin(ctx.caller))) {
      throw refuse("NotFound", { field: "IntentId", message: `No checkout ${intentId}` });
    }
    return viewOf(tx, await expireIfDue(tx, row, ctx.clock.nowMs()));
  });
}

/**
 * Moves a checkout by an event, if its status allows it and nobody moved it
 * first; ends the subscription it made when it finishes without one.
 */
async function move(
  tx: Tx,
  row: CheckoutRow,
  event: CheckoutEvent,
  nowMs: number,
  detail?: string,
  extra: Partial<Pick<CheckoutRow, "subscription_id" | "payment_ref">> = {},
): Promise<CheckoutRow | null> {
  const status = nextStatus(row.status, event);
  if (status === null) return null;
  const moved = await tx
    .updateTable("subscription_checkouts")
    .set({
      ...extra,
      status,
      status_detail: detail ?? STATUS_DETAILS[status],
      pending_key: isPending(status) ? row.pending_key : null,
      updated_at: nowMs,
    })
    .where("id", "=", row.id)
    .where("status", "=", row.status)
    .returningAll()
    .executeTakeFirst();
  if (!moved) return null;
  const subscriptionId = moved.subscription_id;
  if (subscriptionId !== null && (status === "Canceled" || status === "Expired" || status === "Superseded")) {
    await endSubscription(tx, subscriptionId, nowMs, nowMs, `checkout_${status.toLowerCase()}`);
  }
  return moved;
}

async function expireIfDue(tx: Tx, row: CheckoutRow, nowMs: number): Promise<CheckoutRow> {
  if (!awaitsCustomer(row.status) || nowMs < row.expires_at) return row;
  return (await move(tx, row, "expire", nowMs)) ?? row;
}

/** What the page shows: the checkout, its strategy and the form token its buttons carry. */
export interface CheckoutPage {
  readonly row: CheckoutRow;
  readonly strategyName: string;
  readonly formToken: string;
}

/** The checkout a page token opens (expired by now if due), or undefined for a token that opens none. */
export function checkoutPage(runtime: Runtime, token: string): Promise<CheckoutPage | undefined> {
  return transaction(runtime.storage, (tx) => readPage(tx, token, runtime.clock.nowMs()));
}

async function readPage(tx: Tx, token: string, nowMs: number): Promise<CheckoutPage | undefined> {
  const found = await tx
    .selectFrom("subscription_checkouts")
    .selectAll()
    .where("token_hash", "=", hashOf(token))
    .executeTakeFirst();
  if (!found) return undefined;
  const row = await expireIfDue(tx, found, nowMs);
  const strategy = await tx
    .selectFrom("strategies")
    .select("name")
    .where("id", "=", row.strategy_id)
    .executeTakeFirstOrThrow();
  return { row, strategyName: strategy.name, formToken: mac(await secretOf(tx), "form", row.nonce) };
}

/** Whether a form's token is the one its checkout's page carries. */
function checkFormToken(page: CheckoutPage, presented: string): void {
  const expected = Buffer.from(page.formToken);
  const given = Buffer.from(presented);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw refuse("Forbidden", { message: "The form is stale or not this checkout's: reload the page" });
  }
}

/** The customer declined on the page: Canceled, nothing charged. */
export async function declineCheckout(runtime: Runtime, token: string, formToken: string): Promise<void> {
  await transaction(runtime.storage, async (tx) => {
    const page = await readPage(tx, token, runtime.clock.nowMs());
    if (!page) throw refuse("NotFound", { message: "No such checkout" });
    checkFormToken(page, formToken);
    await move(tx, page.row, "cancel", runtime.clock.nowMs());
  });
}

/**
 * The customer consented and pays ("pay"), or finished the provider's further
 * step ("confirm"): the subscription is made (no access until paid), the
 * provider is asked for its first period, and what it answered is recorded.
 */
export async function payCheckout(
  runtime: Runtime & { readonly payments: PaymentProvider },
  token: string,
  formToken: string,
  input: { readonly event: "pay" | "confirm"; readonly consented: boolean; readonly paymentRef: string },
): Promise<void> {
  const claimed = await transaction(runtime.storage, async (tx) => {
    const nowMs = runtime.clock.nowMs();
    const page = await readPage(tx, token, nowMs);
    if (!page) throw refuse("NotFound", { message: "No such checkout" });
    checkFormToken(page, formToken);
    const { row } = page;
    if (row.status === "Processing") return move(tx, row, "resume", nowMs);
    if (input.event === "pay" && row.status === "PendingCustomer") {
      if (!input.consented) {
        throw refuse("MissingValue", { field: "Consent", message: "Tick the consent box to subscribe" });
      }
      // Claimed first: of two posts at once (a double click) only one makes the subscription.
      const paying = await move(tx, row, "pay", nowMs, undefined, { payment_ref: input.paymentRef });
      if (!paying) return null;
      const subscriptionId = await startPaidSubscription(tx, row, input.paymentRef, nowMs);
      await tx
        .updateTable("subscription_checkouts")
        .set({ subscription_id: subscriptionId })
        .where("id", "=", row.id)
        .execute();
      return { ...paying, subscription_id: subscriptionId };
    }
    return move(tx, row, input.event, nowMs);
  });
  if (!claimed || claimed.subscription_id === null) return;
  const subscription = await runtime.storage.db
    .selectFrom("subscriptions")
    .selectAll()
    .where("id", "=", claimed.subscription_id)
    .executeTakeFirstOrThrow();
  const strategy = await runtime.storage.db
    .selectFrom("strategies")
    .select("name")
    .where("id", "=", claimed.strategy_id)
    .executeTakeFirstOrThrow();
  // Recorded already by a request that resumed the same charge.
  const outcome: PaymentOutcome =
    subscription.charge_seq > 0
      ? { status: "settled", providerRef: "" }
      : await runtime.payments.charge({
          reference: chargeReference(subscription),
          paymentRef: claimed.payment_ref ?? input.paymentRef,
          amountCents: claimed.price_cents,
          currency: "USD",
          description: `Subscription to ${strategy.name}, every ${claimed.billing_interval_count} ${claimed.billing_interval}`,
        });
  await transaction(runtime.storage, async (tx) => {
    const nowMs = runtime.clock.nowMs();
    const row = await tx
      .selectFrom("subscription_checkouts")
      .selectAll()
      .where("id", "=", claimed.id)
      .executeTakeFirstOrThrow();
    if (row.status !== "Processing") return;
    const current = await tx
      .selectFrom("subscriptions")
      .selectAll()
      .where("id", "=", subscription.id)
      .executeTakeFirstOrThrow();
    if (outcome.status === "settled") {
      if (current.charge_seq === 0) await recordProviderCharges(tx, [current], [outcome], nowMs);
      await move(tx, row, "settled", nowMs);
    } else if (outcome.status === "declined") {
      await endSubscription(tx, current.id, nowMs, nowMs, "payment_declined");
      await move(tx, row, "declined", nowMs, `The payment was declined: ${outcome.reason}; nothing was charged`);
    } else {
      await move(tx, row, "action_required", nowMs, outcome.reason);
    }
  });
}

/**
 * The subscription a consent makes: real, direct, at the checkout's price and
 * terms, with no access until its first charge settles (paid until now). A
 * live simulated or paper subscription to the strategy is superseded.
 */
async function startPaidSubscription(tx: Tx, row: CheckoutRow, paymentRef: string, nowMs: number): Promise<number> {
  const live = await liveSubscription(tx, row.person_id, row.strategy_id, nowMs);
  if (live?.kind === "real") {
    throw refuse("AlreadyExists", { message: "Already subscribed", meta: { SubscriptionId: live.id } });
  }
  if (live) await endSubscription(tx, live.id, nowMs, nowMs, "superseded");
  const started = await startSubscription(tx, row.person_id, row.strategy_id, nowMs, {
    kind: "real",
    lane: "direct",
    site_id: null,
    platform_id: null,
    ended_at: null,
    price_cents: row.price_cents,
    base_price_cents: row.price_cents,
    markup_cents: 0,
    billing_interval: row.billing_interval,
    billing_interval_count: row.billing_interval_count,
    paid_until: nowMs,
    next_charge_at: null,
    next_charge_cents: row.price_cents,
    payment_ref: paymentRef,
  });
  if (!started.started) {
    throw refuse("AlreadyExists", { message: "Already subscribed", meta: { SubscriptionId: started.live.id } });
  }
  return started.row.id;
}
