import { storedDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { withTransaction } from "../store/transaction.js";
import { type AccountName, namedAccount } from "./autotrade-accounts.js";
import type { DeskContext } from "./autotrade-order-entry.js";
import { dbOf } from "./runtime.js";

/** Why the desk ends the orders a paper reset leaves (those the broker never got). */
export const PAPER_RESET_REASON = "The paper account was reset";

/**
 * ResetPaperTrade: a paper account back to its starting cash (what it was
 * opened with, accounts.starting_cash), at its broker and at the service.
 * The broker cancels its open orders, clears its positions and sets its cash
 * (the broker port's resetPaperAccount, as paper-trading brokers offer); the
 * desk ends the orders the broker never got and clears what each setup
 * holds; the account's marks go, so its returns start over, and the time of
 * the reset is kept. Setups keep following their strategies. A live account
 * is refused naming Account; so is a reset the broker did not carry out
 * (nothing is reset: try again).
 */
export async function resetPaperTrade(ctx: DeskContext, name: AccountName): Promise<void> {
  const account = await namedAccount(dbOf(ctx), ctx.caller, name);
  if (!account.isPaper) {
    throw refuse("WrongState", {
      field: "Account",
      message: `Account ${account.account} is a live account: only paper accounts are reset`,
    });
  }
  const startingCash = storedDecimal(account.startingCash);
  await ctx.desk.account(account.accountId);
  try {
    await ctx.desk.resetPaper(account.accountId, startingCash, PAPER_RESET_REASON);
  } catch (error) {
    throw refuse("WrongState", {
      field: "Account",
      message: `The broker did not reset account ${account.account}, nothing was reset (${error instanceof Error ? error.message : String(error)}): try again`,
    });
  }
  await ctx.desk.accountSettled(account.accountId);
  const nowMs = ctx.clock.nowMs();
  await withTransaction(ctx, async ({ tx }) => {
    await tx
      .updateTable("broker_accounts")
      .set({ reset_at: nowMs })
      .where("account_id", "=", account.accountId)
      .execute();
    await tx.updateTable("accounts").set({ cash: account.startingCash }).where("id", "=", account.accountId).execute();
    await tx.deleteFrom("account_marks").where("account_id", "=", account.accountId).execute();
    await tx.deleteFrom("autotrade_marks").where("account_id", "=", account.accountId).execute();
  });
}
