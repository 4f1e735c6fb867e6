import type { Selectable } from "kysely";
import { RECORDS_CONSUMER } from "./migrations/0014_strategy_records.js";
import type { StrategyRecordsTable } from "./schema.js";
import type { Tx } from "./transaction.js";

/**
 * A strategy's record totals as the records consumer keeps them, when it has
 * read every fill of the strategy's model account (read in one statement, so
 * the totals and the positions are of one moment); undefined when it is
 * behind, or has nothing yet. Only fills move the totals, and the consumer's
 * position past other events is written lazily (src/engine/outbox/runner.ts):
 * events past it that are not fills leave the totals as they are.
 */
export async function strategyRecordTotals(
  db: Tx,
  strategyId: number,
): Promise<Selectable<StrategyRecordsTable> | undefined> {
  const row = await db
    .selectFrom("accounts as a")
    .leftJoin("outbox_positions as p", (join) =>
      join.onRef("p.account_id", "=", "a.id").on("p.consumer", "=", RECORDS_CONSUMER),
    )
    .leftJoin("strategy_records as r", "r.strategy_id", "a.strategy_id")
    .select([
      "a.event_seq",
      "p.seq as consumed",
      "r.strategy_id",
      "r.fills_stock",
      "r.fills_option",
      "r.fills_future",
      "r.fills_forex",
      "r.latest_fill_at",
      "r.closed_trades",
      "r.winners",
      "r.losers",
      "r.sum_winners_cents",
      "r.sum_losers_cents",
      "r.duration_ms",
    ])
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom("order_events as e")
            .select("e.seq")
            .whereRef("e.account_id", "=", "a.id")
            .where("e.seq", ">", eb.fn.coalesce("p.seq", eb.lit(0)))
            .where("e.kind", "=", "fill"),
        )
        .as("fills_unread"),
    )
    .where("a.strategy_id", "=", strategyId)
    .executeTakeFirst();
  if (!row || isTrue(row.fills_unread)) return undefined;
  if (row.strategy_id === null) {
    // Caught up with no fill yet.
    return {
      strategy_id: strategyId,
      fills_stock: 0,
      fills_option: 0,
      fills_future: 0,
      fills_forex: 0,
      latest_fill_at: null,
      closed_trades: 0,
      winners: 0,
      losers: 0,
      sum_winners_cents: 0,
      sum_losers_cents: 0,
      duration_ms: 0,
    };
  }
  return row as Selectable<StrategyRecordsTable>;
}

/** EXISTS answers 1 or 0 on SQLite, true or false on PostgreSQL. */
const isTrue = (value: unknown): boolean => value === true || value === 1 || value === "1";
