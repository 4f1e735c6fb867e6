import { type AccountEvent, type Enablement, enablementEvents } from "../core/autotrade/account-events.js";
import type { SyncMarket } from "../core/autotrade/settings.js";
import { settingsOfText, settingsText } from "../core/autotrade/settings.js";
import {
  changedSettings,
  isEmptySettingsChange,
  type SettingsChange,
  settingsRefusal,
} from "../core/autotrade/settings-change.js";
import { refuse } from "../core/errors.js";
import { afterCommit, type Tx, withTransaction } from "../store/transaction.js";
import { recordAccountEvents } from "./account-events.js";
import { LIVE_SETUP_STATUSES, personActedOn } from "./autotrade-reads.js";
import type { RequestContext } from "./runtime.js";

/** The reason a setup shows while SetAutotradeSettings has it disabled. */
export const DISABLED_BY_SETTINGS = "Disabled with SetAutotradeSettings";

export interface AutotradeSettingsChange {
  readonly personId: number;
  readonly account: string | undefined;
  readonly brokerId: number | undefined;
  /** Only the setup following this strategy (an addition to the spec's body, docs/decisions.md). */
  readonly strategyId?: number | undefined;
  readonly autotradeEnabled: boolean | undefined;
  readonly syncEnabled: boolean | undefined;
  /** Copies held until the customer confirms them (an addition to the spec's body, docs/decisions.md). */
  readonly confirmationNeeded?: boolean | undefined;
  /** The follower's preferences (additions to the spec's body, docs/decisions.md). */
  readonly settings?: SettingsChange;
  readonly syncToOpen?: Partial<Record<SyncMarket, boolean>>;
}

/**
 * SetAutotradeSettings: sets the enablement flags, whether copies wait for
 * the customer's confirmation, the follower's preferences and the markets
 * synced at their open, on the live setups of the person's account (every
 * strategy it follows, or the one named; every account when none is named),
 * in one transaction. Enabling clears the disabled reason; enabling autotrade
 * on an account its broker delinked is refused (the copier could not trade
 * it); settings that cannot stand together are refused for every setup.
 */
export async function setAutotradeSettings(
  ctx: RequestContext,
  change: AutotradeSettingsChange,
): Promise<readonly number[]> {
  const settingsChange = change.settings ?? {};
  const syncChange = Object.entries(change.syncToOpen ?? {}).filter(([, on]) => on !== undefined);
  if (
    change.autotradeEnabled === undefined &&
    change.syncEnabled === undefined &&
    change.confirmationNeeded === undefined &&
    isEmptySettingsChange(settingsChange) &&
    syncChange.length === 0
  ) {
    throw refuse("MissingValue", {
      field: "IsAutotradeEnabled",
      message: "IsAutotradeEnabled, IsAutoSyncEnabled or a setting to change is required",
    });
  }
  const now = ctx.clock.nowMs();
  const ids = await withTransaction(ctx, async ({ tx }) => {
    await personActedOn(tx, ctx.caller, change.personId);
    let query = tx
      .selectFrom("autotrade_setups as s")
      .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
      .select([
        "s.id",
        "s.strategy_id",
        "s.account_id",
        "s.settings",
        "s.sync_to_open",
        "s.is_autotrade_enabled",
        "s.is_sync_enabled",
        "b.is_linked",
        "b.account_number",
      ])
      .where("s.person_id", "=", change.personId)
      .where("s.status", "in", LIVE_SETUP_STATUSES);
    if (change.account !== undefined) query = query.where("b.account_number", "=", change.account);
    if (change.brokerId !== undefined) query = query.where("s.broker_id", "=", change.brokerId);
    if (change.strategyId !== undefined) query = query.where("s.strategy_id", "=", change.strategyId);
    const setups = await query.orderBy("s.id").execute();
    if (setups.length === 0) {
      throw refuse("NotFound", {
        field: change.strategyId === undefined ? "Account" : "StrategyId",
        message: `Person ${change.personId} autotrades no ${change.strategyId === undefined ? "strategy" : `strategy ${change.strategyId}`}${change.account === undefined ? "" : ` in account ${change.account}`}`,
      });
    }
    const delinked = setups.find((setup) => setup.is_linked !== 1);
    if (change.autotradeEnabled === true && delinked) {
      throw refuse("WrongState", {
        field: "IsAutotradeEnabled",
        message: `Account ${delinked.account_number} is delinked by its broker: link it again first`,
      });
    }
    const flags = {
      ...(change.autotradeEnabled === undefined
        ? {}
        : {
            is_autotrade_enabled: change.autotradeEnabled ? 1 : 0,
            autotrade_disabled_reason: change.autotradeEnabled ? null : DISABLED_BY_SETTINGS,
          }),
      ...(change.syncEnabled === undefined
        ? {}
        : {
            is_sync_enabled: change.syncEnabled ? 1 : 0,
            sync_disabled_reason: change.syncEnabled ? null : DISABLED_BY_SETTINGS,
          }),
      ...(change.confirmationNeeded === undefined ? {} : { is_confirmation_needed: change.confirmationNeeded ? 1 : 0 }),
    };
    for (const setup of setups) {
      const before = settingsOfText(setup.settings);
      const after = changedSettings(before, settingsChange);
      const refusal = settingsRefusal(after);
      if (refusal) {
        throw refuse("InvalidValue", {
          field: refusal.field,
          message: `${refusal.message} (strategy ${setup.strategy_id}, account ${setup.account_number})`,
        });
      }
      if (before.stocks.asCfd !== after.stocks.asCfd) await refuseFormChangeWhileHolding(tx, setup);
      const syncToOpen = {
        ...(JSON.parse(setup.sync_to_open) as Record<string, boolean>),
        ...Object.fromEntries(syncChange),
      };
      await tx
        .updateTable("autotrade_setups")
        .set({ ...flags, settings: settingsText(after), sync_to_open: JSON.stringify(syncToOpen), updated_at: now })
        .where("id", "=", setup.id)
        .execute();
    }
    await recordAccountEvents(tx, enablementEventsOf(setups, change, now));
    return setups.map((setup) => setup.id);
  });
  afterCommit(ctx, () => ctx.autotrade?.setupsChanged(ids));
  return ids;
}

