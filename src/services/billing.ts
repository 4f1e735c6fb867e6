import type { Tx } from "../store/transaction.js";
import { transaction } from "../store/transaction.js";
import { attemptReference, type ChargeResult, chargeCents, chargeHouses, recordProviderCharges } from "./charges.js";
import type { PaymentOutcome, PaymentProvider } from "./payments.js";
import type { Runtime } from "./runtime.js";
import type { SubscriptionRow } from "./subscription-rows.js";

/**
 * The recurring biller's pass: every charge due on the service clock is
 * made. Resold subscriptions are charged to their house accounts in batches,
 * each batch one transaction (a crash rolls the batch back whole). Direct
 * ones ask the payment provider outside any transaction: a batch is claimed
 * first (real time, so a standing sandbox clock cannot hold a claim forever),
 * the provider asked with each period's reference, and the answers recorded;
 * a biller that dies after asking leaves the claim to expire, and the next
 * asks again with the same references, which the provider settles once.
 * Several billers (processes) may run at once: PostgreSQL hands each its own
 * rows (SKIP LOCKED), and a period's charge is written once whatever happens.
 */

export interface BillingRuntime extends Runtime {
  readonly payments: PaymentProvider;
}

export interface BillingPass {
  readonly charged: number;
  readonly settled: number;
  readonly failed: number;
  readonly givenUp: number;
}

export interface BillingOptions {
  /** Subscriptions charged per transaction (default 500). */
  readonly batch?: number;
  /** Provider requests in flight at once (default 16). */
  readonly concurrency?: number;
  /** How long a claim on direct charges holds, real milliseconds (default 5 minutes). */
  readonly claimMs?: number;
}

const EMPTY: BillingPass = { charged: 0, settled: 0, failed: 0, givenUp: 0 };

export async function billDue(runtime: BillingRuntime, options: BillingOptions = {}): Promise<BillingPass> {
  let pass = EMPTY;
  // A sweep charges each due subscription once; one that is due again after it (a clock moved
  // past several periods) is charged by the next sweep.
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    const swept = tally(tally(EMPTY, await sweepHouses(runtime, options)), await sweepDirect(runtime, options));
    pass = {
      charged: pass.charged + swept.charged,
      settled: pass.settled + swept.settled,
      failed: pass.failed + swept.failed,
      givenUp: pass.givenUp + swept.givenUp,
    };
    if (swept.charged === 0) break;
  }
  return pass;
}

/** Sweeps in a pass at most: a clock moved years on catches up over passes, not in one. */
const MAX_SWEEPS = 60;

/** Where a sweep has got to, in due order: it reads on from there (past rows it updated, dead or not). */
interface SweepCursor {
  readonly at: number;
  readonly id: number;
}

const cursorAfter = (rows: readonly SubscriptionRow[]): SweepCursor | null => {
  const last = rows.at(-1);
  return last ? { at: last.next_charge_at as number, id: last.id } : null;
};

async function sweepHouses(runtime: BillingRuntime, options: BillingOptions): Promise<ChargeResult[]> {
  const batch = options.batch ?? 500;
  const all: ChargeResult[] = [];
  let after: SweepCursor | null = null;
  for (;;) {
    const { results, next } = await transaction(runtime.storage, async (tx) => {
      const nowMs = runtime.clock.nowMs();
      const due = await dueRows(runtime, tx, "resale", nowMs, batch, after);
      return { results: await chargeHouses(tx, runtime.storage.backend, due, nowMs), next: cursorAfter(due) };
    });
    all.push(...results);
    if (results.length < batch || next === null) return all;
    after = next;
  }
}

