import { cashOfFill } from "../account.js";
import { type CommissionPlan, commission } from "../commissions.js";
import { abs, add, type Decimal, isZero, min, mul, round, sign, sub, ZERO } from "../decimal.js";
import { fillAgainst, type Quote, type Side } from "../fills.js";
import { applyFill, FLAT, type Position } from "../positions.js";
import { dayOrderExpiry, scheduleOf } from "../sessions.js";
import type { Instrument } from "../symbols/instrument.js";
import { type Book, type BookEvent, type BookResult, cancel, expire, fill, release } from "./book.js";
import { leavesQuantity } from "./order.js";
import { TERMINAL, WORKING } from "./status.js";
import { type OrderTerms, SIGNAL_TYPES } from "./terms.js";

/**
 * A strategy's trading state and the one step that moves it forward in time:
 * expire DAY orders whose session has closed, release held orders whose time
 * or parent has come, and fill working orders against the market, applying
 * each fill to the position and the model account's cash. Pure: the market is
 * passed in, and the result says what changed so it can be saved.
 */
export interface HeldPosition {
  readonly instrument: Instrument;
  readonly position: Position;
  readonly openedAtMs: number;
}

export interface TradingState {
  /** Live orders, and the filled parents of held ones. */
  readonly book: Book;
  readonly terms: ReadonlyMap<number, OrderTerms>;
  /** When each DAY order expires, once known. */
  readonly expiresAtMs: ReadonlyMap<number, number>;
  /** Why the service (not the owner) ended or changed an order. */
  readonly notes: ReadonlyMap<number, string>;
  /** Open positions by ServiceSymbol. */
  readonly positions: ReadonlyMap<string, HeldPosition>;
  readonly cash: Decimal;
}

/** What the fill step needs to know of the market at the moment. */
export interface MarketView {
  quote(instrument: Instrument): Quote | null;
  isOpen(instrument: Instrument): boolean;
  /** Dollars per unit of the currency, or null when no quote gives the rate. */
  usdRate(currency: string): Decimal | null;
}

export interface FillRecord {
  readonly orderId: number;
  readonly instrument: Instrument;
  readonly side: Side;
  readonly quantity: Decimal;
  readonly price: Decimal;
  /** In dollars, rounded to the cent. */
  readonly commission: Decimal;
  /** Profit of the closing part, in dollars, before commission. */
  readonly realized: Decimal;
  /** The dollar cash the fill moved, commission included. */
  readonly cash: Decimal;
  readonly usdRate: Decimal;
  readonly positionAfter: Decimal;
  readonly atMs: number;
}

export interface Advanced {
  readonly state: TradingState;
  readonly fills: readonly FillRecord[];
  readonly events: readonly BookEvent[];
}

const isLive = (state: TradingState, id: number) => {
  const order = state.book.get(id);
  return order !== undefined && !TERMINAL.has(order.state.status);
};

/** The state with a book operation's outcome applied; a refused operation is a bug in the caller. */
export function withBook(state: TradingState, result: BookResult, events: BookEvent[]): TradingState {
  if (!result.ok) throw new Error(`book operation refused: ${result.reason}`);
  events.push(...result.events);
  return { ...state, book: result.book };
}

const withNote = (state: TradingState, id: number, note: string): TradingState => ({
  ...state,
  notes: new Map(state.notes).set(id, note),
});

/**
 * Sets the expiry of DAY orders that lack one: an order working or waiting
 * for a parent's fill expires at the close of the session it was placed or
 * released in, a parked one at the close of the session its parking ends in.
 * Exits of an entry (held until the entry fills) get theirs when they start.
 */
export function stampExpiries(state: TradingState, nowMs: number): TradingState {
  let expiries: Map<number, number> | null = null;
  for (const order of state.book.values()) {
    const terms = state.terms.get(order.id);
    if (terms?.tif !== "day" || state.expiresAtMs.has(order.id) || TERMINAL.has(order.state.status)) continue;
    const schedule = scheduleOf(terms.instrument);
    const isExit = terms.signalType === SIGNAL_TYPES.profitTarget || terms.signalType === SIGNAL_TYPES.stopLoss;
    let from: number | null = nowMs;
    if (order.state.status === "PendingNew") {
      if (order.parkedUntilMs !== null && order.parkedUntilMs > nowMs) from = order.parkedUntilMs;
      else if (isExit) from = null;
    }
    if (from === null) continue;
    expiries ??= new Map(state.expiresAtMs);
    expiries.set(order.id, dayOrderExpiry(schedule, from));
  }
  return expiries ? { ...state, expiresAtMs: expiries } : state;
}

const STRANDED = "Canceled: the position it would close is no longer open";

