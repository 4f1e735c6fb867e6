import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { sql } from "kysely";
import type { ControllableClock } from "../core/clock.js";
import { refuse } from "../core/errors.js";
import type { NewAccountOrder } from "../store/journal/batch.js";
import { settingOrInit } from "../store/settings.js";
import type { Storage } from "../store/storage.js";
import { type Tx, transaction } from "../store/transaction.js";

/**
 * Copies held for the customer's confirmation (a setup with
 * IsConfirmationNeeded): the customer is told with a notice carrying the
 * address of a page listing the account's held copies, where each is
 * confirmed (sent to the broker) or discarded. One link per brokerage
 * account, made or refreshed whenever a copy is held; it is spent once
 * nothing waits any more. As the approval page's, the token and the form
 * token are HMACs of the link's nonce under a service secret; the table keeps
 * the token's sha256. The held copies themselves live in the desk.
 */

/** What the page needs of the desk (src/engine/autotrade/desk.ts). */
export interface ConfirmationDesk {
  heldForConfirmation(accountId: number): NewAccountOrder[];
  decide(accountId: number, key: string, confirmed: boolean): boolean;
}

export interface ConfirmationDeps {
  readonly storage: Storage;
  readonly clock: Pick<ControllableClock, "nowMs">;
}

/** The page's address on the customer's server (WL for a white-label customer, GEN otherwise). */
export const confirmationPath = (token: string): string => `/Confirmations/${token}`;

/** How long a link opens the page after the last copy held (a new hold extends it). */
export const CONFIRMATION_LINK_LIFETIME_MS = 7 * 86_400_000;

/** The kind of the notice telling the customer a copy waits (a mail adapter delivers notices). */
export const CONFIRMATION_NEEDED_NOTICE = "autotrade_confirmation_needed";

const SECRET_SETTING = "confirmation_secret";

const secretOf = (db: Tx) => settingOrInit(db, SECRET_SETTING, randomBytes(32).toString("base64url"));

const mac = (secret: string, purpose: string, nonce: string) =>
  createHmac("sha256", secret).update(`${purpose}:${nonce}`).digest("base64url");

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * Copies of the account were stored held: its link is made (or refreshed
 * while still live) and the customer gets a notice with the page's address,
 * in one transaction.
 */
export async function noteHeldCopies(
  deps: ConfirmationDeps,
  accountId: number,
  rows: readonly NewAccountOrder[],
): Promise<void> {
  await transaction(deps.storage, async (tx) => {
    const nowMs = deps.clock.nowMs();
    const expiresAt = nowMs + CONFIRMATION_LINK_LIFETIME_MS;
    const refreshLive = async () =>
      (
        await tx
          .updateTable("confirmation_links")
          .set({ holds: sql`holds + 1`, expires_at: expiresAt })
          .where("account_id", "=", accountId)
          .where("used_at", "is", null)
          .where("expires_at", ">", nowMs)
          .returning("nonce")
          .executeTakeFirst()
      )?.nonce;
    let nonce = await refreshLive();
    if (nonce === undefined) {
      // No live link: a new token, so an address spent or expired never opens the page again.
      const fresh = randomBytes(24).toString("base64url");
      const token_hash = hashOf(mac(await secretOf(tx), "page", fresh));
      const made = await tx
        .insertInto("confirmation_links")
        .values({
          account_id: accountId,
          token_hash,
          nonce: fresh,
          holds: 1,
          created_at: nowMs,
          expires_at: expiresAt,
          used_at: null,
        })
        .onConflict((oc) =>
          oc
            .column("account_id")
            .doUpdateSet({
              token_hash,
              nonce: fresh,
              holds: sql`confirmation_links.holds + 1`,
              created_at: nowMs,
              expires_at: expiresAt,
              used_at: null,
            })
            // Only a dead link is replaced: a hold noted at the same time in another transaction
            // may have made a live one, whose address its notice already gave.
            .where((eb) =>
              eb.or([
                eb("confirmation_links.used_at", "is not", null),
                eb("confirmation_links.expires_at", "<=", nowMs),
              ]),
            ),
        )
        .returning("nonce")
        .executeTakeFirst();
      nonce = made?.nonce ?? (await refreshLive());
      if (nonce === undefined) throw new Error(`account ${accountId}: no live confirmation link after making one`);
    }
    const account = await tx
      .selectFrom("broker_accounts as b")
      .innerJoin("persons as p", "p.id", "b.person_id")
      .select(["b.person_id", "b.account_number", "p.white_label_site_id"])
      .where("b.account_id", "=", accountId)
      .executeTakeFirstOrThrow();
    const names = await strategyNames(
      tx,
      rows.map((row) => row.strategy_id),
    );
    const what = rows.map((row) => `${row.side} ${row.quantity} ${row.symbol} (${names.get(row.strategy_id)})`);
    const path = confirmationPath(mac(await secretOf(tx), "page", nonce));
    await tx
      .insertInto("customer_notices")
      .values({
        person_id: account.person_id,
        site_id: account.white_label_site_id,
        kind: CONFIRMATION_NEEDED_NOTICE,
        message: `Autotrade is holding ${rows.length === 1 ? "a copy" : `${rows.length} copies`} in account ${account.account_number} for your confirmation: ${what.join(", ")}. Confirm or discard at ${path}`,
        created_at: nowMs,
      })
      .execute();
  });
}

