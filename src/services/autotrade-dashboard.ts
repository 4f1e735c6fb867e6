import { type MarkedMoment, type SetupReturns, setupReturns } from "../core/autotrade/account-returns.js";
import { storedDecimal, ZERO } from "../core/decimal.js";
import type { Tx } from "../store/transaction.js";
import { type AccountName, type NamedAccount, namedAccount } from "./autotrade-accounts.js";
import { LIVE_SETUP_STATUSES } from "./autotrade-reads.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * GetDashBoard: each strategy the account autotrades (its live setups,
 * oldest first) with its returns, computed from the account's marks at NYSE
 * closes (core/autotrade/account-returns.ts; the marks are made by
 * engine/autotrade/account-marker.ts).
 *
 * When the setup started, its P&L is the last mark of its holdings at or
 * before then (none: zero) and the account's value the last mark at or
 * before then (none: the cash the account was opened or last reset with).
 */
export interface DashBoardRow extends SetupReturns {
  readonly account: NamedAccount;
  readonly strategyId: number;
  readonly strategyName: string;
  readonly startedAt: number;
}

async function startOf(db: Tx, account: NamedAccount, strategyId: number, startedAt: number): Promise<MarkedMoment> {
  const [book, value] = await Promise.all([
    db
      .selectFrom("autotrade_marks")
      .select("pnl")
      .where("account_id", "=", account.accountId)
      .where("strategy_id", "=", strategyId)
      .where("marked_at", "<=", startedAt)
      .orderBy("marked_at", "desc")
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom("account_marks")
      .select("value")
      .where("account_id", "=", account.accountId)
      .where("marked_at", "<=", startedAt)
      .orderBy("marked_at", "desc")
      .limit(1)
      .executeTakeFirst(),
  ]);
  return {
    pnl: book ? storedDecimal(book.pnl) : ZERO,
    accountValue: storedDecimal(value?.value ?? account.startingCash),
  };
}

/** The setup's last two marks since it started, oldest first, each with the account's value then. */
async function lastMarks(
  db: Tx,
  account: NamedAccount,
  strategyId: number,
  startedAt: number,
): Promise<MarkedMoment[]> {
  const rows = await db
    .selectFrom("autotrade_marks as m")
    .innerJoin("account_marks as a", (join) =>
      join.onRef("a.account_id", "=", "m.account_id").onRef("a.marked_at", "=", "m.marked_at"),
    )
    .select(["m.pnl", "a.value"])
    .where("m.account_id", "=", account.accountId)
    .where("m.strategy_id", "=", strategyId)
    .where("m.marked_at", ">", startedAt)
    .orderBy("m.marked_at", "desc")
    .limit(2)
    .execute();
  return rows.reverse().map((row) => ({ pnl: storedDecimal(row.pnl), accountValue: storedDecimal(row.value) }));
}

export async function dashBoard(ctx: RequestContext, name: AccountName): Promise<DashBoardRow[]> {
  const db = dbOf(ctx);
  const account = await namedAccount(db, ctx.caller, name);
  const setups = await db
    .selectFrom("autotrade_setups as s")
    .innerJoin("strategies as st", "st.id", "s.strategy_id")
    .select(["s.strategy_id", "st.name as strategy_name", "s.started_at", "s.scaling_percentage"])
    .where("s.account_id", "=", account.accountId)
    .where("s.status", "in", LIVE_SETUP_STATUSES)
    .orderBy("s.id")
    .execute();
  return Promise.all(
    setups.map(async (setup) => {
      const startedAt = Number(setup.started_at);
      const [start, marks] = await Promise.all([
        startOf(db, account, setup.strategy_id, startedAt),
        lastMarks(db, account, setup.strategy_id, startedAt),
      ]);
      return {
        account,
        strategyId: setup.strategy_id,
        strategyName: setup.strategy_name,
        startedAt,
        ...setupReturns({ scalingPercentage: storedDecimal(setup.scaling_percentage), start, marks }),
      };
    }),
  );
}
