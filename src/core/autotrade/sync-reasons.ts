import type { SyncBlock } from "./sync-plan.js";

/**
 * The words of AutoSync's answers: SyncPositionsToOpen's ReasonCodes (one
 * per strategy of the request, docs/decisions.md "AutoSync and the sync
 * report (issue 14)") and why a symbol is left out of sync.
 */
export const SYNC_REASON_CODES = {
  /** Synced now: every symbol of the strategy's and the setup's markets is in sync or has its orders. */
  Synced: 0,
  /** Some markets are closed: synced at their next open (the others now). */
  ScheduledAtOpen: 1,
  /** Some symbols are left as they are (not joined, DoNotSyncToOpen, orders working, no value or price). */
  SymbolsLeft: 2,
  /** The account has no live autotrade setup on the strategy. */
  NotAutotraded: 10,
  /** The setup's stop is requested and not yet applied. */
  StopRequested: 11,
  /** Autotrade is disabled on the setup (IsAutotradeDisabledReason says why). */
  AutotradeDisabled: 12,
  /** The broker delinked the account. */
  AccountDelinked: 13,
  /** AutoSync is disabled on the setup (SyncDisabledReason says why: an external execution, or SetAutotradeSettings). */
  AutoSyncDisabled: 14,
  /** The strategy's latest orders are still being copied, or the setup has just changed: try again shortly. */
  Busy: 15,
} as const;

export type SyncReasonName = keyof typeof SYNC_REASON_CODES;

/** Why a symbol is left as it is, in a sentence's words. */
export const SYNC_BLOCK_TEXT: Readonly<Record<SyncBlock, string>> = {
  not_joined:
    "the strategy held it when autotrading started (DoNotJoinOpenPositions): it is synced once the strategy is flat in it",
  do_not_sync:
    "the strategy's position was opened by an order marked DoNotSyncToOpen: it is synced once the strategy is flat in it",
  orders_working: "market orders of the setup are still working in it",
  no_account_value: "the account's or the strategy's value is not known",
  no_price: "there is no price to value the stock position at against MaxStocksDollars",
  expired: "the contract has expired: the broker settles what is left in it",
};
