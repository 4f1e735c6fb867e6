import type { Insertable, Selectable } from "kysely";
import { type Decimal, formatDecimal } from "../core/decimal.js";
import { fold } from "../core/search.js";
import type { StrategiesTable } from "./schema.js";
import type { Tx } from "./transaction.js";

/** Model accounts pay the Default commission plan. */
export const MODEL_ACCOUNT_PLAN_NAME = "Default";

/**
 * Stores a new, empty strategy for its owner with its model account, which
 * holds the starting capital in cash; the name is folded for search, and the
 * owner's white-label site is the strategy's.
 */
export async function insertStrategy(
  tx: Tx,
  strategy: {
    readonly name: string;
    readonly owner: { readonly id: number; readonly white_label_site_id: number | null };
    readonly startingCapital: Decimal;
    readonly isPublic: boolean;
    readonly nowMs: number;
  },
  extra: Partial<
    Pick<Insertable<StrategiesTable>, "pending_long_description" | "review_status" | "credit_system_until">
  > = {},
): Promise<number> {
  const amount = formatDecimal(strategy.startingCapital);
  const row = await tx
    .insertInto("strategies")
    .values({
      name: strategy.name,
      name_folded: fold(strategy.name),
      owner_person_id: strategy.owner.id,
      white_label_site_id: strategy.owner.white_label_site_id,
      is_private: strategy.isPublic ? 0 : 1,
      starting_capital: amount,
      created_at: strategy.nowMs,
      updated_at: strategy.nowMs,
      ...extra,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  await tx
    .insertInto("accounts")
    .values({
      kind: "model",
      strategy_id: row.id,
      cash: amount,
      starting_cash: amount,
      commission_plan: MODEL_ACCOUNT_PLAN_NAME,
      created_at: strategy.nowMs,
    })
    .execute();
  return row.id;
}

/**
 * Moves the strategy's model account to a new version after a change to the
 * strategy that the trading frame keeps with the account (its name, owner,
 * starting capital): every process's copy of the account is then out of date
 * and is read again before it is used.
 */
export async function touchModelAccount(tx: Tx, strategyId: number): Promise<void> {
  await tx
    .updateTable("accounts")
    .set((eb) => ({ version: eb("version", "+", 1) }))
    .where("strategy_id", "=", strategyId)
    .execute();
}

/** Strategies' rows by id (for keyed reads: ./keyed-reads.ts). */
export async function strategyRowsById(
  db: Tx,
  ids: readonly number[],
): Promise<Map<number, Selectable<StrategiesTable>>> {
  const rows = await db
    .selectFrom("strategies")
    .selectAll()
    .where("id", "in", [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}
