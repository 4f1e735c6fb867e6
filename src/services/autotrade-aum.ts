import { sql } from "kysely";
import { add, type Decimal, storedDecimal, ZERO } from "../core/decimal.js";
import { keyedReads } from "../store/keyed-reads.js";
import type { Tx } from "../store/transaction.js";
import { dbOf, type Runtime } from "./runtime.js";

/**
 * What autotrading says about strategies: the assets following each one
 * (AUM: the net liquidation value of every account with a live, enabled
 * setup on it, and how many accounts) and whether its owner trades it in
 * their own brokerage account (IsTradeOwnSystem), at what percentage
 * (docs/decisions.md, "Autotrade setups over the API (issue 13)").
 */
export interface AutotradeFigures {
  readonly aum: Decimal;
  readonly accounts: number;
  readonly tradesOwnSystem: boolean;
  /** The ScalingPercentage the owner trades it at, summed over the owner's accounts; 0 when they do not. */
  readonly ownSystemPercent: Decimal;
  /** The owner's accounts trading it. */
  readonly ownSystemAccounts: number;
}

const NONE: AutotradeFigures = {
  aum: ZERO,
  accounts: 0,
  tradesOwnSystem: false,
  ownSystemPercent: ZERO,
  ownSystemAccounts: 0,
};

/** The setups that copy orders now: live (no stop requested) and enabled. */
const copying = sql<boolean>`s.status = 'active' and s.is_autotrade_enabled = 1`;

/** The figures of each strategy named (strategies nobody autotrades get zeros). */
export async function autotradeFigures(
  db: Tx,
  strategyIds: readonly number[],
): Promise<ReadonlyMap<number, AutotradeFigures>> {
  const figures = new Map<number, AutotradeFigures>();
  if (strategyIds.length === 0) return figures;
  const rows = await db
    .selectFrom("autotrade_setups as s")
    .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
    .innerJoin("strategies as st", "st.id", "s.strategy_id")
    .select(["s.strategy_id", "s.person_id", "s.scaling_percentage", "b.net_liquidation", "st.owner_person_id"])
    .where("s.strategy_id", "in", [...strategyIds])
    .where(copying)
    .execute();
  for (const row of rows) {
    const so = figures.get(row.strategy_id) ?? NONE;
    const own = row.person_id === row.owner_person_id;
    figures.set(row.strategy_id, {
      aum: row.net_liquidation === null ? so.aum : add(so.aum, storedDecimal(row.net_liquidation)),
      accounts: so.accounts + 1,
      tradesOwnSystem: so.tradesOwnSystem || own,
      ownSystemPercent: own ? add(so.ownSystemPercent, storedDecimal(row.scaling_percentage)) : so.ownSystemPercent,
      ownSystemAccounts: so.ownSystemAccounts + (own ? 1 : 0),
    });
  }
  return figures;
}

export const figuresOf = (figures: ReadonlyMap<number, AutotradeFigures>, strategyId: number): AutotradeFigures =>
  figures.get(strategyId) ?? NONE;

/**
 * One strategy's figures, read with those other requests ask for in the same
 * turn (src/store/keyed-reads.ts): one statement for them all, and on SQLite
 * none while nothing is written.
 */
export async function strategyAutotradeFigures(
  runtime: Pick<Runtime, "storage" | "tx">,
  strategyId: number,
): Promise<AutotradeFigures> {
  return (await keyedReads(runtime.storage, autotradeFigures).read(dbOf(runtime), strategyId)) ?? NONE;
}

/** A condition on strategies `st`: its owner autotrades it now. */
export const ownerAutotrades = sql<boolean>`exists (select 1 from autotrade_setups s
  where s.strategy_id = st.id and s.person_id = st.owner_person_id and ${copying})`;
