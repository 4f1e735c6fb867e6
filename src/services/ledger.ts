import { sql } from "kysely";
import { refuse } from "../core/errors.js";
import { type Entry, entriesOf, reversalOf, type Transfer } from "../core/ledger.js";
import type { LedgerAccountKind, LedgerTransactionKind } from "../store/schema.js";
import type { Backend } from "../store/storage.js";
import { backendOf, type Tx } from "../store/transaction.js";

/**
 * The ledger in storage: accounts made on first use, transactions written
 * with all their entries at once, balances summed from entries. A
 * transaction's reference is unique: posting one twice (a retried charge, a
 * second process) writes nothing the second time.
 */

const kindOf = (ownerKey: string): LedgerAccountKind => ownerKey.split(":")[0] as LedgerAccountKind;

function ownerIds(ownerKey: string): { site_id: number | null; person_id: number | null } {
  const [kind, id] = ownerKey.split(":");
  if (kind === "house") return { site_id: Number(id), person_id: null };
  if (kind === "owner") return { site_id: null, person_id: Number(id) };
  return { site_id: null, person_id: null };
}

/** The ids of ledger accounts by owner key, made where missing. */
export async function accountIds(tx: Tx, ownerKeys: readonly string[], nowMs: number): Promise<Map<string, number>> {
  const keys = [...new Set(ownerKeys)];
  if (keys.length === 0) return new Map();
  await tx
    .insertInto("ledger_accounts")
    .values(keys.map((key) => ({ owner_key: key, kind: kindOf(key), ...ownerIds(key), created_at: nowMs })))
    .onConflict((oc) => oc.column("owner_key").doNothing())
    .execute();
  const rows = await tx
    .selectFrom("ledger_accounts")
    .select(["id", "owner_key"])
    .where("owner_key", "in", keys)
    .execute();
  return new Map(rows.map((row) => [row.owner_key, row.id]));
}

export interface Posting {
  readonly kind: LedgerTransactionKind;
  /** Unique when set: a posting with a reference already used writes nothing. */
  readonly reference: string | null;
  readonly subscriptionId: number | null;
  readonly memo: string | null;
  readonly transfers: readonly Transfer[];
}

/**
 * Writes postings with their entries in multi-row statements, each entry
 * carrying its account's balance after it. The accounts are locked first (on
 * PostgreSQL; SQLite's write transactions are serial), so balances run on
 * from what the last commit left. Answers, per posting, its transaction id,
 * or null where its reference was used already.
 */
export async function post(tx: Tx, postings: readonly Posting[], nowMs: number): Promise<(number | null)[]> {
  if (postings.length === 0) return [];
  const ids = await accountIds(
    tx,
    postings.flatMap((p) => p.transfers.flatMap((t) => [t.from, t.to])),
    nowMs,
  );
  await lockIds(tx, backendOf(tx), [...ids.values()]);
  const inserted = await tx
    .insertInto("ledger_transactions")
    .values(
      postings.map((p) => ({
        kind: p.kind,
        reference: p.reference,
        subscription_id: p.subscriptionId,
        memo: p.memo,
        created_at: nowMs,
      })),
    )
    .onConflict((oc) => oc.column("reference").doNothing())
    .returning(["id", "reference"])
    .execute();
  // Rows come back without their posting: references name them; postings without one are all inserted, in order.
  const byReference = new Map(inserted.filter((r) => r.reference !== null).map((r) => [r.reference, r.id]));
  const unreferenced = inserted.filter((r) => r.reference === null).map((r) => r.id);
  let next = 0;
  const transactionIds = postings.map((p) =>
    p.reference === null ? (unreferenced[next++] ?? null) : (byReference.get(p.reference) ?? null),
  );
  const running = await latestBalances(tx, [...ids.values()]);
  const entries = postings.flatMap((p, i) => {
    const transactionId = transactionIds[i];
    if (transactionId === null || transactionId === undefined) return [];
    return entriesOf(p.transfers).map((e: Entry) => {
      const accountId = ids.get(e.account) as number;
      const balance = (running.get(accountId) ?? 0) + e.cents;
      running.set(accountId, balance);
      return {
        transaction_id: transactionId,
        account_id: accountId,
        amount_cents: e.cents,
        balance_after_cents: balance,
      };
    });
  });
  for (let at = 0; at < entries.length; at += 500) {
    await tx
      .insertInto("ledger_entries")
      .values(entries.slice(at, at + 500))
      .execute();
  }
  return transactionIds.map((id) => id ?? null);
}

