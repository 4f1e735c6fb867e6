import assert from "node:assert/strict";
import { CONFIRMATION_NEEDED_NOTICE } from "../../src/services/autotrade-confirmations.js";
import { type Following, followingInNewAccount, settleAutotrade } from "./autotrade.js";
import type { CallResult, Population, TestService } from "./service.js";
import { until } from "./service.js";
import { placed, stockOrder } from "./trading.js";

/**
 * Copies held for the customer's confirmation: person B follows a strategy
 * of person A into an account whose setup has IsConfirmationNeeded (set over
 * SetAutotradeSettings), and the strategy trades.
 */

/** Until the copier's batches, the broker's answers and reports and the desk's writes are all done. */
export const settle = settleAutotrade;

export type Confirming = Following;

/** A strategy of person A followed by person B into a new account whose copies wait for confirmation. */
export async function confirming(service: TestService, p: Population, tag: string): Promise<Confirming> {
  const followed = await followingInNewAccount(service, p, `HOLD-${tag}`, {
    cash: "50000",
    strategyName: `Held ${tag}`,
  });
  const set = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
    key: p.keys.personB,
    body: { Account: followed.account, IsConfirmationNeeded: true },
  });
  assert.equal(set.status, 200, set.text);
  await settle(service);
  return followed;
}

/** The strategy buys (or sells) AAPL at the market; the copier and the desk have done their part after. */
export async function trade(
  service: TestService,
  p: Population,
  strategyId: number,
  side: "buy" | "sell",
  quantity: number,
): Promise<void> {
  await placed(service, p.keys.personA, stockOrder(strategyId, "AAPL", side, quantity));
  await settle(service);
}

/** The account's copies as stored. */
export const copiesOf = (service: TestService, account: string) =>
  service.storage.db
    .selectFrom("account_orders as o")
    .innerJoin("broker_accounts as b", "b.account_id", "o.account_id")
    .select(["o.idempotency_key", "o.quantity", "o.status", "o.awaiting_confirmation", "o.reason"])
    .where("b.account_number", "=", account)
    .orderBy("o.id")
    .execute();

/** Whether the simulated broker has an order under the key. */
export async function atBroker(service: TestService, key: string): Promise<boolean> {
  const row = await service.storage.db
    .selectFrom("sim_broker_orders")
    .select("status")
    .where("idempotency_key", "=", key)
    .executeTakeFirst();
  return row !== undefined;
}

/** The notices telling person B of copies held in the account, oldest first (they are written after the hold). */
export async function heldNotices(service: TestService, p: Population, account: string, atLeast = 1) {
  const read = () =>
    service.storage.db
      .selectFrom("customer_notices")
      .select(["message", "site_id"])
      .where("person_id", "=", p.people.personB)
      .where("kind", "=", CONFIRMATION_NEEDED_NOTICE)
      .where("message", "like", `% ${account} %`)
      .orderBy("id")
      .execute();
  await until(async () => (await read()).length >= atLeast);
  return read();
}

/** The page's address a notice gives. */
export function pathOf(message: string): string {
  const match = /\/Confirmations\/[A-Za-z0-9_-]{43}/.exec(message);
  assert.ok(match, `no page address in ${message}`);
  return match[0];
}

/** The page as the customer's browser gets it (no key). */
export const openPage = (service: TestService, path: string, server: "WL" | "GEN" = "GEN") =>
  service.call(server, "GET", path, { key: null });

/** The form token the page's forms carry. */
export function formTokenOf(html: string): string {
  const match = /name="form_token" value="([^"]+)"/.exec(html);
  assert.ok(match, `no form token in ${html}`);
  return match[1] as string;
}

/** Posts a Confirm or Discard form as a browser does (no API key, a urlencoded body). */
export const submit = (
  service: TestService,
  path: string,
  action: "confirm" | "discard",
  fields: { readonly form_token: string; readonly copy: string },
): Promise<CallResult> =>
  service.call("GEN", "POST", `${path}/${action}`, {
    key: null,
    rawBody: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
