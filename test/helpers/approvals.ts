import assert from "node:assert/strict";
import { decimal } from "../../src/core/decimal.js";
import { insertBrokerAccount } from "../../src/services/broker-accounts.js";
import { newCustomer, newStrategy } from "./commerce.js";
import type { CallResult, Population, TestService } from "./service.js";
import { subscribed } from "./subscriptions.js";

/**
 * White-label autotrade approval scenarios: a customer of site A following a
 * strategy, the requests site A's administrator makes for them, their page
 * and the customer's brokerage account.
 */

/** The simulated broker (migration 0022). */
export const SIMULATED_BROKER = 1;

let accounts = 0;

/** A fresh customer of site A with a live real subscription to a fresh strategy, and an account number of theirs. */
export async function follower(service: TestService, p: Population) {
  const strategyId = await newStrategy(service, p.keys.wlAdminA, p.people.personA);
  const personId = await newCustomer(service, p.siteA);
  await subscribed(service, personId, strategyId, { kind: "real", lane: "free" });
  accounts += 1;
  return { strategyId, personId, account: `APPROVAL-${accounts}-${Math.random().toString(36).slice(2, 8)}` };
}

export type Follower = Awaited<ReturnType<typeof follower>>;

/** A StartAutotrade body for the follower: half scaling, stocks up to $25,000. */
export const startBody = (f: Follower, extra: Record<string, unknown> = {}) => ({
  Account: f.account,
  PersonId: f.personId,
  StrategyId: f.strategyId,
  BrokerId: SIMULATED_BROKER,
  ScalingPercentage: 50,
  EnableStocks: true,
  MaxStocksDollars: 25_000,
  ...extra,
});

/** Site A's administrator asks the follower to approve (StartAutotrade unless told). */
export function requestStart(
  service: TestService,
  p: Population,
  body: Record<string, unknown>,
  path = "/Autotrade/StartAutotrade",
): Promise<CallResult> {
  return service.call("WL", "POST", path, { key: p.keys.wlAdminA, body });
}

/** The request made, as the answer says. */
export async function requested(service: TestService, p: Population, body: Record<string, unknown>, path?: string) {
  const r = await requestStart(service, p, body, path);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.Results.length, 1, r.text);
  return r.json.Results[0];
}

/** GetAutotradeApprovalStatus by site A's administrator. */
export async function approvalStatus(service: TestService, p: Population, id: number) {
  const r = await service.call("WL", "GET", "/Autotrade/GetAutotradeApprovalStatus", {
    key: p.keys.wlAdminA,
    query: { ApprovalRequestId: String(id) },
  });
  assert.equal(r.status, 200, r.text);
  return r.json.Results[0];
}

/** The page at ApprovalUrl, as the customer's browser gets it (no key). */
export const openPage = (service: TestService, url: string) => service.call("WL", "GET", url, { key: null });

/** The form token the page's forms carry. */
export function formTokenOf(html: string): string {
  const match = /name="form_token" value="([^"]+)"/.exec(html);
  assert.ok(match, `no form token in ${html}`);
  return match[1] as string;
}

/** Posts one of the page's forms as a browser does (no API key, a urlencoded body). */
export function submitForm(
  service: TestService,
  url: string,
  action: "approve" | "decline",
  fields: Record<string, string>,
): Promise<CallResult> {
  return service.call("WL", "POST", `${url}/${action}`, {
    key: null,
    rawBody: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}

/** Opens the page and posts `action` with its form token (and consent to approve); asserts the 303 back. */
export async function answerOnPage(service: TestService, url: string, action: "approve" | "decline") {
  const page = await openPage(service, url);
  assert.equal(page.status, 200, page.text);
  const fields: Record<string, string> = { form_token: formTokenOf(page.text) };
  if (action === "approve") fields.consent = "yes";
  const r = await submitForm(service, url, action, fields);
  assert.equal(r.status, 303, r.text);
  assert.equal(r.headers.location, url);
}

/** The follower's account at the simulated broker, as the broker's enablement records it. */
export async function accountArrives(service: TestService, f: Follower, cash = "100000"): Promise<number> {
  return insertBrokerAccount(
    service.storage.db,
    { personId: f.personId, brokerId: SIMULATED_BROKER, account: f.account, cash: decimal(cash), paper: false },
    service.app.runtime.clock.nowMs(),
  );
}

/** A webhook endpoint of site A, straight in storage (registering it is the webhooks' operation). */
export async function siteEndpoint(service: TestService, p: Population): Promise<number> {
  const made = await service.storage.db
    .insertInto("webhook_endpoints")
    .values({
      site_id: p.siteA,
      url: `https://hooks.example.com/${Math.random().toString(36).slice(2)}`,
      secret: "whsec_test",
      live_key: null,
      created_at: service.app.runtime.clock.nowMs(),
      deleted_at: null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return made.id;
}

/** The events owed to the endpoint about the request, by id. */
export async function approvalEvents(service: TestService, endpointId: number, approvalId: number) {
  const rows = await service.storage.db
    .selectFrom("webhook_deliveries")
    .select(["event_id", "event_type", "payload"])
    .where("endpoint_id", "=", endpointId)
    .where("event_id", "like", `autotrade_approval.${approvalId}.%`)
    .orderBy("id")
    .execute();
  return rows.map((row) => ({ id: row.event_id, type: row.event_type, data: JSON.parse(row.payload).data }));
}

/** The follower's setups. */
export const setupsOf = (service: TestService, f: Follower) =>
  service.storage.db
    .selectFrom("autotrade_setups")
    .selectAll()
    .where("person_id", "=", f.personId)
    .where("strategy_id", "=", f.strategyId)
    .execute();
