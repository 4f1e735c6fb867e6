import { type Membership, membership } from "../../core/access.js";
import { type PlanCommissions, planCommissionsOf } from "../../core/commissions.js";
import { type Decimal, decimal } from "../../core/decimal.js";
import type { HeldPosition, TradingState } from "../../core/orders/execution.js";
import { ExpiryTimes } from "../../core/orders/expiry-times.js";
import { IndexedBook } from "../../core/orders/indexed-book.js";
import { IndexedTerms } from "../../core/orders/indexed-terms.js";
import { ACTIVE, type OrderStatus } from "../../core/orders/status.js";
import { TransientMap } from "../../core/transient.js";
import type { StoredOrder, StoredPosition } from "../../store/journal/batch.js";
import {
  type AccountRows,
  bookOrderOf,
  instrumentOf,
  TRADES_COLUMNS,
  type TradesColumn,
  termsOfRow,
  tradeOfRow,
} from "../../store/trading-state.js";

/**
 * A trading account as the frame holds it in memory. Operations change the
 * working copy at once, one after another (JavaScript runs one at a time, so
 * an account has one writer in a process); reads see the committed copy,
 * which moves only when a batch is durably committed.
 */
export interface StrategyOfAccount {
  readonly id: number;
  readonly name: string;
  readonly ownerPersonId: number;
  readonly whiteLabelSiteId: number | null;
  readonly isPrivate: boolean;
  readonly startingCapital: Decimal;
  /** The sites of the owner: whose administrators may trade the strategy. */
  readonly owner: Membership;
  /** The legacy desired-positions mode's portfolio (JSON), or null when the mode is off. */
  readonly desiredPositions: string | null;
  /** SecurityTypesEnabled columns already set. */
  readonly traded: ReadonlySet<TradesColumn>;
}

/** The account as last committed: what reads answer from. */
export interface CommittedAccount {
  readonly version: number;
  readonly eventSeq: number;
  readonly cash: Decimal;
  readonly startingCash: Decimal;
  readonly strategy: StrategyOfAccount;
  /** Active orders (working, held, pending) by id. */
  readonly orders: ReadonlyMap<number, StoredOrder>;
  /** Open positions by symbol. */
  readonly positions: ReadonlyMap<string, StoredPosition>;
}

/** The account with every operation applied, committed or not: what operations work on. */
export interface WorkingAccount {
  readonly state: TradingState;
  /** The stored image of every order in the state's book. */
  readonly rows: ReadonlyMap<number, StoredOrder>;
  /** Orders ended since the book was last pruned (ended orders leave it in bulk). */
  readonly endedInBook: number;
  readonly eventSeq: number;
  readonly commissionsPaid: Decimal;
  readonly planCommissions: PlanCommissions;
  /** The commission plan the account pays. */
  readonly commissionPlan: string;
  readonly strategy: StrategyOfAccount;
}

export const isActiveRow = (row: StoredOrder): boolean => ACTIVE.has(row.status as OrderStatus);

/** The committed and working copies of an account just read from storage. */
export function accountOfRows(rows: AccountRows): { committed: CommittedAccount; working: WorkingAccount } {
  const { account, strategy: s } = rows;
  const traded = new Set<TradesColumn>();
  for (const column of Object.values(TRADES_COLUMNS)) if (s[column] === 1) traded.add(column);
  const strategy: StrategyOfAccount = {
    id: s.id,
    name: s.name,
    ownerPersonId: s.owner_person_id,
    whiteLabelSiteId: s.white_label_site_id,
    isPrivate: s.is_private === 1,
    startingCapital: decimal(s.starting_capital),
    owner: membership(rows.owner.whiteLabelSiteId, rows.owner.geoSiteId),
    desiredPositions: s.desired_positions,
    traded,
  };
  const positions = new Map<string, HeldPosition>();
  for (const row of rows.positions) {
    positions.set(row.symbol, {
      instrument: instrumentOf(row.symbol, row.symbol_type),
      position: { quantity: decimal(row.quantity), cost: decimal(row.cost) },
      openedAtMs: row.opened_at,
      tradeKey: row.trade_id as number,
    });
  }
  const cash = decimal(account.cash);
  // The working maps are changed in place by each operation (src/core/transient.ts).
  // The keys in the order of every state the account keeps (journal-entry.ts `pruned`), `log` too: so each
  // has one hidden class (docs/decisions.md, "Objects keep their hidden classes").
  const state: TradingState = {
    // Indexed: the orders a fill or a quote concerns are found without a pass over the book.
    book: IndexedBook.holding(rows.orders.map(bookOrderOf)),
    terms: IndexedTerms.holding(rows.orders.map((row) => [row.id, termsOfRow(row)])),
    expiresAtMs: ExpiryTimes.holding(
      rows.orders.filter((row) => row.expires_at !== null).map((row) => [row.id, row.expires_at as number]),
    ),
    notes: new TransientMap(),
    positions: TransientMap.of(positions),
    trades: TransientMap.of(rows.openTrades.map((row) => [row.id, tradeOfRow(row)])),
    cash,
    log: undefined,
  };
  return {
    committed: {
      version: account.version,
      eventSeq: account.event_seq,
      cash,
      startingCash: decimal(account.starting_cash),
      strategy,
      orders: new Map(rows.orders.filter(isActiveRow).map((row) => [row.id, row])),
      positions: new Map(rows.positions.map((row) => [row.symbol, row])),
    },
    working: {
      state,
      rows: TransientMap.of(rows.orders.map((row) => [row.id, row])),
      endedInBook: rows.orders.filter((row) => !isActiveRow(row)).length,
      eventSeq: account.event_seq,
      commissionsPaid: decimal(account.commissions_paid),
      planCommissions: planCommissionsOf(account.plan_commissions),
      commissionPlan: account.commission_plan,
      strategy,
    },
  };
}
