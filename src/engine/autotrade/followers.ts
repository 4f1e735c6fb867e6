import type { Selectable } from "kysely";
import { type AccountApproval, NO_APPROVAL_NEEDED } from "../../core/autotrade/account-approval.js";
import { type SetupSettings, settingsOfText } from "../../core/autotrade/settings.js";
import { type Decimal, storedDecimal } from "../../core/decimal.js";
import { addId, removeId } from "../../core/id-sets.js";
import type { Position } from "../../core/positions.js";
import { accountApprovals } from "../../services/account-approval.js";
import type { AccountOrdersTable, SetupStatus } from "../../store/schema.js";
import type { Tx } from "../../store/transaction.js";

/**
 * The autotrade accounts as the desk holds them in memory: each brokerage
 * account with its live setups, its open account orders (by idempotency
 * key) and what each setup holds in it. The copier reads them to scale its
 * copies; the desk alone changes them (one writer per account).
 */
export interface FollowedSetup {
  readonly id: number;
  readonly accountId: number;
  readonly personId: number;
  readonly strategyId: number;
  readonly siteId: number | null;
  readonly status: SetupStatus;
  readonly enabled: boolean;
  /** IsAutoSyncEnabled: an external execution turns it off here at once, before it is written. */
  readonly syncEnabled: boolean;
  readonly confirmationNeeded: boolean;
  readonly scaling: Decimal;
  readonly settings: SetupSettings;
  readonly stopLeavesPositionsOpen: boolean;
  readonly stopTerminatesSubscription: boolean;
}

/** An account order as the desk holds it: its row, and whether storage has it yet. */
export interface HeldOrder {
  row: Omit<Selectable<AccountOrdersTable>, "id"> & { id?: number };
  /** Storage holds the row (its creation committed). */
  stored: boolean;
  /** A placement is with the broker now. */
  asking: boolean;
  /** The broker's ids of the fills applied (a fill heard twice counts once). */
  readonly fillIds: Set<string>;
  /** Why a cancel asked of the broker was asked: the order's reason once the broker confirms it, unless the broker gives its own. */
  cancelReason?: string;
}

/**
 * An account's open orders by idempotency key, indexed by setup and symbol:
 * each copy asks what the setup's orders in its symbol would still add, and
 * a pass over every open order of the account for each made a strategy that
 * rests many orders quadratic for its followers. An order's setup and symbol
 * never change (its row is replaced by one of the same order), so the index
 * follows set and delete alone.
 */
export class HeldOrders extends Map<string, HeldOrder> {
  readonly #bySetupSymbol = new Map<string, Set<string>>();

