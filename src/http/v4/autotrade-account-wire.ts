import { toNumber } from "../../core/decimal.js";
import { SIGNAL_TYPES } from "../../core/orders/terms.js";
import type { AccountOrderView, AccountPositionView } from "../../services/autotrade-account-reads.js";
import type { DashBoardRow } from "../../services/autotrade-dashboard.js";
import type { AccountOrderPurpose } from "../../store/schema.js";
import { orderStatusRecord, positionOf } from "./orders-wire.js";

/**
 * The wire records of brokerage accounts' orders and holdings: the strategy
 * side's OrderStatus and Position (orders-wire.ts), read from account orders
 * and setups' holdings.
 */

/** SignalType of the orders that copy no signal. */
const SIGNAL_TYPE: Readonly<Record<Exclude<AccountOrderPurpose, "copy">, number>> = {
  manual: SIGNAL_TYPES.owner,
  auto_stop: SIGNAL_TYPES.stopLoss,
  close: SIGNAL_TYPES.desiredPositions,
  // AutoSync brings the account to the strategy's position, as desired positions do a strategy.
  sync: SIGNAL_TYPES.desiredPositions,
};

/** What the order is, when the service's note does not say more. */
const PURPOSE_INFO: Readonly<Record<AccountOrderPurpose, string | null>> = {
  copy: null,
  manual: "Manual exit order",
  auto_stop: "Automatic stop loss (AutoStopLossDollars)",
  close: "Closing what the strategy no longer holds",
  sync: "AutoSync: bringing the account to the strategy's position at the market's open",
};

/** An account order's OrderStatus record. */
export function accountOrderStatusOf(row: AccountOrderView) {
  return orderStatusRecord(row, {
    id: row.id,
    strategyId: row.strategy_id,
    strategyName: row.strategy_name,
    signalId: row.source_order_id,
    profitTarget: null,
    stopLoss: null,
    doNotCreateOcaGroup: false,
    cancelReplaceSignalId: null,
    parentSignalId: null,
    parkedUntil: null,
    doNotSyncToOpen: false,
    rejectMessage: row.status === "Rejected" ? row.reason : null,
    brokerId: row.broker_id,
    postedAt: row.created_at,
    signalType: row.purpose === "copy" ? (row.source_signal_type ?? SIGNAL_TYPES.owner) : SIGNAL_TYPE[row.purpose],
    info: row.reason ?? PURPOSE_INFO[row.purpose],
  });
}

/** What a setup holds in the account, as a Position record. */
export const accountPositionOf = (row: AccountPositionView) => positionOf(row, row.strategy_name);

/** A DashBoardItem record. */
export function dashBoardItemOf(row: DashBoardRow) {
  return {
    PersonId: row.account.personId,
    BrokerName: row.account.brokerName,
    Account: row.account.account,
    StrategyId: row.strategyId,
    StrategyName: row.strategyName,
    StartDate: new Date(row.startedAt),
    TodayReturn: row.today === null ? null : toNumber(row.today),
    TotalReturn: row.total === null ? null : toNumber(row.total),
  };
}