/**
 * The balance after each account's latest entry (accounts without entries are
 * absent): one index probe per account, on (account_id, id) backwards. A
 * grouped max(id) would read every entry of the accounts on both backends.
 */
async function latestBalances(tx: Tx, accountIds: readonly number[]): Promise<Map<number, number>> {
  if (accountIds.length === 0) return new Map();
  const rows = await tx
    .selectFrom("ledger_accounts as a")
    .select((eb) => [
      "a.id",
      eb
        .selectFrom("ledger_entries as e")
        .select("e.balance_after_cents")
        .whereRef("e.account_id", "=", "a.id")
        .orderBy("e.id", "desc")
        .limit(1)
        .as("balance"),
    ])
    .where("a.id", "in", accountIds)
    .execute();
  const result = new Map<number, number>();
  for (const row of rows) if (row.balance !== null) result.set(row.id, Number(row.balance));
  return result;
}

/** Balances in cents of the accounts named (0 for an account never used). */
export async function balances(tx: Tx, ownerKeys: readonly string[]): Promise<Map<string, number>> {
  const keys = [...new Set(ownerKeys)];
  const result = new Map(keys.map((key) => [key, 0]));
  if (keys.length === 0) return result;
  const accounts = await tx
    .selectFrom("ledger_accounts")
    .select(["id", "owner_key"])
    .where("owner_key", "in", keys)
    .execute();
  const latest = await latestBalances(
    tx,
    accounts.map((a) => a.id),
  );
  for (const account of accounts) result.set(account.owner_key, latest.get(account.id) ?? 0);
  return result;
}

/**
 * Holds the accounts' rows locked until the transaction ends (PostgreSQL), so
 * two charges of one house account are decided one after the other on what
 * the first left. SQLite's write transactions begin IMMEDIATE: serial already.
 */
export async function lockAccounts(
  tx: Tx,
  backend: Backend,
  ownerKeys: readonly string[],
  nowMs: number,
): Promise<void> {
  await lockIds(tx, backend, [...(await accountIds(tx, ownerKeys, nowMs)).values()]);
}

/** Locks in id order, so that two transactions locking overlapping accounts cannot deadlock. */
async function lockIds(tx: Tx, backend: Backend, ids: readonly number[]): Promise<void> {
  if (backend !== "postgres" || ids.length === 0) return;
  const sorted = [...ids].sort((a, b) => a - b);
  await sql`select id from ledger_accounts where id in (${sql.join(sorted)}) order by id for update`.execute(tx);
}

/** A charge refunded: the refund's transaction id (null when it was refunded already) and what the charge moved. */
export interface Refund {
  readonly transactionId: number | null;
  readonly cents: number;
}

/**
 * Refunds a charge: a `refund` posting that reverses its transfers, with the
 * reference refund:<charge reference>, so a charge is refunded at most once.
 */
export async function refundCharge(tx: Tx, chargeReference: string, nowMs: number): Promise<Refund> {
  const charge = await tx
    .selectFrom("ledger_transactions")
    .select(["id", "subscription_id"])
    .where("reference", "=", chargeReference)
    .where("kind", "=", "charge")
    .executeTakeFirst();
  if (!charge) throw refuse("NotFound", { message: `No charge ${chargeReference}` });
  const entries = await tx
    .selectFrom("ledger_entries as e")
    .innerJoin("ledger_accounts as a", "a.id", "e.account_id")
    .select(["a.owner_key", "e.amount_cents"])
    .where("e.transaction_id", "=", charge.id)
    .orderBy("e.id")
    .execute();
  // entriesOf writes each transfer as its two entries, taken then given, one after the other.
  const transfers: Transfer[] = [];
  for (let at = 0; at + 1 < entries.length; at += 2) {
    const [from, to] = [entries[at], entries[at + 1]] as [(typeof entries)[number], (typeof entries)[number]];
    transfers.push({ from: from.owner_key, to: to.owner_key, cents: Number(to.amount_cents) });
  }
  const [id] = await post(
    tx,
    [
      {
        kind: "refund",
        reference: `refund:${chargeReference}`,
        subscriptionId: charge.subscription_id,
        memo: null,
        transfers: reversalOf(transfers),
      },
    ],
    nowMs,
  );
  return { transactionId: id ?? null, cents: transfers.reduce((sum, transfer) => sum + transfer.cents, 0) };
}
