import { ControllableClock } from "../../src/core/clock.js";
import { createPerson } from "../../src/services/people.js";
import type { Storage } from "../../src/store/storage.js";

export interface ModelAccount {
  readonly id: number;
  readonly strategyId: number;
}

/**
 * One person's strategies, each with its model account, written straight to
 * storage: rows for store tests to hang orders and events on, without the
 * service around them.
 */
export async function modelAccounts(storage: Storage, count: number, nowMs: number): Promise<ModelAccount[]> {
  const clock = new ControllableClock(() => nowMs, { kind: "fixed", atMs: nowMs });
  const { personId } = await createPerson(
    { storage, clock },
    { email: "store-owner@example.com", firstName: "Store", lastName: "Owner", role: "person" },
  );
  const strategies = await storage.db
    .insertInto("strategies")
    .values(
      Array.from({ length: count }, (_, i) => ({
        name: `Store ${i + 1}`,
        owner_person_id: personId,
        white_label_site_id: null,
        is_private: 0,
        starting_capital: "100000",
        short_description: null,
        long_description: null,
        pending_short_description: null,
        pending_long_description: null,
        review_note: null,
        created_at: nowMs,
        updated_at: nowMs,
      })),
    )
    .returning("id")
    .execute();
  const rows = await storage.db
    .insertInto("accounts")
    .values(
      strategies.map((strategy) => ({
        kind: "model" as const,
        strategy_id: strategy.id,
        cash: "100000",
        starting_cash: "100000",
        commission_plan: "Default",
        created_at: nowMs,
      })),
    )
    .returning(["id", "strategy_id"])
    .execute();
  return rows.map((row) => ({ id: row.id, strategyId: row.strategy_id as number }));
}
