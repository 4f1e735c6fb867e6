import assert from "node:assert/strict";
import { houseAccount } from "../../src/core/ledger.js";
import { fundHouseAccount, setStrategyPrice } from "../../src/services/commerce-admin.js";
import { balances } from "../../src/services/ledger.js";
import { createPerson } from "../../src/services/people.js";
import { startSubscription } from "../../src/services/subscription-rows.js";
import type { CallResult, TestService } from "./service.js";

/** White-label commerce scenarios: strategies, prices, house funds and the answers' error entries. */

let people = 0;

/** A new customer of the site. */
export async function newCustomer(service: TestService, siteId: number | null): Promise<number> {
  people += 1;
  const { personId } = await createPerson(service.app.runtime, {
    email: `commerce.customer${people}.${Math.random().toString(36).slice(2, 8)}@example.com`,
    firstName: "Commerce",
    lastName: `Customer${people}`,
    role: "person",
    siteId: siteId ?? undefined,
  });
  return personId;
}

/** A strategy made through AddStrategy on WL by `key` for `ownerId`, public unless told, priced in dollars. */
export async function newStrategy(
  service: TestService,
  key: string,
  ownerId: number,
  options: { readonly monthly?: number; readonly isPublic?: boolean } = {},
): Promise<number> {
  const r = await service.call("WL", "POST", "/Strategies/AddStrategy", {
    key,
    body: {
      StrategyName: `Commerce ${Math.random().toString(36).slice(2, 8)}`,
      StartingCapital: 100_000,
      StrategyOwnerPersonId: ownerId,
      InitialSiteVisibility: options.isPublic ?? true,
    },
  });
  assert.equal(r.status, 200, r.text);
  const strategyId = r.json.Results[0].StrategyId as number;
  if (options.monthly !== undefined) {
    await setStrategyPrice(service.app.runtime, strategyId, Math.round(options.monthly * 100), null);
  }
  return strategyId;
}

export const fund = (service: TestService, siteId: number, dollars: number) =>
  fundHouseAccount(service.app.runtime, siteId, Math.round(dollars * 100));

/** The site's house-account balance in cents. */
export async function houseBalance(service: TestService, siteId: number): Promise<number> {
  return (await balances(service.storage.db, [houseAccount(siteId)])).get(houseAccount(siteId)) ?? 0;
}

/** A live simulated subscription, as StartSim makes them. */
export async function simulate(service: TestService, personId: number, strategyId: number): Promise<number> {
  const started = await startSubscription(service.storage.db, personId, strategyId, service.app.runtime.clock.nowMs(), {
    kind: "simulated",
    lane: "free",
  });
  assert.ok(started.started);
  return started.row.id;
}

interface ErrorItem {
  readonly ErrorCode: string;
  readonly FieldName: string;
  readonly Message: string;
  readonly Meta: Record<string, unknown>;
}

export const firstError = (r: CallResult): ErrorItem => {
  const [first] = r.json?.ResponseStatus?.Errors ?? [];
  assert.ok(first, `an error entry in ${r.text}`);
  return first;
};

/** A refusal with this status whose first error names this field and carries this code. */
export function assertRefused(r: CallResult, status: number, field: string, code: string): ErrorItem {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.Results, null, r.text);
  const first = firstError(r);
  assert.equal(first.FieldName, field, r.text);
  assert.equal(first.ErrorCode, code, r.text);
  return first;
}

/** The one result of a successful call. */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
export function only(r: CallResult): any {
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.Results.length, 1, r.text);
  return r.json.Results[0];
}