async function strategyNames(tx: Tx, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await tx
    .selectFrom("strategies")
    .select(["id", "name"])
    .where("id", "in", [...new Set(ids)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** A held copy as the page lists it. */
export interface HeldCopy {
  readonly key: string;
  readonly strategyName: string;
  readonly symbol: string;
  readonly side: string;
  readonly quantity: string;
  readonly orderType: string;
  readonly limitPrice: string | null;
  readonly stopPrice: string | null;
  readonly heldAtMs: number;
}

/** What a token opens: a live link with its account's held copies, or why it opens nothing. */
export type ConfirmationPage =
  | {
      readonly state: "live";
      readonly accountId: number;
      readonly account: string;
      readonly brokerName: string;
      readonly copies: readonly HeldCopy[];
      readonly formToken: string;
      /** Holds seen when read: the link is marked spent only if none came since. */
      readonly holds: number;
    }
  | { readonly state: "used" | "expired" };

/** The page a token opens, or undefined for a token that opens none. */
export function confirmationPage(
  deps: ConfirmationDeps,
  desk: ConfirmationDesk,
  token: string,
): Promise<ConfirmationPage | undefined> {
  return transaction(deps.storage, (tx) => readPage(tx, desk, token, deps.clock.nowMs()));
}

async function readPage(
  tx: Tx,
  desk: ConfirmationDesk,
  token: string,
  nowMs: number,
): Promise<ConfirmationPage | undefined> {
  const link = await tx
    .selectFrom("confirmation_links as l")
    .innerJoin("broker_accounts as b", "b.account_id", "l.account_id")
    .innerJoin("brokers as br", "br.id", "b.broker_id")
    .select(["l.account_id", "l.nonce", "l.holds", "l.expires_at", "l.used_at", "b.account_number", "br.name"])
    .where("l.token_hash", "=", hashOf(token))
    .executeTakeFirst();
  if (!link) return undefined;
  if (link.used_at !== null) return { state: "used" };
  if (link.expires_at <= nowMs) return { state: "expired" };
  const held = desk.heldForConfirmation(link.account_id);
  const names = await strategyNames(
    tx,
    held.map((row) => row.strategy_id),
  );
  return {
    state: "live",
    accountId: link.account_id,
    account: link.account_number,
    brokerName: link.name,
    copies: held.map((row) => ({
      key: row.idempotency_key,
      strategyName: names.get(row.strategy_id) ?? `Strategy ${row.strategy_id}`,
      symbol: row.symbol,
      side: row.side,
      quantity: row.quantity,
      orderType: row.order_type,
      limitPrice: row.limit_price,
      stopPrice: row.stop_price,
      heldAtMs: row.created_at,
    })),
    formToken: mac(await secretOf(tx), "form", link.nonce),
    holds: link.holds,
  };
}

/** Why a link opens nothing, as the customer reads it. */
export const LINK_STATES = {
  used: "Every copy this link showed has been confirmed or discarded: the link is spent.",
  expired: "This link has expired.",
} as const;

/**
 * The customer confirmed or discarded one held copy of the token's account
 * (only that account's copies are reachable). Refused: a link that opens
 * nothing, a stale form, a copy that no longer waits (sent, discarded, ended,
 * or not this account's). Once nothing waits, the link is spent.
 */
export async function decideHeldCopy(
  deps: ConfirmationDeps,
  desk: ConfirmationDesk,
  token: string,
  decision: { readonly formToken: string; readonly key: string; readonly confirmed: boolean },
): Promise<void> {
  const page = await confirmationPage(deps, desk, token);
  if (!page) throw refuse("NotFound", { message: "This link opens no confirmation page" });
  if (page.state !== "live") throw refuse("WrongState", { message: LINK_STATES[page.state] });
  const expected = Buffer.from(page.formToken);
  const given = Buffer.from(decision.formToken);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw refuse("Forbidden", { message: "The form is stale or not this page's: reload the page" });
  }
  if (!desk.decide(page.accountId, decision.key, decision.confirmed)) {
    throw refuse("WrongState", {
      field: "Copy",
      message: "That copy no longer waits for your confirmation: it was already confirmed, discarded or ended",
    });
  }
  if (desk.heldForConfirmation(page.accountId).length > 0) return;
  await deps.storage.db
    .updateTable("confirmation_links")
    .set({ used_at: deps.clock.nowMs() })
    .where("account_id", "=", page.accountId)
    .where("holds", "=", page.holds)
    .where("used_at", "is", null)
    .execute();
}