/**
 * A setup's stocks are held in one form (shares or CFDs), so its closes go
 * as what they close: TradeStocksAsCFD changes only while the setup holds no
 * stock and has no open stock order.
 */
export async function refuseFormChangeWhileHolding(
  tx: Tx,
  setup: {
    readonly id: number;
    readonly account_id: number;
    readonly strategy_id: number;
    readonly account_number: string;
  },
): Promise<void> {
  const [held, open] = await Promise.all([
    tx
      .selectFrom("autotrade_positions")
      .select("symbol")
      .where("account_id", "=", setup.account_id)
      .where("strategy_id", "=", setup.strategy_id)
      .where("symbol_type", "=", "stock")
      .executeTakeFirst(),
    tx
      .selectFrom("account_orders")
      .select("idempotency_key")
      .where("account_id", "=", setup.account_id)
      .where("setup_id", "=", setup.id)
      .where("symbol_type", "=", "stock")
      .where("closed_at", "is", null)
      .executeTakeFirst(),
  ]);
  if (held || open) {
    throw refuse("WrongState", {
      field: "TradeStocksAsCFD",
      message: `Strategy ${setup.strategy_id}'s setup in account ${setup.account_number} holds stock ${held ? `(${held.symbol})` : "orders"}: TradeStocksAsCFD changes only while it holds none`,
    });
  }
}

/** The stability events of a change of the flags, account by account (what it changed). */
function enablementEventsOf(
  setups: readonly {
    readonly account_id: number;
    readonly is_autotrade_enabled: number;
    readonly is_sync_enabled: number;
  }[],
  change: AutotradeSettingsChange,
  atMs: number,
): AccountEvent[] {
  const byAccount = new Map<number, Enablement[]>();
  for (const setup of setups) {
    byAccount.set(setup.account_id, [
      ...(byAccount.get(setup.account_id) ?? []),
      { enabled: setup.is_autotrade_enabled === 1, syncEnabled: setup.is_sync_enabled === 1 },
    ]);
  }
  return [...byAccount].flatMap(([accountId, before]) =>
    enablementEvents(before, { autotradeEnabled: change.autotradeEnabled, syncEnabled: change.syncEnabled }).map(
      (kind) => ({
        accountId,
        personId: change.personId,
        kind,
        reason: kind.endsWith("Disabled") ? DISABLED_BY_SETTINGS : "Enabled with SetAutotradeSettings",
        atMs,
      }),
    ),
  );
}
