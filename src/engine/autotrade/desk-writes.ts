import type { AccountEvent } from "../../core/autotrade/account-events.js";
import { formatDecimal, isZero } from "../../core/decimal.js";
import { recordAccountEvents } from "../../services/account-events.js";
import { endSubscription, liveSubscription } from "../../services/subscription-rows.js";
import type { NewAccountOrder } from "../../store/journal/batch.js";
import type { Tx } from "../../store/transaction.js";
import type { HeldPositionOf } from "./followers.js";

/**
 * What the desk writes in one transaction: account orders it made (inserted)
 * or moved (updated by idempotency key), fills, the positions they changed,
 * and changes to setups and brokerage accounts. Rows are full images, so a
 * batch written twice writes the same thing.
 */
export interface DeskWrites {
  /** Orders the desk made: inserted (a key storage holds already is left as it is). */
  readonly made: Map<string, NewAccountOrder>;
  /** Orders whose image moved, by key. */
  readonly moved: Map<string, NewAccountOrder>;
  readonly fills: NewAccountFill[];
  /** Positions after the batch, by account and `strategyId|symbol` (flat ones are deleted). */
  readonly positions: Map<string, { accountId: number; held: HeldPositionOf }>;
  readonly setups: Map<number, SetupChange>;
  readonly accounts: Map<number, AccountChange>;
  /** Subscriptions a stop ended (TerminateStrategySubscription). */
  readonly endSubscriptions: { readonly personId: number; readonly strategyId: number }[];
  /** Stability events of the accounts (a delink, a restriction, a disable). */
  readonly events: AccountEvent[];
}

/** A fill of an order named by its key (storage's id is looked up when written). */
export interface NewAccountFill {
  readonly orderKey: string;
  readonly account_id: number;
  readonly strategy_id: number;
  readonly symbol: string;
  readonly side: "buy" | "sell";
  readonly quantity: string;
  readonly price: string;
  readonly broker_fill_id: string;
  readonly filled_at: number;
}

export interface SetupChange {
  status?: "stopped";
  enabled?: boolean;
  disabledReason?: string | null;
  syncEnabled?: boolean;
  syncDisabledReason?: string | null;
}

export interface AccountChange {
  linked?: boolean;
  value?: { readonly netLiquidation: string; readonly atMs: number };
}

export const noDeskWrites = (): DeskWrites => ({
  made: new Map(),
  moved: new Map(),
  fills: [],
  positions: new Map(),
  setups: new Map(),
  accounts: new Map(),
  endSubscriptions: [],
  events: [],
});

export const isEmptyDeskWrites = (w: DeskWrites): boolean =>
  w.made.size === 0 &&
  w.moved.size === 0 &&
  w.fills.length === 0 &&
  w.positions.size === 0 &&
  w.setups.size === 0 &&
  w.accounts.size === 0 &&
  w.endSubscriptions.length === 0 &&
  w.events.length === 0;

const ROWS = 200;

export async function writeDesk(tx: Tx, writes: DeskWrites, nowMs: number): Promise<void> {
  const made = [...writes.made.values()];
  for (let i = 0; i < made.length; i += ROWS) {
    await tx
      .insertInto("account_orders")
      .values(made.slice(i, i + ROWS))
      .onConflict((oc) => oc.column("idempotency_key").doNothing())
      .execute();
  }
  for (const row of writes.moved.values()) {
    await tx
      .updateTable("account_orders")
      .set({
        status: row.status,
        prior_status: row.prior_status,
        awaiting_confirmation: row.awaiting_confirmation,
        virtual_limit: row.virtual_limit,
        order_type: row.order_type,
        filled_quantity: row.filled_quantity,
        filled_notional: row.filled_notional,
        broker_order_id: row.broker_order_id,
        limit_price: row.limit_price,
        stop_price: row.stop_price,
        reason: row.reason,
        updated_at: row.updated_at,
        sent_at: row.sent_at,
        closed_at: row.closed_at,
      })
      .where("idempotency_key", "=", row.idempotency_key)
      .execute();
  }
  for (let i = 0; i < writes.fills.length; i += ROWS) {
    const chunk = writes.fills.slice(i, i + ROWS);
    // A fill names its order by key; storage's id is looked up.
    const ids = new Map(
      (
        await tx
          .selectFrom("account_orders")
          .select(["id", "idempotency_key"])
          .where("idempotency_key", "in", [...new Set(chunk.map((f) => f.orderKey))])
          .execute()
      ).map((row) => [row.idempotency_key, row.id]),
    );
    await tx
      .insertInto("account_fills")
      .values(
        chunk.map(({ orderKey, ...fill }) => {
          const id = ids.get(orderKey);
          if (id === undefined) throw new Error(`account order ${orderKey} is not stored`);
          // The key the fill lacks before it (docs/decisions.md, "Objects keep their hidden classes").
          return { account_order_id: id, ...fill };
        }),
      )
      .onConflict((oc) => oc.columns(["account_order_id", "broker_fill_id"]).doNothing())
      .execute();
  }
  for (const { accountId, held } of writes.positions.values()) {
    if (isZero(held.position.quantity)) {
      await tx
        .deleteFrom("autotrade_positions")
        .where("account_id", "=", accountId)
        .where("strategy_id", "=", held.strategyId)
        .where("symbol", "=", held.symbol)
        .execute();
      continue;
    }
    const row = {
      account_id: accountId,
      strategy_id: held.strategyId,
      symbol: held.symbol,
      symbol_type: held.symbolType,
      quantity: formatDecimal(held.position.quantity),
      cost: formatDecimal(held.position.cost),
      opened_at: held.openedAt,
    };
    await tx
      .insertInto("autotrade_positions")
      .values(row)
      .onConflict((oc) =>
        oc.columns(["account_id", "strategy_id", "symbol"]).doUpdateSet({ quantity: row.quantity, cost: row.cost }),
      )
      .execute();
  }
  for (const [setupId, change] of writes.setups) {
    await tx
      .updateTable("autotrade_setups")
      .set({
        ...(change.status === "stopped" ? { status: "stopped", live_key: null, stopped_at: nowMs } : {}),
        ...(change.enabled !== undefined ? { is_autotrade_enabled: change.enabled ? 1 : 0 } : {}),
        ...(change.disabledReason !== undefined ? { autotrade_disabled_reason: change.disabledReason } : {}),
        ...(change.syncEnabled !== undefined ? { is_sync_enabled: change.syncEnabled ? 1 : 0 } : {}),
        ...(change.syncDisabledReason !== undefined ? { sync_disabled_reason: change.syncDisabledReason } : {}),
        updated_at: nowMs,
      })
      .where("id", "=", setupId)
      .execute();
  }
  for (const { personId, strategyId } of writes.endSubscriptions) {
    const live = await liveSubscription(tx, personId, strategyId, nowMs);
    if (live) await endSubscription(tx, live.id, nowMs, nowMs, "autotrade_stopped");
  }
  await recordAccountEvents(tx, writes.events);
  for (const [accountId, change] of writes.accounts) {
    await tx
      .updateTable("broker_accounts")
      .set({
        ...(change.linked !== undefined ? { is_linked: change.linked ? 1 : 0 } : {}),
        ...(change.value
          ? { net_liquidation: change.value.netLiquidation, net_liquidation_at: change.value.atMs }
          : {}),
      })
      .where("account_id", "=", accountId)
      .execute();
  }
}
