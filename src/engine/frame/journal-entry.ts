import { addCommissions } from "../../core/commissions.js";
import { add, type Decimal, decimal, formatDecimal, ZERO } from "../../core/decimal.js";
import type { BookOrder } from "../../core/orders/book.js";
import type { FillRecord, HeldPosition, TradingState } from "../../core/orders/execution.js";
import { applyEvent, newOrder, type OrderState } from "../../core/orders/order.js";
import { type OrderStatus, TERMINAL } from "../../core/orders/status.js";
import type { OrderTerms } from "../../core/orders/terms.js";
import type { TradeRecord } from "../../core/trades.js";
import { editable, TransientMap } from "../../core/transient.js";
import type { NewFill, StoredOcaGroup, StoredOrder, StoredPosition, StoredTrade } from "../../store/journal/batch.js";
import { storedTradeOf, TRADES_COLUMNS, type TradesColumn, textOrNull } from "../../store/trading-state.js";
import { payloadOf } from "../outbox/events.js";
import type { WorkingAccount } from "./account.js";

/**
 * What one operation changed in an account, as rows to store and as order
 * events for the outbox, worked out by comparing the account before and
 * after. Events follow the order state machine (API.md "Order status codes"):
 * an order is accepted (its payload says whether it is held, A, or works at
 * once, 0), a held one starts working (0), it fills (1, 2) or ends canceled
 * (4), replaced (5), rejected (8) or expired (C); every fill is an event of
 * its own.
 */
export type OrderEventKind =
  | "accepted"
  | "working"
  | "fill"
  | "partiallyFilled"
  | "filled"
  | "canceled"
  | "replaced"
  | "rejected"
  | "expired";

/** An order event as consumers see it: the outbox row before it is serialized. */
export interface OrderEvent {
  readonly accountId: number;
  readonly strategyId: number;
  readonly seq: number;
  readonly kind: OrderEventKind;
  readonly orderId: number;
  readonly atMs: number;
  /** Who acted, and for whom. */
  readonly actorPersonId: number | null;
  readonly onBehalfOfPersonId: number | null;
  /**
   * What it says (src/engine/outbox/events.ts payloadOf): made once, stored as
   * the outbox row's payload and handed as it is to the consumers.
   */
  readonly payload: Readonly<Record<string, unknown>>;
}

/** An order an operation makes, with the terms it was checked to. */
export interface NewOrder {
  readonly id: number;
  readonly terms: OrderTerms;
  readonly cancelReplaceId: number | null;
  readonly parkedUntilMs: number | null;
  readonly doNotCreateOca: boolean;
  readonly doNotSyncToOpen: boolean;
  /** The legacy API's caller-chosen signalid. */
  readonly localSignalId: string | null;
  /** A future as the client wrote it, when not in the service's form (sentSymbolOf). */
  readonly sentSymbol: string | null;
}

/** An order the service makes itself: no replace, parking, caller's id or OCA choice of a client's. */
export const serviceOrder = (terms: OrderTerms, sentSymbol: string | null = null): Omit<NewOrder, "id"> => ({
  terms,
  cancelReplaceId: null,
  parkedUntilMs: null,
  doNotCreateOca: false,
  doNotSyncToOpen: false,
  localSignalId: null,
  sentSymbol,
});

/** The rows of one or more operations on an account, merged in order: what a batch writes for it. */
export interface AccountChanges {
  readonly orders: Map<number, { row: StoredOrder; isNew: boolean }>;
  readonly trades: Map<number, { row: StoredTrade; isNew: boolean }>;
  /** Positions by symbol; null when closed. */
  readonly positions: Map<string, StoredPosition | null>;
  readonly ocaGroups: StoredOcaGroup[];
  readonly fills: NewFill[];
  readonly events: OrderEvent[];
  readonly traded: Set<TradesColumn>;
  /** The desired-positions portfolio when the operation set it; undefined when untouched. */
  desiredPositions?: string | null;
  /** The account after the (last) operation; null before any. */
  after: WorkingAccount | null;
}

