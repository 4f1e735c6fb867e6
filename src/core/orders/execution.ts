import { cashOfFill, equityOf, markPositions } from "../account.js";
import {
  addCommissions,
  type CommissionPlan,
  commission,
  commissionsByPlan,
  noCommissions,
  type PlanCommissions,
} from "../commissions.js";
import { abs, add, compare, type Decimal, isZero, max, min, mul, round, sub, ZERO } from "../decimal.js";
import { fillAgainst, type Quote, type Side } from "../fills.js";
import type { MarketView } from "../market/view.js";
import { applyFill, FLAT, type Position } from "../positions.js";
import { dayOrderExpiry, scheduleOf } from "../sessions.js";
import type { Instrument } from "../symbols/instrument.js";
import { addToTrade, adversePrice, observe, openTrade, reduceTrade, splitFee, type TradeRecord } from "../trades.js";
import { editable } from "../transient.js";
import {
  type Book,
  type BookEvent,
  type BookOrder,
  type BookResult,
  cancel,
  expire,
  fill,
  release,
  submit,
} from "./book.js";
import { hasExpired, modelSettlementOf } from "./contract-expiry.js";
import { mayExpireBy } from "./expiry-times.js";
import { childrenOf } from "./indexed-book.js";
import { ordersInSymbol } from "./indexed-terms.js";
import { leavesQuantity } from "./order.js";
import { TERMINAL, WORKING } from "./status.js";
import { closingSide, isExitSignal, type OrderTerms, SIGNAL_TYPES, serviceMarketOrder } from "./terms.js";

/**
 * A strategy's trading state and the one step that moves it forward in time:
 * expire DAY orders whose session has closed, settle what is left in expired
 * contracts, release held orders whose time or parent has come, and fill
 * working orders against the market, applying each fill to the position and
 * the model account's cash. Pure: the market is passed in, and the result
 * says what changed so it can be saved.
 */
export type { MarketView };

export interface HeldPosition {
  readonly instrument: Instrument;
  readonly position: Position;
  readonly openedAtMs: number;
  /** The open trade this position is. */
  readonly tradeKey: number;
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
  /** The open trades, and those this step closed, by key. */
  readonly trades: ReadonlyMap<number, TradeRecord>;
  readonly cash: Decimal;
  /**
   * When the holder of the state wants what happened to its orders in order
   * (the outbox), every book event is also written here, and every fill after
   * the book event that made it.
   */
  readonly log?: LoggedEvent[];
}

/** A book event, or a fill (of the book event before it), as it happened. */
export type LoggedEvent =
  | { readonly kind: "book"; readonly event: BookEvent }
  | { readonly kind: "fill"; readonly fill: FillRecord };

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
  /** The trade the fill belongs to. */
  readonly tradeKey: number;
  /** What the fill costs under each plan (the model account's own plan: what it paid). */
  readonly planCommissions: PlanCommissions;
}

/**
 * The most adverse prices seen for symbols since a strategy was last worked:
 * the lowest bid (against longs) and the highest ask (against shorts), with
 * when each was seen.
 */
export interface AdverseExtreme {
  readonly bid: Decimal;
  readonly bidAtMs: number;
  readonly ask: Decimal;
  readonly askAtMs: number;
}
export type AdverseExtremes = ReadonlyMap<string, AdverseExtreme>;

/** The most adverse of both, symbol by symbol (the earlier on a tie), in objects of its own. */
export function mergeExtremes(
  earlier: AdverseExtremes | undefined,
  later: AdverseExtremes,
): Map<string, AdverseExtreme> {
  const merged = new Map<string, AdverseExtreme>();
  for (const [symbol, seen] of earlier ?? []) merged.set(symbol, { ...seen });
  for (const [symbol, seen] of later) {
    const was = merged.get(symbol);
    merged.set(
      symbol,
      was === undefined
        ? { ...seen }
        : {
            ...(seen.bid < was.bid ? { bid: seen.bid, bidAtMs: seen.bidAtMs } : { bid: was.bid, bidAtMs: was.bidAtMs }),
            ...(seen.ask > was.ask ? { ask: seen.ask, askAtMs: seen.askAtMs } : { ask: was.ask, askAtMs: was.askAtMs }),
          },
    );
  }
  return merged;
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
  if (state.log) for (const event of result.events) state.log.push({ kind: "book", event });
  return { ...state, book: result.book };
}

const withNote = (state: TradingState, id: number, note: string): TradingState => ({
  ...state,
  notes: editable(state.notes).set(id, note),
});

