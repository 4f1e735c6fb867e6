import { sql } from "kysely";
import { refuse } from "../core/errors.js";
import { keyedReads } from "../store/keyed-reads.js";
import type { Tx } from "../store/transaction.js";
import { dbOf, type Runtime } from "./runtime.js";

/**
 * The version of a strategy's record, at which whatever is computed from the
 * record is kept (src/services/record-cache.ts). Its two parts change apart:
 * the trading version counts the commits of the strategy's model account
 * (fills, trades, positions, cash), and the marks' count counts the transactions that
 * ever wrote daily equity marks, for every strategy at once (a close marks
 * every live strategy). Both live in storage and change in the same commit as
 * what they count, so a trade or a mark made by another process is seen by
 * the next read.
 */
export interface RecordVersion {
  readonly trading: number;
  readonly marks: number;
}

/** The service setting counting the transactions that wrote equity marks. */
const MARKS_WRITTEN = "equity_marks_written";

/** One indexed read: the model account's row and the marks' counter, each by its key. */
export async function recordVersion(runtime: Runtime, strategyId: number): Promise<RecordVersion> {
  const version = await keyedReads(runtime.storage, recordVersions).read(dbOf(runtime), strategyId);
  if (!version) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${strategyId}` });
  return version;
}

async function recordVersions(db: Tx, strategyIds: readonly number[]): Promise<Map<number, RecordVersion>> {
  const rows = await db
    .selectFrom("accounts")
    .select([
      "strategy_id",
      "version",
      (eb) => eb.selectFrom("service_settings").select("value").where("name", "=", MARKS_WRITTEN).as("marks_written"),
    ])
    .where("kind", "=", "model")
    .where("strategy_id", "in", [...strategyIds])
    .execute();
  return new Map(
    rows.map((row) => [
      row.strategy_id as number,
      { trading: row.version, marks: row.marks_written === null ? 0 : Number(row.marks_written) },
    ]),
  );
}

/**
 * Counts a transaction that writes marks, inside it. The counter is raised in
 * place, so two processes marking at once each count (neither overwrites the
 * other's count).
 */
export async function noteMarksWritten(tx: Tx): Promise<void> {
  await tx
    .insertInto("service_settings")
    .values({ name: MARKS_WRITTEN, value: "1" })
    .onConflict((oc) =>
      oc.column("name").doUpdateSet({ value: sql<string>`cast(cast(service_settings.value as bigint) + 1 as text)` }),
    )
    .execute();
}
