import { SYNC_MARKETS, settingsOfStart, settingsText, syncToOpenOfStart } from "../src/core/autotrade/settings.js";
import type { Tx } from "../src/store/transaction.js";

/** Rows per multi-row statement. */
const INSERT_ROWS = 500;

export interface FollowingAccount {
  readonly personId: number;
  /** The account's number at the simulated broker. */
  readonly account: string;
}

/**
 * Brokerage accounts at the simulated broker (broker 1), each of 100,000
 * dollars with an active, enabled setup following the strategy (stocks on,
 * AutoSync on for every market), written straight to storage in multi-row
 * statements as StartAutotrade would leave them. With `atBroker`, the broker
 * holds the accounts too (it refuses orders for accounts it does not know).
 * Answers the accounts' ids, in the order given.
 */
export async function insertFollowingAccounts(
  tx: Tx,
  following: {
    readonly strategyId: number;
    readonly siteId: number | null;
    readonly accounts: readonly FollowingAccount[];
    readonly atMs: number;
    readonly atBroker: boolean;
  },
): Promise<number[]> {
  const { strategyId, siteId, atMs } = following;
  const settings = settingsText(settingsOfStart({ EnableStocks: true }));
  const syncToOpen = JSON.stringify(syncToOpenOfStart());
  const lastSync = JSON.stringify(Object.fromEntries(SYNC_MARKETS.map((market) => [market, null])));
  const ids: number[] = [];
  for (let first = 0; first < following.accounts.length; first += INSERT_ROWS) {
    const chunk = following.accounts.slice(first, first + INSERT_ROWS);
    const made = await tx
      .insertInto("accounts")
      .values(
        chunk.map(() => ({
          kind: "broker" as const,
          strategy_id: null,
          cash: "100000",
          starting_cash: "100000",
          commission_plan: "Default",
          created_at: atMs,
        })),
      )
      .returning("id")
      .execute();
    const rows = made.map((row, i) => ({ accountId: row.id, ...(chunk[i] as FollowingAccount) }));
    await tx
      .insertInto("broker_accounts")
      .values(
        rows.map((row) => ({
          account_id: row.accountId,
          person_id: row.personId,
          broker_id: 1,
          account_number: row.account,
          is_paper: 0,
          account_type: 1,
          currency: "USD",
          broker_username: null,
          is_linked: 1,
          net_liquidation: "100000",
          net_liquidation_at: atMs,
          first_activation_at: atMs,
          created_at: atMs,
        })),
      )
      .execute();
    if (following.atBroker) {
      await tx
        .insertInto("sim_broker_accounts")
        .values(
          rows.map((row) => ({
            account: row.account,
            cash: "100000",
            is_linked: 1,
            username: null,
            created_at: atMs,
          })),
        )
        .execute();
    }
    await tx
      .insertInto("autotrade_setups")
      .values(
        rows.map((row) => ({
          account_id: row.accountId,
          person_id: row.personId,
          broker_id: 1,
          strategy_id: strategyId,
          site_id: siteId,
          status: "active" as const,
          live_key: `${row.accountId}:${strategyId}`,
          scaling_percentage: "100",
          is_autotrade_enabled: 1,
          autotrade_disabled_reason: null,
          is_sync_enabled: 1,
          sync_disabled_reason: null,
          is_confirmation_needed: 0,
          approved: 1,
          settings,
          sync_to_open: syncToOpen,
          last_sync: lastSync,
          do_not_join_open_positions: 0,
          stop_requested_at: null,
          stop_leave_positions_open: null,
          stop_terminate_subscription: null,
          started_at: atMs,
          updated_at: atMs,
          stopped_at: null,
        })),
      )
      .execute();
    ids.push(...rows.map((row) => row.accountId));
  }
  return ids;
}
