import { createKey } from "../../src/services/keys.js";
import { createPerson } from "../../src/services/people.js";
import { type NewSubscription, type SubscriptionRow, startSubscription } from "../../src/services/subscription-rows.js";
import type { TestService } from "./service.js";

/**
 * Subscriptions with prices and billing state, made in storage as the
 * commerce operations would make them (the tests of reads and visibility
 * need them whether or not those operations run), and customers to hold them.
 */

const DAY_MS = 86_400_000;
export const days = (n: number): number => n * DAY_MS;

/** Starts a subscription now (the service's clock) with the values given; answers its row. */
export async function subscribed(
  service: TestService,
  personId: number,
  strategyId: number,
  values: NewSubscription,
): Promise<SubscriptionRow> {
  const now = service.app.runtime.clock.nowMs();
  const result = await startSubscription(service.storage.db, personId, strategyId, now, values);
  if (!result.started) throw new Error(`person ${personId} already follows ${strategyId}`);
  return result.row;
}

/** Changes a stored subscription (to make it lapse, end, fail a charge...). */
export async function alterSubscription(
  service: TestService,
  subscriptionId: number,
  values: Partial<SubscriptionRow>,
): Promise<void> {
  await service.storage.db.updateTable("subscriptions").set(values).where("id", "=", subscriptionId).execute();
}

/** A settled charge of the subscription at `atMs` in the ledger (its transaction; the entries do not matter to reads). */
export async function charged(service: TestService, subscriptionId: number, atMs: number, seq: number) {
  await service.storage.db
    .insertInto("ledger_transactions")
    .values({
      kind: "charge",
      reference: `charge:${subscriptionId}:${seq}`,
      subscription_id: subscriptionId,
      memo: null,
      created_at: atMs,
    })
    .execute();
}

/** A customer of a white-label site (or of none) with a key. */
export async function customer(service: TestService, name: string, siteId?: number) {
  const { personId } = await createPerson(service.app.runtime, {
    email: `${name}@example.org`,
    firstName: name,
    lastName: "Customer",
    role: "person",
    siteId,
  });
  const { accessKey } = await createKey(service.app.runtime, { personId });
  return { personId, key: accessKey };
}

/** Sets a strategy's monthly price (decimal dollars), as the operator's price command does. */
export async function priced(service: TestService, strategyId: number, monthly: string): Promise<void> {
  await service.storage.db
    .updateTable("strategies")
    .set({ monthly_cost: monthly })
    .where("id", "=", strategyId)
    .execute();
}
