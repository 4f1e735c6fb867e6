import type { Insertable } from "kysely";
import { type Decimal, formatDecimal } from "../core/decimal.js";
import { fold } from "../core/search.js";
import type { StrategiesTable } from "./schema.js";
import type { Tx } from "./transaction.js";

/**
 * Stores a new, empty strategy for its owner: the model account holds the
 * starting capital in cash, the name is folded for search, and the owner's
 * white-label site is the strategy's.
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
      cash: amount,
      created_at: strategy.nowMs,
      updated_at: strategy.nowMs,
      ...extra,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}