/**
 * Whether a trade changed only in when its excursion was last evaluated
 * (every look at an open trade moves it): that alone is not written, it goes
 * with the trade's next real change (a fill, a new worst price, its close).
 */
const onlyEvaluated = (was: TradeRecord, trade: TradeRecord): boolean =>
  was.excursion === trade.excursion &&
  was.closedAtMs === trade.closedAtMs &&
  was.openedQuantity === trade.openedQuantity &&
  was.closedQuantity === trade.closedQuantity &&
  was.realized === trade.realized &&
  was.commission === trade.commission;

/** The order's row as it stood in a state (its status and what it had filled). */
const asOf = (row: StoredOrder, state: OrderState): StoredOrder => ({
  ...row,
  status: state.status,
  filled_quantity: formatDecimal(state.filledQuantity),
  filled_notional: formatDecimal(state.filledNotional),
});

/** Ended orders the book may hold before they are taken out. */
const ENDED_KEPT = 64;

export const noChanges = (): AccountChanges => ({
  orders: new Map(),
  trades: new Map(),
  positions: new Map(),
  ocaGroups: [],
  fills: [],
  events: [],
  traded: new Set(),
  after: null,
});

/** Adds the later changes to the earlier ones (the later image of a row wins; a row new in either stays new). */
export function mergeChanges(into: AccountChanges, later: AccountChanges): void {
  for (const [id, change] of later.orders) {
    into.orders.set(id, { row: change.row, isNew: change.isNew || (into.orders.get(id)?.isNew ?? false) });
  }
  for (const [id, change] of later.trades) {
    into.trades.set(id, { row: change.row, isNew: change.isNew || (into.trades.get(id)?.isNew ?? false) });
  }
  for (const [symbol, position] of later.positions) into.positions.set(symbol, position);
  into.ocaGroups.push(...later.ocaGroups);
  into.fills.push(...later.fills);
  into.events.push(...later.events);
  for (const column of later.traded) into.traded.add(column);
  if (later.desiredPositions !== undefined) into.desiredPositions = later.desiredPositions;
  if (later.after) into.after = later.after;
}

export interface OperationRecord {
  readonly accountId: number;
  readonly nowMs: number;
  readonly newOrders: ReadonlyMap<number, NewOrder>;
  readonly ocaGroups: readonly StoredOcaGroup[];
  readonly fills: readonly FillRecord[];
  /** The legacy desired-positions portfolio when the operation set it. */
  readonly desiredPositions?: string | null;
  readonly actorPersonId: number | null;
  readonly onBehalfOfPersonId: number | null;
}

const STATUS_EVENTS: Partial<Record<OrderStatus, OrderEventKind>> = {
  PartiallyFilled: "partiallyFilled",
  Filled: "filled",
  Canceled: "canceled",
  Replaced: "replaced",
  Rejected: "rejected",
  Expired: "expired",
};

/**
 * What one operation changed in the account's maps, each opened for the
 * operation (src/core/transient.ts): the keys it changed and what they held.
 */
function changedOrderIds(state: TradingState): number[] {
  const ids = new Set<number>();
  for (const map of [state.book, state.expiresAtMs, state.notes] as const) {
    if (!(map instanceof TransientMap)) throw new Error("the account's maps are not open for the operation");
    for (const id of map.before.keys()) ids.add(id);
    if (map === state.notes) for (const id of map.keys()) ids.add(id);
  }
  return [...ids].sort((a, b) => a - b);
}

/** What a transient map held for the key before the operation. */
function previously<K, V>(map: ReadonlyMap<K, V>, key: K): V | undefined {
  const before = (map as TransientMap<K, V>).before;
  return before.has(key) ? before.get(key) : map.get(key);
}

/**
 * The account after an operation, and what it changed. The state's maps (and
 * the account's rows) are the account's own, changed in place by the
 * operation and open (src/core/transient.ts), so what changed is read from
 * them rather than found by comparing every order.
 */
