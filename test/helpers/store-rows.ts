import { ControllableClock } from "../../src/core/clock.js";
import { createPerson } from "../../src/services/people.js";
import type { AccountCommit, JournalBatch, StoredOrder } from "../../src/store/journal/batch.js";
import type { Database } from "../../src/store/schema.js";
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

/** A resting order of the account as the order path stores it: a DAY limit buy of 1 AAPL at 1, id aside. */
export function restingOrder(account: ModelAccount, nowMs: number): Omit<StoredOrder, "id"> {
  return {
    strategy_id: account.strategyId,
    account_id: account.id,
    symbol: "AAPL",
    symbol_type: "stock",
    order_type: "limit",
    side: "buy",
    open_close: "open",
    tif: "day",
    quantity: "1",
    limit_price: "1",
    stop_price: null,
    profit_target: null,
    stop_loss: null,
    do_not_create_oca: 0,
    do_not_sync_to_open: 0,
    parent_id: null,
    oca_group_id: null,
    cancel_replace_id: null,
    parked_until: null,
    expires_at: nowMs + 6 * 3_600_000,
    signal_type: 1,
    status: "Working",
    filled_quantity: "0",
    filled_notional: "0",
    info: null,
    posted_at: nowMs,
    updated_at: nowMs,
    closed_at: null,
    local_signal_id: null,
    sent_symbol: null,
  };
}

/** The account's line in a batch, moving it from `version` with its cash as `modelAccounts` made it. */
export function accountCommit(account: ModelAccount, version: number, eventSeq: number): AccountCommit {
  return {
    id: account.id,
    strategyId: account.strategyId,
    expectedVersion: version,
    cash: "100000",
    commissionsPaid: "0",
    planCommissions: "{}",
    eventSeq,
  };
}

/** A journal batch holding `parts` and nothing else. */
export function journalBatch(parts: Partial<JournalBatch>): JournalBatch {
  return {
    accounts: [],
    strategies: [],
    ocaGroups: [],
    newOrders: [],
    changedOrders: [],
    newTrades: [],
    changedTrades: [],
    fills: [],
    positions: [],
    closedPositions: [],
    events: [],
    consumers: [],
    recordTotals: [],
    accountOrders: [],
    copySkips: [],
    idempotencyKeys: [],
    ...parts,
  };
}

/** How many rows a table holds: what a refusal must leave as it was. */
export async function rowCount(storage: Storage, table: keyof Database): Promise<number> {
  const { n } = await storage.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(n);
}