async function sweepDirect(runtime: BillingRuntime, options: BillingOptions): Promise<ChargeResult[]> {
  const batch = options.batch ?? 500;
  const all: ChargeResult[] = [];
  let after: SweepCursor | null = null;
  for (;;) {
    const claimed = await claimDirect(runtime, batch, options.claimMs ?? 300_000, after);
    if (claimed.length === 0) return all;
    after = cursorAfter(claimed);
    const outcomes = await askProvider(runtime.payments, claimed, options.concurrency ?? 16);
    const results = await transaction(runtime.storage, async (tx) => {
      // Only rows still at the charge count they were claimed at: another biller may have settled them since.
      // Locked (PostgreSQL) so that a stop landing meanwhile waits, and what is written starts from it.
      let read = tx
        .selectFrom("subscriptions")
        .selectAll()
        .where(
          "id",
          "in",
          claimed.map((row) => row.id),
        );
      if (runtime.storage.backend === "postgres") read = read.forUpdate();
      const current = await read.execute();
      const unchanged = new Map(current.map((row) => [row.id, row]));
      const rows: SubscriptionRow[] = [];
      const answers: PaymentOutcome[] = [];
      for (const [i, row] of claimed.entries()) {
        const now = unchanged.get(row.id);
        const outcome = outcomes[i];
        if (outcome && now && now.charge_seq === row.charge_seq) {
          rows.push(now);
          answers.push(outcome);
        }
      }
      return recordProviderCharges(tx, rows, answers, runtime.clock.nowMs());
    });
    all.push(...results);
    if (claimed.length < batch) return all;
  }
}

function tally(pass: BillingPass, results: readonly ChargeResult[]): BillingPass {
  let { charged, settled, failed, givenUp } = pass;
  for (const result of results) {
    charged += 1;
    if (result.settled) settled += 1;
    else failed += 1;
    if (result.givenUp) givenUp += 1;
  }
  return { charged, settled, failed, givenUp };
}

/** Due subscriptions of a lane, oldest due first; on PostgreSQL locked for this transaction, skipping others' locks. */
async function dueRows(
  runtime: BillingRuntime,
  tx: Tx,
  lane: "resale" | "direct",
  nowMs: number,
  limit: number,
  after: SweepCursor | null,
): Promise<SubscriptionRow[]> {
  let query = tx
    .selectFrom("subscriptions")
    .selectAll()
    .where("next_charge_at", "<=", nowMs)
    .where("lane", "=", lane)
    .orderBy("next_charge_at")
    .orderBy("id")
    .limit(limit);
  if (lane === "direct") {
    const realNow = runtime.clock.realNowMs();
    query = query.where((eb) =>
      eb.or([eb("billing_claimed_until", "is", null), eb("billing_claimed_until", "<", realNow)]),
    );
  }
  if (after) {
    const { at, id } = after;
    // A row value, which both backends seek to in the index (an OR of the two cases is a scan on SQLite).
    query = query.where((eb) => eb(eb.refTuple("next_charge_at", "id"), ">", eb.tuple(at, id)));
  }
  if (runtime.storage.backend === "postgres") query = query.forUpdate().skipLocked();
  return query.execute();
}

async function claimDirect(
  runtime: BillingRuntime,
  limit: number,
  claimMs: number,
  after: SweepCursor | null,
): Promise<SubscriptionRow[]> {
  return transaction(runtime.storage, async (tx) => {
    const due = await dueRows(runtime, tx, "direct", runtime.clock.nowMs(), limit, after);
    if (due.length === 0) return [];
    const until = runtime.clock.realNowMs() + claimMs;
    await tx
      .updateTable("subscriptions")
      .set({ billing_claimed_until: until })
      .where(
        "id",
        "in",
        due.map((row) => row.id),
      )
      .execute();
    return due.map((row) => ({ ...row, billing_claimed_until: until }));
  });
}

/** The provider's answers, in the rows' order, with a bounded number of requests in flight. */
async function askProvider(
  payments: PaymentProvider,
  rows: readonly SubscriptionRow[],
  concurrency: number,
): Promise<(PaymentOutcome | undefined)[]> {
  const outcomes: (PaymentOutcome | undefined)[] = new Array(rows.length);
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const i = next++;
      const row = rows[i] as SubscriptionRow;
      outcomes[i] = await payments
        .charge({
          reference: attemptReference(row),
          paymentRef: row.payment_ref ?? "",
          amountCents: chargeCents(row),
          currency: "USD",
          description: `Subscription ${row.guid}`,
        })
        // Unanswered (the provider is down): nothing is known, so nothing is recorded; the claim runs out
        // and a later pass asks again with the same reference.
        .catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, worker));
  return outcomes;
}