  override set(key: string, held: HeldOrder): this {
    const was = this.get(key);
    const at = setupSymbolKey(held.row.setup_id, held.row.symbol);
    if (was !== undefined) {
      // Set again under its key, an order keeps its place, in the index as in the map.
      if (setupSymbolKey(was.row.setup_id, was.row.symbol) === at) return super.set(key, held);
      // Another setup or symbol is another order: it goes last, in both.
      this.delete(key);
    }
    super.set(key, held);
    addId(this.#bySetupSymbol, at, key);
    return this;
  }

  override delete(key: string): boolean {
    const was = this.get(key);
    if (was !== undefined) this.#unindex(key, was);
    return super.delete(key);
  }

  override clear(): void {
    this.#bySetupSymbol.clear();
    super.clear();
  }

  /** The open orders of a setup in a symbol, in the order the map holds them. */
  *ofSetup(setupId: number, symbol: string): Iterable<HeldOrder> {
    for (const key of this.#bySetupSymbol.get(setupSymbolKey(setupId, symbol)) ?? []) {
      const held = this.get(key);
      if (held !== undefined) yield held;
    }
  }

  #unindex(key: string, held: HeldOrder): void {
    removeId(this.#bySetupSymbol, setupSymbolKey(held.row.setup_id, held.row.symbol), key);
  }
}

const setupSymbolKey = (setupId: number | null, symbol: string) => `${setupId}|${symbol}`;

export interface FollowerAccount {
  readonly id: number;
  readonly personId: number;
  readonly brokerId: number;
  readonly account: string;
  linked: boolean;
  /** The account's value as the broker last reported it. */
  value: Decimal | null;
  /** Its geo-site's approval: unapproved accounts get closing copies only (src/core/autotrade/account-approval.ts). */
  approval: AccountApproval;
  readonly setups: Map<number, FollowedSetup>;
  /** Open account orders (and ones made but not yet stored), by idempotency key. */
  readonly orders: HeldOrders;
  /** What each strategy's setup holds, by `strategyId|symbol`. */
  readonly positions: Map<string, HeldPositionOf>;
  /** Setup and symbol pairs the strategy has gone flat in: the account follows it to flat. */
  readonly flatWanted: Set<string>;
}

export interface HeldPositionOf {
  readonly strategyId: number;
  readonly symbol: string;
  readonly symbolType: string;
  position: Position;
  openedAt: number;
}

export const positionKey = (strategyId: number, symbol: string) => `${strategyId}|${symbol}`;
export const flatKey = (setupId: number, symbol: string) => `${setupId}|${symbol}`;

export const setupOfRow = (row: SetupRowFields): FollowedSetup => ({
  id: row.id,
  accountId: row.account_id,
  personId: row.person_id,
  strategyId: row.strategy_id,
  siteId: row.site_id,
  status: row.status,
  enabled: row.is_autotrade_enabled === 1,
  syncEnabled: row.is_sync_enabled === 1,
  confirmationNeeded: row.is_confirmation_needed === 1,
  scaling: storedDecimal(row.scaling_percentage),
  settings: settingsOfText(row.settings),
  stopLeavesPositionsOpen: row.stop_leave_positions_open === 1,
  stopTerminatesSubscription: row.stop_terminate_subscription === 1,
});

interface SetupRowFields {
  readonly id: number;
  readonly account_id: number;
  readonly person_id: number;
  readonly strategy_id: number;
  readonly site_id: number | null;
  readonly status: SetupStatus;
  readonly is_autotrade_enabled: number;
  readonly is_sync_enabled: number;
  readonly is_confirmation_needed: number;
  readonly scaling_percentage: string;
  readonly settings: string;
  readonly stop_leave_positions_open: number | null;
  readonly stop_terminate_subscription: number | null;
}

/** The statuses of an account order still open at the broker (or not yet sent). */
export const OPEN_STATUSES = ["PendingNew", "Working", "PartiallyFilled", "PendingCancel", "PendingReplace"];

/**
 * Reads the accounts that have live setups (or only those named), with their
 * setups, open orders and positions, in a few statements whatever their number.
 */
export async function readFollowerAccounts(db: Tx, accountIds?: readonly number[]): Promise<FollowerAccount[]> {
  if (accountIds !== undefined && accountIds.length === 0) return [];
  let setupsQuery = db.selectFrom("autotrade_setups").selectAll().where("status", "!=", "stopped");
  if (accountIds) setupsQuery = setupsQuery.where("account_id", "in", accountIds);
  const setups = await setupsQuery.execute();
  const ids = accountIds ?? [...new Set(setups.map((s) => s.account_id))];
  if (ids.length === 0) return [];
  const accounts = new Map<number, FollowerAccount>();
  for (let first = 0; first < ids.length; first += CHUNK) {
    const chunk = ids.slice(first, first + CHUNK);
    const [rows, orders, positions, fills, approvals] = await Promise.all([
      db.selectFrom("broker_accounts").selectAll().where("account_id", "in", chunk).execute(),
      db
        .selectFrom("account_orders")
        .selectAll()
        .where("account_id", "in", chunk)
        .where("status", "in", OPEN_STATUSES)
        .execute(),
      db.selectFrom("autotrade_positions").selectAll().where("account_id", "in", chunk).execute(),
      db
        .selectFrom("account_fills as f")
        .innerJoin("account_orders as o", "o.id", "f.account_order_id")
        .select(["o.account_id", "o.idempotency_key", "f.broker_fill_id"])
        .where("o.account_id", "in", chunk)
        .where("o.status", "in", OPEN_STATUSES)
        .execute(),
      accountApprovals(db, chunk),
    ]);
    for (const row of rows) {
      accounts.set(row.account_id, {
        id: row.account_id,
        personId: row.person_id,
        brokerId: row.broker_id,
        account: row.account_number,
        linked: row.is_linked === 1,
        value: row.net_liquidation === null ? null : storedDecimal(row.net_liquidation),
        approval: approvals.get(row.account_id) ?? NO_APPROVAL_NEEDED,
        setups: new Map(),
        orders: new HeldOrders(),
        positions: new Map(),
        flatWanted: new Set(),
      });
    }
    for (const order of orders) {
      accounts
        .get(order.account_id)
        ?.orders.set(order.idempotency_key, { row: order, stored: true, asking: false, fillIds: new Set() });
    }
    for (const fill of fills) {
      accounts.get(fill.account_id)?.orders.get(fill.idempotency_key)?.fillIds.add(fill.broker_fill_id);
    }
    for (const held of positions) {
      accounts.get(held.account_id)?.positions.set(positionKey(held.strategy_id, held.symbol), {
        strategyId: held.strategy_id,
        symbol: held.symbol,
        symbolType: held.symbol_type,
        position: { quantity: storedDecimal(held.quantity), cost: storedDecimal(held.cost) },
        openedAt: held.opened_at,
      });
    }
  }
  for (const setup of setups) accounts.get(setup.account_id)?.setups.set(setup.id, setupOfRow(setup));
  return [...accounts.values()];
}

const CHUNK = 500;
