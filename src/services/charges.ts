import { sql } from "kysely";
import { type BillingInterval, periodEnd, retryAt } from "../core/billing.js";
import { covers, houseAccount, ownerAccount, PROVIDER_ACCOUNT, type Transfer } from "../core/ledger.js";
import type { Backend } from "../store/storage.js";
import type { Tx } from "../store/transaction.js";
import { balances, lockAccounts, type Posting, post } from "./ledger.js";
import type { PaymentOutcome } from "./payments.js";
import type { SubscriptionRow } from "./subscription-rows.js";

/**
 * Charging one period of subscriptions: a resold one from its white-label
 * site's house account, a direct one with what the payment provider settled.
 * Each period's charge has the ledger reference charge:<subscription>:<n>, n
 * counting the subscription's settled charges, so a period is never charged
 * twice, by a retry or by another process: the second posting writes nothing,
 * and the subscription moves on only from the charge count it was read at.
 */

export interface ChargeResult {
  readonly subscriptionId: number;
  readonly settled: boolean;
  readonly cents: number;
  /** Why it did not settle. */
  readonly reason?: string;
  /** The subscription was given up: its retries are spent. */
  readonly givenUp?: boolean;
}

export const chargeReference = (row: Pick<SubscriptionRow, "id" | "charge_seq">): string =>
  `charge:${row.id}:${row.charge_seq + 1}`;

/**
 * The payment provider's key of one attempt at a period's charge: a declined
 * attempt answers declined to the same key for ever (as processors answer an
 * idempotency key), so each retry after a failure is an attempt of its own,
 * while the same attempt asked again after a crash gets its first answer.
 */
export const attemptReference = (row: Pick<SubscriptionRow, "id" | "charge_seq" | "failure_count">): string =>
  `${chargeReference(row)}:attempt:${row.failure_count + 1}`;

export const INSUFFICIENT_FUNDS = "Insufficient house account funds";

/** What the next charge of a subscription is. */
export const chargeCents = (row: SubscriptionRow): number => row.next_charge_cents ?? row.price_cents;

/**
 * Charges resold subscriptions to their sites' house accounts, in the
 * caller's transaction: each house pays while its balance covers the charge
 * (or without limit where the site allows negative billing), decided in
 * order on what the charges before left.
 */
export async function chargeHouses(
  tx: Tx,
  backend: Backend,
  rows: readonly SubscriptionRow[],
  nowMs: number,
): Promise<ChargeResult[]> {
  if (rows.length === 0) return [];
  const siteIds = [...new Set(rows.map((row) => row.site_id as number))];
  const houses = siteIds.map(houseAccount);
  await lockAccounts(tx, backend, houses, nowMs);
  const [held, sites, owners] = await Promise.all([
    balances(tx, houses),
    tx.selectFrom("sites").select(["id", "allow_negative_billing"]).where("id", "in", siteIds).execute(),
    ownersOf(tx, rows),
  ]);
  const negativeAllowed = new Map(sites.map((site) => [site.id, site.allow_negative_billing === 1]));
  const outcomes: PaymentOutcome[] = rows.map((row) => {
    const house = houseAccount(row.site_id as number);
    const balance = held.get(house) ?? 0;
    const cents = chargeCents(row);
    if (!covers(balance, cents, negativeAllowed.get(row.site_id as number) ?? false)) {
      return { status: "declined", reason: INSUFFICIENT_FUNDS };
    }
    held.set(house, balance - cents);
    return { status: "settled", providerRef: house };
  });
  return settle(tx, rows, outcomes, owners, nowMs, (row) => houseAccount(row.site_id as number));
}

/**
 * Records what the payment provider answered for direct subscriptions'
 * charges (asked before, outside any transaction): settled ones move money
 * from the provider to the owner; the others count a failure.
 */
export async function recordProviderCharges(
  tx: Tx,
  rows: readonly SubscriptionRow[],
  outcomes: readonly PaymentOutcome[],
  nowMs: number,
): Promise<ChargeResult[]> {
  if (rows.length === 0) return [];
  return settle(tx, rows, outcomes, await ownersOf(tx, rows), nowMs, () => PROVIDER_ACCOUNT);
}

async function ownersOf(tx: Tx, rows: readonly SubscriptionRow[]): Promise<Map<number, number>> {
  const strategies = await tx
    .selectFrom("strategies")
    .select(["id", "owner_person_id"])
    .where("id", "in", [...new Set(rows.map((row) => row.strategy_id))])
    .execute();
  return new Map(strategies.map((s) => [s.id, s.owner_person_id]));
}