export function recordOperation(
  before: WorkingAccount,
  after: TradingState,
  op: OperationRecord,
): { readonly account: WorkingAccount; readonly changes: AccountChanges; readonly ended: readonly StoredOrder[] } {
  const { accountId, nowMs } = op;
  const strategyId = before.strategy.id;
  const changes = noChanges();
  const rows = editable(before.rows);
  let endedNow = 0;
  for (const id of changedOrderIds(after)) {
    const order = after.book.get(id);
    if (!order) continue;
    const old = previously(after.book, id);
    const expiresAt = after.expiresAtMs.get(id) ?? null;
    const note = after.notes.get(id);
    if (
      old &&
      old.state.status === order.state.status &&
      old.state.filledQuantity === order.state.filledQuantity &&
      old.parentId === order.parentId &&
      (previously(after.expiresAtMs, id) ?? null) === expiresAt &&
      note === undefined
    ) {
      continue;
    }
    const ended = TERMINAL.has(order.state.status) && (!old || !TERMINAL.has(old.state.status));
    if (ended) endedNow += 1;
    const made = op.newOrders.get(order.id);
    const previous = rows.get(order.id);
    let row: StoredOrder;
    if (made) {
      row = newOrderRow(made, order, accountId, strategyId, nowMs);
      row = { ...row, expires_at: expiresAt, info: note ?? null, closed_at: ended ? nowMs : null };
    } else if (previous) {
      row = {
        ...previous,
        status: order.state.status,
        filled_quantity: formatDecimal(order.state.filledQuantity),
        filled_notional: formatDecimal(order.state.filledNotional),
        parent_id: order.parentId,
        expires_at: expiresAt,
        updated_at: nowMs,
        info: note ?? previous.info,
        closed_at: ended ? nowMs : previous.closed_at,
      };
    } else {
      throw new Error(`order ${order.id} of account ${accountId} changed but was never loaded`);
    }
    rows.set(order.id, row);
    changes.orders.set(order.id, { row, isNew: made !== undefined });
    if (made) {
      const column = TRADES_COLUMNS[made.terms.instrument.symbolType];
      if (!before.strategy.traded.has(column)) changes.traded.add(column);
    }
  }
  changes.ocaGroups.push(...op.ocaGroups);

  for (const [key, was] of (after.trades as TransientMap<number, TradeRecord>).before) {
    const trade = after.trades.get(key);
    if (!trade || trade === was || (was && onlyEvaluated(was, trade))) continue;
    changes.trades.set(key, { row: storedTradeOf(trade, strategyId, accountId), isNew: was === undefined });
  }
  for (const [symbol, was] of (after.positions as TransientMap<string, HeldPosition>).before) {
    const held = after.positions.get(symbol);
    if (held === was) continue;
    if (!held) {
      changes.positions.set(symbol, null);
      continue;
    }
    changes.positions.set(symbol, {
      account_id: accountId,
      strategy_id: strategyId,
      symbol,
      symbol_type: held.instrument.symbolType,
      quantity: formatDecimal(held.position.quantity),
      cost: formatDecimal(held.position.cost),
      opened_at: held.openedAtMs,
      trade_id: held.tradeKey,
    });
  }
  let commissions: Decimal = ZERO;
  let planCommissions = before.planCommissions;
  for (const fill of op.fills) {
    commissions = add(commissions, fill.commission);
    planCommissions = addCommissions(planCommissions, fill.planCommissions);
    changes.fills.push(storedFillOf(fill, accountId, strategyId));
  }

  // Events, in the order things happened within the operation.
  let seq = before.eventSeq;
  // Each symbol's position as the events go: as it was before the operation, then after each fill.
  const running = new Map<string, string>();
  const heldIn = (symbol: string) => {
    const known = running.get(symbol);
    if (known !== undefined) return known;
    const was = previously(after.positions, symbol);
    return was ? formatDecimal(was.position.quantity) : "0";
  };
  const event = (kind: OrderEventKind, row: StoredOrder, fill?: NewFill, closedTrade?: StoredTrade) => {
    seq += 1;
    if (fill) running.set(fill.symbol, fill.position_after);
    const held = kind === "accepted" || kind === "working" ? heldIn(row.symbol) : undefined;
    changes.events.push({
      accountId,
      strategyId,
      seq,
      kind,
      orderId: row.id,
      atMs: nowMs,
      actorPersonId: op.actorPersonId,
      onBehalfOfPersonId: op.onBehalfOfPersonId,
      payload: payloadOf({ kind, order: row, fill, closedTrade, held }),
    });
  };
  // The last fill of a trade that closed closes it.
  const closing = new Map<number, NewFill>();
  for (const fill of changes.fills) {
    if (fill.trade_id !== null && changes.trades.get(fill.trade_id)?.row.closed_at != null)
      closing.set(fill.trade_id, fill);
  }
  // The book's events and the fills as they happened, each order shown as it stood after each.
  const fillRows = new Map(op.fills.map((fill, i) => [fill, changes.fills[i] as NewFill]));
  const standing = new Map<number, OrderState>();
  // An order's fill is told after the fills it made: its status event waits for them.
  let waiting: { readonly kind: OrderEventKind; readonly row: StoredOrder } | null = null;
  const tell = () => {
    if (waiting) event(waiting.kind, waiting.row);
    waiting = null;
  };
  for (const entry of after.log ?? []) {
    if (entry.kind === "fill") {
      const fill = fillRows.get(entry.fill) as NewFill;
      const closedTrade =
        fill.trade_id === null || closing.get(fill.trade_id) !== fill
          ? undefined
          : changes.trades.get(fill.trade_id)?.row;
      const row = rows.get(fill.order_id) as StoredOrder;
      const state = standing.get(fill.order_id);
      event("fill", state ? asOf(row, state) : row, fill, closedTrade);
      continue;
    }
    tell();
    const { orderId, event: happened } = entry.event;
    const row = rows.get(orderId);
    if (!row) continue;
    const known = standing.get(orderId) ?? previously(after.book, orderId)?.state;
    const applied = applyEvent(known ?? newOrder(decimal(row.quantity)), happened);
    if (!applied.ok) continue;
    standing.set(orderId, applied.state);
    const shown = asOf(row, applied.state);
    if (happened.kind === "held") {
      if (known === undefined) event("accepted", shown);
    } else if (happened.kind === "accepted") {
      // A new order working at once is accepted; a held one starts working.
      event(known === undefined ? "accepted" : "working", shown);
    } else {
      const kind = STATUS_EVENTS[applied.state.status];
      if (kind && happened.kind === "fill") waiting = { kind, row: shown };
      else if (kind) event(kind, shown);
    }
  }
  tell();
  if (op.desiredPositions !== undefined) changes.desiredPositions = op.desiredPositions;

  const ended: StoredOrder[] = [];
  // Ended orders leave the book in bulk: looking for what still waits on them takes a pass over the book.
  // Those a live order still waits on stay and are not counted again: counted, an account holding more
  // filled entries with working exits than the threshold pruned its whole book on every operation.
  const prune = before.endedInBook + endedNow > Math.max(ENDED_KEPT, after.book.size / 8);
  const endedInBook = prune ? 0 : before.endedInBook + endedNow;
  const state = pruned(after, rows, ended, prune);
  const strategy =
    changes.traded.size === 0 && op.desiredPositions === undefined
      ? before.strategy
      : {
          ...before.strategy,
          traded: new Set([...before.strategy.traded, ...changes.traded]),
          desiredPositions: op.desiredPositions === undefined ? before.strategy.desiredPositions : op.desiredPositions,
        };
  // Every key written out (docs/decisions.md, "Objects keep their hidden classes").
  const account: WorkingAccount = {
    state,
    rows,
    endedInBook,
    eventSeq: seq,
    commissionsPaid: add(before.commissionsPaid, commissions),
    planCommissions,
    commissionPlan: before.commissionPlan,
    strategy,
  };
  changes.after = account;
  return { account, changes, ended };
}