/**
 * Sets the expiry of DAY orders that lack one: an order working or waiting
 * for a parent's fill expires at the close of the session it was placed or
 * released in, a parked one at the close of the session its parking ends in.
 * Exits of an entry (held until the entry's first fill) get theirs when they start.
 */
export function stampExpiries(state: TradingState, nowMs: number, only?: Iterable<number>): TradingState {
  let expiries: Map<number, number> | null = null;
  const orders = only === undefined ? state.book.values() : ordersOf(state.book, only);
  for (const order of orders) {
    const terms = state.terms.get(order.id);
    if (terms?.tif !== "day" || state.expiresAtMs.has(order.id) || TERMINAL.has(order.state.status)) continue;
    const schedule = scheduleOf(terms.instrument);
    const isExit = isExitSignal(terms.signalType);
    let from: number | null = nowMs;
    if (order.state.status === "PendingNew") {
      if (order.parkedUntilMs !== null && order.parkedUntilMs > nowMs) from = order.parkedUntilMs;
      else if (isExit) from = null;
    }
    if (from === null) continue;
    expiries ??= editable(state.expiresAtMs);
    expiries.set(order.id, dayOrderExpiry(schedule, from));
  }
  return expiries ? { ...state, expiresAtMs: expiries } : state;
}

function* ordersOf(book: Book, ids: Iterable<number>): Iterable<BookOrder> {
  for (const id of ids) {
    const order = book.get(id);
    if (order) yield order;
  }
}

const STRANDED = "Canceled: the position it would close is no longer open";

/** The key a new trade gets: the stored id it will have, or a negative stand-in when none is known. */
export type TradeKeys = (state: TradingState) => number;

/** A stand-in key for a trade not stored yet: below every key in use. */
export const standInTradeKey: TradeKeys = (state) => Math.min(0, ...state.trades.keys()) - 1;

/**
 * What an exit may still close: what its entry filled less what the entry's
 * exits (this one and its sibling) closed, so the two never close the same
 * quantity twice; null for an order that is no exit of an entry in the book.
 */
function exitCover(book: Book, exit: BookOrder): Decimal | null {
  const entry = exit.exit && exit.parentId !== null ? book.get(exit.parentId) : undefined;
  if (!entry) return null;
  let closed = ZERO;
  for (const id of childrenOf(book, entry.id)) {
    const child = book.get(id);
    if (child?.exit) closed = add(closed, child.state.filledQuantity);
  }
  return max(sub(entry.state.filledQuantity, closed), ZERO);
}

/**
 * Which working orders a step tries against the market: all of them, or those
 * an operation touched and those in symbols whose market moved. Orders the
 * step releases, and closing orders in a symbol whose position a fill
 * changes, are tried as well.
 */
export type Focus = "all" | { readonly orders: Iterable<number>; readonly symbols: Iterable<string> };

/** Makes an order the step needs (an expired contract's closing order) and answers its id. */
export type NewOrderIds = (terms: OrderTerms) => number;

/**
 * Advances the strategy to `nowMs` against the market as it is now. Expired
 * contracts are settled when every order is looked at (focus on all) and the
 * caller can make orders (`newOrder`).
 */