async function settle(
  tx: Tx,
  rows: readonly SubscriptionRow[],
  outcomes: readonly PaymentOutcome[],
  owners: ReadonlyMap<number, number>,
  nowMs: number,
  payer: (row: SubscriptionRow) => string,
): Promise<ChargeResult[]> {
  const settledRows = rows.filter((_, i) => outcomes[i]?.status === "settled");
  const postings: Posting[] = settledRows.map((row) => {
    const transfer: Transfer = {
      from: payer(row),
      to: ownerAccount(owners.get(row.strategy_id) as number),
      cents: chargeCents(row),
    };
    return {
      kind: "charge",
      reference: chargeReference(row),
      subscriptionId: row.id,
      memo: null,
      transfers: [transfer],
    };
  });
  await post(tx, postings, nowMs);
  const results: ChargeResult[] = [];
  const settledTerms: SettledTerm[] = [];
  for (const [i, row] of rows.entries()) {
    const outcome = outcomes[i] as PaymentOutcome;
    const cents = chargeCents(row);
    if (outcome.status === "settled") {
      settledTerms.push(settledTerm(row, cents));
      results.push({ subscriptionId: row.id, settled: true, cents });
    } else {
      const givenUp = await recordFailed(tx, row, outcome.reason, nowMs);
      results.push({ subscriptionId: row.id, settled: false, cents, reason: outcome.reason, givenUp });
    }
  }
  for (let at = 0; at < settledTerms.length; at += UPDATE_ROWS) {
    await recordSettled(tx, settledTerms.slice(at, at + UPDATE_ROWS), nowMs);
  }
  return results;
}

interface SettledTerm {
  readonly id: number;
  /** The charge count the subscription was read at: it moves on only from there. */
  readonly seq: number;
  readonly paidUntil: number;
  readonly nextAt: number | null;
  readonly nextCents: number | null;
  readonly cents: number;
}

/** The period paid moves the term on; the next charge falls at its end unless the subscription stops there. */
function settledTerm(row: SubscriptionRow, cents: number): SettledTerm {
  const paidUntil = periodEnd(
    row.started_at,
    row.billing_interval as BillingInterval,
    row.billing_interval_count ?? 1,
    row.charge_seq + 1,
  );
  const stops = row.cancel_pending === 1 || row.ended_at !== null;
  return {
    id: row.id,
    seq: row.charge_seq,
    paidUntil,
    nextAt: stops ? null : paidUntil,
    nextCents: stops ? null : row.price_cents,
    cents,
  };
}

const UPDATE_ROWS = 500;

/** Subscriptions whose charge settled, updated in one statement (a round trip per row is most of a pass on PostgreSQL). */
async function recordSettled(tx: Tx, terms: readonly SettledTerm[], nowMs: number): Promise<void> {
  if (terms.length === 0) return;
  const bigint = (value: number | null) => sql`cast(${value} as bigint)`;
  const values = sql.join(
    terms.map(
      (t) =>
        sql`(${bigint(t.id)}, ${bigint(t.seq)}, ${bigint(t.paidUntil)}, ${bigint(t.nextAt)}, ${bigint(t.nextCents)}, ${bigint(t.cents)})`,
    ),
  );
  await sql`with settled (id, seq, paid_until, next_at, next_cents, cents) as (values ${values})
    update subscriptions set
      charge_seq = subscriptions.charge_seq + 1,
      paid_until = settled.paid_until,
      next_charge_at = settled.next_at,
      next_charge_cents = settled.next_cents,
      last_charge_at = ${bigint(nowMs)},
      last_charge_cents = settled.cents,
      failure_count = 0,
      billing_claimed_until = null
    from settled
    where subscriptions.id = settled.id and subscriptions.charge_seq = settled.seq`.execute(tx);
}

/** A failed charge is retried later; once the retries are spent the subscription ends with what was paid. */
async function recordFailed(tx: Tx, row: SubscriptionRow, reason: string, nowMs: number): Promise<boolean> {
  const failures = row.failure_count + 1;
  const retry = retryAt(nowMs, failures);
  const endsAt = Math.max(row.paid_until ?? nowMs, nowMs);
  await tx
    .updateTable("subscriptions")
    .set({
      failure_count: failures,
      last_failure_reason: reason,
      last_failure_at: nowMs,
      next_charge_at: retry,
      billing_claimed_until: null,
      ...(retry === null
        ? {
            ended_at: endsAt,
            end_reason: "billing_failed",
            next_charge_cents: null,
            ...(endsAt <= nowMs ? { live_key: null } : {}),
          }
        : {}),
    })
    .where("id", "=", row.id)
    .where("charge_seq", "=", row.charge_seq)
    .execute();
  return retry === null;
}