function newOrderRow(
  made: NewOrder,
  order: BookOrder,
  accountId: number,
  strategyId: number,
  nowMs: number,
): StoredOrder {
  const { terms } = made;
  return {
    id: made.id,
    strategy_id: strategyId,
    account_id: accountId,
    symbol: terms.instrument.fullSymbol,
    symbol_type: terms.instrument.symbolType,
    order_type: terms.type,
    side: terms.side,
    open_close: terms.openClose,
    tif: terms.tif,
    quantity: formatDecimal(terms.quantity),
    limit_price: textOrNull(terms.limit),
    stop_price: textOrNull(terms.stop),
    profit_target: textOrNull(terms.profitTarget),
    stop_loss: textOrNull(terms.stopLoss),
    do_not_create_oca: made.doNotCreateOca ? 1 : 0,
    do_not_sync_to_open: made.doNotSyncToOpen ? 1 : 0,
    parent_id: order.parentId,
    oca_group_id: order.ocaGroup,
    cancel_replace_id: made.cancelReplaceId,
    parked_until: made.parkedUntilMs,
    expires_at: null,
    signal_type: terms.signalType,
    status: order.state.status,
    filled_quantity: formatDecimal(order.state.filledQuantity),
    filled_notional: formatDecimal(order.state.filledNotional),
    info: null,
    posted_at: nowMs,
    updated_at: nowMs,
    closed_at: null,
    local_signal_id: made.localSignalId,
    sent_symbol: made.sentSymbol,
  };
}

