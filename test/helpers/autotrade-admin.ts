import assert from "node:assert/strict";
import { decimal } from "../../src/core/decimal.js";
import { setAccountApprovalRequired } from "../../src/services/geo-approvals.js";
import { createPerson } from "../../src/services/people.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { follow, newAccountNumber, SIMULATED_BROKER, startAutotrade } from "./autotrade.js";
import { ADMIN_KEY, type CallResult, type TestService } from "./service.js";

/** Autotrade administration scenarios (issue 14): reads as clients send them, people on geo-sites, approvals. */

/** A query as a client sends it: every value as text. */
export const queryOf = (values: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(values).map(([name, value]) => [name, String(value)]));

/** GET /Autotrade/<operation> as `key`. */
export const getAutotrade = (
  service: TestService,
  server: "WL" | "GEN" | "GEO",
  operation: string,
  key: string,
  values: Record<string, unknown> = {},
): Promise<CallResult> => service.call(server, "GET", `/Autotrade/${operation}`, { key, query: queryOf(values) });

let members = 0;

/** A person who belongs to the site: a white-label site's customer, or a geo-site's direct member. */
export async function memberOf(service: TestService, siteId: number, firstName = "Member"): Promise<number> {
  members += 1;
  const { personId } = await createPerson(service.app.runtime, {
    email: `admin.member${members}.${Math.random().toString(36).slice(2, 8)}@example.com`,
    firstName,
    lastName: `Holder${members}`,
    role: "person",
    siteId,
  });
  return personId;
}

/** The geo-site requires (or not) that its members' live accounts be approved, as the operator CLI sets it. */
export const requireApproval = (service: TestService, geoSiteId: number, required: boolean): Promise<void> =>
  setAccountApprovalRequired(service.app.runtime, geoSiteId, required);

/** POST (add) or DELETE an approval on GEO as `key`. */
export const approval = (
  service: TestService,
  method: "POST" | "DELETE",
  key: string,
  values: Record<string, unknown>,
  kind: "ApprovedAutotradeAccount" | "ApprovedBrokerTransmitAccount" = "ApprovedAutotradeAccount",
): Promise<CallResult> =>
  service.call(
    "GEO",
    method,
    `/Autotrade/${kind}`,
    method === "POST" ? { key, body: values } : { key, query: queryOf(values) },
  );

/** A new account of the person at the simulated broker (and at the service), worth $50,000. */
export async function openedAccount(service: TestService, personId: number, paper = false): Promise<string> {
  const account = newAccountNumber();
  await openSimulatedBrokerAccount(service.app.runtime, {
    personId,
    brokerId: SIMULATED_BROKER,
    account,
    cash: decimal("50000"),
    paper,
  });
  return account;
}

/** The person follows the strategy and autotrades its stocks in a new account at the simulated broker. */
export async function autotradingAtBroker(
  service: TestService,
  personId: number,
  strategyId: number,
  options: { readonly extra?: Record<string, unknown>; readonly paper?: boolean } = {},
): Promise<string> {
  const account = await openedAccount(service, personId, options.paper);
  await follow(service, personId, strategyId);
  const started = await startAutotrade(service, ADMIN_KEY, {
    Account: account,
    PersonId: personId,
    StrategyId: strategyId,
    EnableStocks: true,
    ...options.extra,
  });
  assert.equal(started.status, 200, started.text);
  return account;
}