const closingSide = (held: Decimal): Side | null => (sign(held) > 0 ? "sell" : sign(held) < 0 ? "buy" : null);

/** Advances the strategy to `nowMs` against the market as it is now. */
export function advance(state: TradingState, market: MarketView, plan: CommissionPlan, nowMs: number): Advanced {
  const events: BookEvent[] = [];
  const fills: FillRecord[] = [];
  // What each quote still offers on each side: two orders never take the same size twice.
  const sizeLeft = new Map<string, Decimal | null>();
  let current = state;
  const due = [...current.expiresAtMs].filter(([id, at]) => at <= nowMs && isLive(current, id)).map(([id]) => id);
  if (due.length > 0) current = withBook(current, expire(current.book, due, nowMs), events);
  let moved = true;
  // Each pass may release children that fill on the same quote; an order fills at most once a pass.
  for (let pass = 0; moved && pass < 50; pass++) {
    moved = false;
    current = withBook(current, release(current.book, nowMs), events);
    current = stampExpiries(current, nowMs);
    for (const order of [...current.book.values()].sort((a, b) => a.id - b.id)) {
      const live = current.book.get(order.id);
      const terms = current.terms.get(order.id);
      if (!live || !terms || !WORKING.has(live.state.status)) continue;
      const { instrument } = terms;
      const held = current.positions.get(instrument.fullSymbol)?.position.quantity ?? ZERO;
      let leaves = leavesQuantity(live.state);
      if (terms.openClose === "close") {
        if (closingSide(held) !== terms.side) {
          const canceled = cancel(current.book, order.id);
          current = withBook(current, canceled, events);
          // The note goes to every order the cancel ended: the exit and its OCA siblings.
          for (const ended of canceled.ok ? canceled.events : []) current = withNote(current, ended.orderId, STRANDED);
          moved = true;
          continue;
        }
        leaves = min(leaves, abs(held));
      }
      const quote = market.quote(instrument);
      if (!quote || !market.isOpen(instrument)) continue;
      const usdRate = market.usdRate(instrument.currency);
      if (usdRate === null) continue;
      const sizeKey = `${instrument.fullSymbol}:${terms.side}`;
      const shown = terms.side === "buy" ? quote.askSize : quote.bidSize;
      const size = sizeLeft.has(sizeKey) ? (sizeLeft.get(sizeKey) ?? null) : shown;
      const sized: Quote = terms.side === "buy" ? { ...quote, askSize: size } : { ...quote, bidSize: size };
      const filled = fillAgainst(
        { type: terms.type, side: terms.side, limit: terms.limit, stop: terms.stop, leaves },
        sized,
      );
      if (!filled) continue;
      if (size !== null) sizeLeft.set(sizeKey, sub(size, filled.quantity));
      const eventId = `fill-${order.id}-${nowMs}-${fills.length}`;
      current = withBook(current, fill(current.book, order.id, filled.quantity, filled.price, eventId, nowMs), events);
      const record = settle(current, terms, order.id, filled.quantity, filled.price, usdRate, plan, nowMs);
      current = record.state;
      fills.push(record.fill);
      // A closing order left working on a now-flat position is canceled on the next pass.
      moved = true;
    }
  }
  return { state: current, fills, events };
}

/** Applies a fill to the position and the cash. */
function settle(
  state: TradingState,
  terms: OrderTerms,
  orderId: number,
  quantity: Decimal,
  price: Decimal,
  usdRate: Decimal,
  plan: CommissionPlan,
  nowMs: number,
): { state: TradingState; fill: FillRecord } {
  const { instrument, side } = terms;
  const before = state.positions.get(instrument.fullSymbol);
  const change = applyFill(before?.position ?? FLAT, side, quantity, price, instrument.multiplier);
  const fee = round(mul(commission(plan, instrument, quantity, price), usdRate), 2);
  const realized = round(mul(change.realized, usdRate), 2);
  const cash = sub(cashOfFill(instrument, side, quantity, price, change.realized, usdRate), fee);
  const positions = new Map(state.positions);
  const after = change.position.quantity;
  if (isZero(after)) positions.delete(instrument.fullSymbol);
  else {
    const reopened = !before || sign(before.position.quantity) !== sign(after);
    positions.set(instrument.fullSymbol, {
      instrument,
      position: change.position,
      openedAtMs: reopened ? nowMs : before.openedAtMs,
    });
  }
  return {
    state: { ...state, positions, cash: add(state.cash, cash) },
    fill: {
      orderId,
      instrument,
      side,
      quantity,
      price,
      commission: fee,
      realized,
      cash,
      usdRate,
      positionAfter: after,
      atMs: nowMs,
    },
  };
}