function storedFillOf(fill: FillRecord, accountId: number, strategyId: number): NewFill {
  return {
    order_id: fill.orderId,
    strategy_id: strategyId,
    account_id: accountId,
    trade_id: fill.tradeKey,
    symbol: fill.instrument.fullSymbol,
    symbol_type: fill.instrument.symbolType,
    side: fill.side,
    quantity: formatDecimal(fill.quantity),
    price: formatDecimal(fill.price),
    commission: formatDecimal(fill.commission),
    realized: formatDecimal(fill.realized),
    cash: formatDecimal(fill.cash),
    usd_rate: formatDecimal(fill.usdRate),
    position_after: formatDecimal(fill.positionAfter),
    filled_at: fill.atMs,
  };
}

/**
 * The state kept between operations: closed trades leave, notes (written
 * into the rows) are cleared, and with `orders` the ended orders leave the
 * book unless a live order waits on them (or they are an exit of such an
 * entry). The rows of the orders that left are added to `ended`.
 */
function pruned(
  state: TradingState,
  rows: Map<number, StoredOrder>,
  ended: StoredOrder[],
  orders: boolean,
): TradingState {
  if (orders) {
    const parents = new Set<number>();
    for (const order of state.book.values()) {
      if (!TERMINAL.has(order.state.status) && order.parentId !== null) parents.add(order.parentId);
    }
    // An ended exit stays beside a kept entry: what it closed counts against what its sibling may close.
    for (const order of state.book.values()) {
      if (order.exit && order.parentId !== null && parents.has(order.parentId)) parents.add(order.id);
    }
    const book = editable(state.book);
    const terms = editable(state.terms);
    const expiresAtMs = editable(state.expiresAtMs);
    for (const order of [...book.values()]) {
      if (!TERMINAL.has(order.state.status) || parents.has(order.id)) continue;
      book.delete(order.id);
      terms.delete(order.id);
      expiresAtMs.delete(order.id);
      const row = rows.get(order.id);
      if (row) ended.push(row);
      rows.delete(order.id);
    }
    state = { ...state, book, terms, expiresAtMs };
  }
  let trades = state.trades;
  for (const [key, trade] of state.trades) {
    if (trade.closedAtMs === null) continue;
    trades = trades === state.trades ? editable(trades) : trades;
    (trades as Map<number, TradeRecord>).delete(key);
  }
  const notes = state.notes.size === 0 ? state.notes : editable(state.notes);
  if (notes !== state.notes) (notes as Map<number, string>).clear();
  // The log was the operation's: the account keeps none. Every key written out, `log` too: the next
  // operation's log replaces it (docs/decisions.md, "Objects keep their hidden classes").
  return {
    book: state.book,
    terms: state.terms,
    expiresAtMs: state.expiresAtMs,
    notes,
    positions: state.positions,
    trades,
    cash: state.cash,
    log: undefined,
  };
}