export function advance(
  state: TradingState,
  market: MarketView,
  plan: CommissionPlan,
  nowMs: number,
  extremes: AdverseExtremes = new Map(),
  tradeKeys: TradeKeys = standInTradeKey,
  focus: Focus = "all",
  newOrder?: NewOrderIds,
): Advanced {
  const events: BookEvent[] = [];
  const fills: FillRecord[] = [];
  // What each quote still offers on each side: two orders never take the same size twice.
  const sizeLeft = new Map<string, Decimal | null>();
  // The prices seen since the account was last worked were seen by the positions as they stood then:
  // before this operation's fills, which may close a trade that saw them or open one that did not.
  let current =
    extremes.size > 0 && state.positions.size > 0
      ? observeOpenTrades(state, market, nowMs, extremes, new Set(extremes.keys()))
      : state;
  const all = focus === "all";
  const due: number[] = [];
  if (current.expiresAtMs.size > 0 && mayExpireBy(current.expiresAtMs, nowMs)) {
    for (const [id, at] of current.expiresAtMs) if (at <= nowMs && isLive(current, id)) due.push(id);
  }
  const contractsEnded = all && newOrder ? ordersInExpiredContracts(current, nowMs) : [];
  for (const id of contractsEnded) if (!due.includes(id)) due.push(id);
  if (due.length > 0) current = withBook(current, expire(current.book, due, nowMs), events);
  for (const id of contractsEnded) current = withNote(current, id, CONTRACT_EXPIRED);
  if (all && newOrder) current = settleExpiredPositions(current, market, plan, nowMs, newOrder, fills, events);
  const focusOrders = new Set(all ? [] : focus.orders);
  const focusSymbols = new Set(all ? [] : focus.symbols);
  // Symbols whose position a fill changed: their closing orders are tried again.
  const filledSymbols = new Set<string>();
  let moved = true;
  // Each pass may release children that fill on the same quote; an order fills at most once a pass.
  for (let pass = 0; moved && pass < 50; pass++) {
    moved = false;
    // Held orders whose parent fills are released by the fill; those whose parking ends, when the clock
    // brings the account to it (focus on all).
    if (all) current = withBook(current, release(current.book, nowMs), events);
    current = stampExpiries(current, nowMs, all ? undefined : focusOrders);
    for (const order of tried(current, all, { orders: focusOrders, symbols: focusSymbols, filledSymbols })) {
      const live = current.book.get(order.id);
      const terms = current.terms.get(order.id);
      if (!live || !terms || !WORKING.has(live.state.status)) continue;
      const { instrument } = terms;
      const held = current.positions.get(instrument.fullSymbol)?.position.quantity ?? ZERO;
      let leaves = leavesQuantity(live.state);
      if (terms.openClose === "close") {
        const cover = exitCover(current.book, live);
        if (closingSide(held) !== terms.side || (cover !== null && isZero(cover))) {
          // An exit whose entry may still fill waits for that fill: it must be there to protect it.
          if (live.parentId !== null && cover !== null && isLive(current, live.parentId)) continue;
          const canceled = cancel(current.book, order.id);
          current = withBook(current, canceled, events);
          // The note goes to every order the cancel ended: the exit and its OCA siblings.
          for (const ended of canceled.ok ? canceled.events : []) current = withNote(current, ended.orderId, STRANDED);
          moved = true;
          continue;
        }
        leaves = min(leaves, abs(held));
        if (cover !== null) leaves = min(leaves, cover);
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
      // Unique for the order for all time: what it had filled before this fill only grows.
      const eventId = `fill-${order.id}-${live.state.filledQuantity}`;
      const filledOrder = fill(current.book, order.id, filled.quantity, filled.price, eventId, nowMs);
      if (!filledOrder.ok) throw new Error(`book operation refused: ${filledOrder.reason}`);
      events.push(...filledOrder.events);
      // A complete fill releases the order's children: they are tried on the next pass.
      for (const event of filledOrder.events) focusOrders.add(event.orderId);
      const settled = settle(
        { ...current, book: filledOrder.book },
        terms,
        order.id,
        filled.quantity,
        filled.price,
        usdRate,
        {
          plan,
          market,
          nowMs,
          tradeKeys,
        },
      );
      current = settled.state;
      fills.push(...settled.fills);
      // As it happened: the order's fill, the fill itself, then what the fill ended or released.
      const [filledEvent, ...following] = filledOrder.events;
      if (current.log) {
        if (filledEvent) current.log.push({ kind: "book", event: filledEvent });
        for (const made of settled.fills) current.log.push({ kind: "fill", fill: made });
        for (const event of following) current.log.push({ kind: "book", event });
      }
      // A closing order left working on a now-flat position is canceled on the next pass.
      moved = true;
      filledSymbols.add(instrument.fullSymbol);
    }
  }
  // The open trades looked at: all of them, or those in symbols whose quote moved, that filled, or that saw extremes.
  if (current.positions.size === 0) return { state: current, fills, events };
  const watched = all
    ? undefined
    : new Set([...focusSymbols, ...filledSymbols, ...extremes.keys(), ...focusedSymbols(state, focusOrders)]);
  return { state: observeOpenTrades(current, market, nowMs, new Map(), watched), fills, events };
}

const CONTRACT_EXPIRED = "Expired: its contract expired";

/** The live orders in contracts that have expired, oldest first. */
function ordersInExpiredContracts(state: TradingState, nowMs: number): number[] {
  const ended: number[] = [];
  for (const order of state.book.values()) {
    const terms = state.terms.get(order.id);
    if (terms && !TERMINAL.has(order.state.status) && hasExpired(terms.instrument, nowMs)) ended.push(order.id);
  }
  return ended.sort((a, b) => a - b);
}

/**
 * Closes each position in an expired contract at its settlement price
 * (contract-expiry.ts) through an order of its own: a market order for the
 * whole position (SignalType 7), filled at once without commission, its note
 * saying how the price was reached.
 */
function settleExpiredPositions(
  state: TradingState,
  market: MarketView,
  plan: CommissionPlan,
  nowMs: number,
  newOrder: NewOrderIds,
  fills: FillRecord[],
  events: BookEvent[],
): TradingState {
  let current = state;
  for (const held of state.positions.values()) {
    const { instrument, position } = held;
    if (!hasExpired(instrument, nowMs)) continue;
    const usdRate = market.usdRate(instrument.currency);
    // Without a dollar rate nothing can be settled; the next catch-up tries again.
    if (usdRate === null) continue;
    const quantity = abs(position.quantity);
    const side = closingSide(position.quantity) as Side;
    const terms = serviceMarketOrder(instrument, side, quantity, "close", SIGNAL_TYPES.settlement);
    const { price, note } = modelSettlementOf(instrument, position, market);
    const id = newOrder(terms);
    current = { ...current, terms: editable(current.terms).set(id, terms) };
    current = withBook(current, submit(current.book, { id, quantity }, nowMs), events);
    const filled = fill(current.book, id, quantity, price, `fill-${id}-0`, nowMs);
    if (!filled.ok) throw new Error(`book operation refused: ${filled.reason}`);
    events.push(...filled.events);
    const settled = settle({ ...current, book: filled.book }, terms, id, quantity, price, usdRate, {
      plan,
      market,
      nowMs,
      tradeKeys: standInTradeKey,
    });
    current = withNote(settled.state, id, note);
    fills.push(...settled.fills);
    if (current.log) {
      for (const event of filled.events) current.log.push({ kind: "book", event });
      for (const made of settled.fills) current.log.push({ kind: "fill", fill: made });
    }
  }
  return current;
}

/** The symbols of the orders. */
function focusedSymbols(state: TradingState, orders: Iterable<number>): string[] {
  const symbols: string[] = [];
  for (const id of orders) {
    const terms = state.terms.get(id);
    if (terms) symbols.push(terms.instrument.fullSymbol);
  }
  return symbols;
}

/**
 * The orders a pass tries, oldest first: every order, or those in focus. The
 * orders are read from the book as it stands when each is tried.
 */
function tried(
  state: TradingState,
  all: boolean,
  focus: {
    readonly orders: ReadonlySet<number>;
    readonly symbols: ReadonlySet<string>;
    readonly filledSymbols: ReadonlySet<string>;
  },
): BookOrder[] {
  if (all) return [...state.book.values()].sort((a, b) => a.id - b.id);
  const ids = new Set(focus.orders);
  for (const symbol of focus.symbols) for (const id of ordersInSymbol(state.terms, symbol, false)) ids.add(id);
  for (const symbol of focus.filledSymbols) for (const id of ordersInSymbol(state.terms, symbol, true)) ids.add(id);
  const chosen: BookOrder[] = [];
  for (const id of ids) {
    const order = state.book.get(id);
    if (order) chosen.push(order);
  }
  return chosen.sort((a, b) => a.id - b.id);
}

/**
 * Observes every open trade at the adverse side of its quote, and at the most
 * adverse price seen since the strategy was last worked, for the maximum
 * adverse excursion.
 */
export function observeOpenTrades(
  state: TradingState,
  market: MarketView,
  nowMs: number,
  extremes: AdverseExtremes = new Map(),
  /** Only the trades in these symbols (all of them when absent). */
  symbols?: ReadonlySet<string>,
): TradingState {
  let equityNow: Decimal | null = null;
  // Worked out once, and only when some trade is at a new worst.
  const equity = () => {
    equityNow ??= equityOf(state.cash, markPositions(state.positions.values(), market));
    return equityNow;
  };
  let trades: Map<number, TradeRecord> | null = null;
  for (const held of state.positions.values()) {
    if (symbols && !symbols.has(held.instrument.fullSymbol)) continue;
    const trade = (trades ?? state.trades).get(held.tradeKey);
    const quote = market.quote(held.instrument);
    const rate = market.usdRate(held.instrument.currency);
    if (!trade || !quote || !rate || !market.isOpen(held.instrument)) continue;
    let observed = trade;
    const extreme = extremes.get(held.instrument.fullSymbol);
    if (extreme) {
      const long = trade.side === "buy";
      const [price, atMs] = long ? [extreme.bid, extreme.bidAtMs] : [extreme.ask, extreme.askAtMs];
      // A price seen before the trade opened (another process closed and opened meanwhile) is not its own.
      if (atMs >= trade.openedAtMs) observed = observe(observed, held.position, price, rate, equity, atMs);
    }
    observed = observe(observed, held.position, adversePrice(trade, quote.bid, quote.ask), rate, equity, nowMs);
    if (observed === trade) continue;
    trades ??= editable(state.trades);
    trades.set(trade.key, observed);
  }
  return trades ? { ...state, trades } : state;
}

/** Nothing is charged, under any plan, for a contract settling at its expiry. */
const isFree = (terms: OrderTerms): boolean => terms.signalType === SIGNAL_TYPES.settlement;

/** Applies a fill to the position, its trade and the cash; a fill that reverses the position is settled in two parts. */
function settle(
  state: TradingState,
  terms: OrderTerms,
  orderId: number,
  quantity: Decimal,
  price: Decimal,
  usdRate: Decimal,
  context: { plan: CommissionPlan; market: MarketView; nowMs: number; tradeKeys: TradeKeys },
): { state: TradingState; fills: FillRecord[] } {
  const fee = isFree(terms)
    ? ZERO
    : round(mul(commission(context.plan, terms.instrument, quantity, price), usdRate), 2);
  const held = state.positions.get(terms.instrument.fullSymbol)?.position.quantity ?? ZERO;
  const part = { terms, orderId, price, usdRate, ...context };
  // Each part's own keys before the shared ones (docs/decisions.md, "Objects keep their hidden classes").
  if (closingSide(held) === terms.side && compare(quantity, abs(held)) > 0) {
    const [closeFee, openFee] = splitFee(fee, abs(held), quantity);
    const closing = settlePart(state, { quantity: abs(held), fee: closeFee, ...part });
    const opening = settlePart(closing.state, { quantity: sub(quantity, abs(held)), fee: openFee, ...part });
    return { state: opening.state, fills: [closing.fill, opening.fill] };
  }
  const whole = settlePart(state, { quantity, fee, ...part });
  return { state: whole.state, fills: [whole.fill] };
}

interface FillPart {
  readonly terms: OrderTerms;
  readonly orderId: number;
  readonly quantity: Decimal;
  readonly price: Decimal;
  readonly fee: Decimal;
  readonly usdRate: Decimal;
  readonly market: MarketView;
  readonly plan: CommissionPlan;
  readonly nowMs: number;
  readonly tradeKeys: TradeKeys;
}

/** A fill that opens, adds to, reduces or closes the position (never reverses it). */
function settlePart(state: TradingState, part: FillPart): { state: TradingState; fill: FillRecord } {
  const { terms, quantity, price, fee, usdRate, nowMs } = part;
  const { instrument, side } = terms;
  const before = state.positions.get(instrument.fullSymbol);
  const change = applyFill(before?.position ?? FLAT, side, quantity, price, instrument.multiplier);
  const realized = round(mul(change.realized, usdRate), 2);
  const cash = sub(cashOfFill(instrument, side, quantity, price, change.realized, usdRate), fee);
  const after = change.position.quantity;
  let trade: TradeRecord;
  if (!before) {
    trade = openTrade(part.tradeKeys(state), instrument, side, quantity, price, fee, nowMs);
  } else {
    const open = state.trades.get(before.tradeKey);
    if (!open) throw new Error(`the position in ${instrument.fullSymbol} has no open trade ${before.tradeKey}`);
    // The fill's price is an observation of the position before the fill changes it.
    const equity = () => equityOf(state.cash, markPositions(state.positions.values(), part.market));
    const observed = observe(open, before.position, price, usdRate, equity, nowMs);
    trade =
      observed.side === side
        ? addToTrade(observed, quantity, price, fee)
        : reduceTrade(observed, quantity, price, realized, fee, isZero(after), nowMs);
  }
  const planCommissions = isFree(terms)
    ? noCommissions()
    : { ...commissionsByPlan(instrument, quantity, price, usdRate), [part.plan.name]: fee };
  trade = { ...trade, planCommissions: addCommissions(trade.planCommissions, planCommissions) };
  const positions = editable(state.positions);
  if (isZero(after)) positions.delete(instrument.fullSymbol);
  else {
    positions.set(instrument.fullSymbol, {
      instrument,
      position: change.position,
      openedAtMs: before?.openedAtMs ?? nowMs,
      tradeKey: trade.key,
    });
  }
  return {
    state: { ...state, positions, trades: editable(state.trades).set(trade.key, trade), cash: add(state.cash, cash) },
    fill: {
      orderId: part.orderId,
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
      tradeKey: trade.key,
      planCommissions,
    },
  };
}
