import type { Decimal } from "../core/decimal.js";
import { tradingEndOf } from "../core/orders/contract-expiry.js";
import type { TradingState } from "../core/orders/execution.js";
import { TERMINAL, WORKING } from "../core/orders/status.js";
import { averagePrice } from "../core/positions.js";
import type { Instrument } from "../core/symbols/instrument.js";

/** A live order as the index sees it. */
export interface LiveOrder {
  readonly id: number;
  readonly strategyId: number;
  readonly instrument: Instrument;
  readonly side: "buy" | "sell";
  readonly type: "market" | "limit" | "stop";
  readonly limit: Decimal | null;
  readonly stop: Decimal | null;
  /** Working (may fill on a quote) or held (waits for a time or a parent). */
  readonly working: boolean;
}

/** An open trade the fill loop watches: a price beyond `threshold` on the adverse side is a new worst. */
export interface WatchedTrade {
  readonly strategyId: number;
  readonly fullSymbol: string;
  /** The opening side: a long trade (buy) suffers below the threshold, a short one above. */
  readonly side: "buy" | "sell";
  /** The worst price seen, or the average entry price before the trade was ever under water. */
  readonly threshold: Decimal;
}

/** Everything the index holds of one strategy. */
export interface StrategyOrders {
  readonly strategyId: number;
  /** The account's committed version when read: a snapshot older than the one held is ignored. */
  readonly version: number;
  readonly live: readonly LiveOrder[];
  /** The earliest time an order expires or is released, or null. */
  readonly nextDueMs: number | null;
  readonly openTrades: readonly WatchedTrade[];
}

/** The live orders, the due time and the watched trades of a strategy's trading state. */
export function strategyOrdersOf(strategyId: number, version: number, state: TradingState): StrategyOrders {
  const live: LiveOrder[] = [];
  for (const order of state.book.values()) {
    const terms = state.terms.get(order.id);
    if (!terms || TERMINAL.has(order.state.status)) continue;
    live.push({
      id: order.id,
      strategyId,
      instrument: terms.instrument,
      side: terms.side,
      type: terms.type,
      limit: terms.limit,
      stop: terms.stop,
      working: WORKING.has(order.state.status),
    });
  }
  return { strategyId, version, live, nextDueMs: nextDueOf(state), openTrades: watchedTradesOf(strategyId, state) };
}

/** The earlier of two times, either of which may be none. */
export const earlier = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);

/** When a live order of the state expires (DAY, or its contract) or, held, is released (the earliest), or null. */
export function dueTimeOf(state: TradingState, orderId: number): number | null {
  const order = state.book.get(orderId);
  if (!order || TERMINAL.has(order.state.status)) return null;
  const terms = state.terms.get(orderId);
  const expires = earlier(state.expiresAtMs.get(orderId) ?? null, terms ? tradingEndOf(terms.instrument) : null);
  return order.state.status === "PendingNew" ? earlier(expires, order.parkedUntilMs) : expires;
}

/** The earliest time an order of the state expires or is released, or a position's contract expires; or null. */
export function nextDueOf(state: TradingState): number | null {
  let next: number | null = null;
  for (const id of state.book.keys()) next = earlier(next, dueTimeOf(state, id));
  for (const held of state.positions.values()) next = earlier(next, tradingEndOf(held.instrument));
  return next;
}

/**
 * The open trades of the state (or of those symbols), each with the price
 * beyond which it is worse off than ever.
 */
export function watchedTradesOf(strategyId: number, state: TradingState, symbols?: Iterable<string>): WatchedTrade[] {
  const watched: WatchedTrade[] = [];
  for (const held of symbols === undefined ? state.positions.values() : heldIn(state, symbols)) {
    const trade = state.trades.get(held.tradeKey);
    const threshold = trade?.excursion?.worstPrice ?? averagePrice(held.position);
    if (!trade || threshold === null) continue;
    watched.push({ strategyId, fullSymbol: held.instrument.fullSymbol, side: trade.side, threshold });
  }
  return watched;
}

/** The positions held in the symbols. */
function* heldIn(state: TradingState, symbols: Iterable<string>) {
  for (const symbol of symbols) {
    const held = state.positions.get(symbol);
    if (held) yield held;
  }
}

/**
 * The working orders of every strategy, indexed so that a quote finds only the
 * orders it can fill. Per symbol there are four price ladders, each sorted so
 * that the orders a quote crosses form a prefix:
 *
 * - buy limits fill once ask <= limit: keyed by -limit, crossing while key <= -ask;
 * - sell limits fill once bid >= limit: keyed by limit, crossing while key <= bid;
 * - buy stops trigger once ask >= stop: keyed by stop, crossing while key <= ask;
 * - sell stops trigger once bid <= stop: keyed by -stop, crossing while key <= -bid;
 *
 * and market orders cross every quote. Open trades sit on two more ladders,
 * so that a quote beyond the worst price a trade has seen (a new maximum
 * adverse excursion) reaches its strategy: long trades keyed by -threshold,
 * crossing while key < -bid; short trades keyed by threshold, crossing while
 * key < ask. Held orders are not on the ladders; the
 * index keeps each strategy's earliest due time (a release or an expiry)
 * instead. Each strategy's entry carries its trading version, so a snapshot
 * older than the one held is ignored.
 */
interface Rung {
  /** Moved by `adverse` on the trade ladders: a trade's worst price is the last one it was visited at. */
  key: bigint;
  readonly orderId: number;
  readonly strategyId: number;
}

type LadderName = "buyLimit" | "sellLimit" | "buyStop" | "sellStop";
type TradeLadderName = "longTrade" | "shortTrade";

class SymbolLadders {
  readonly market = new Map<number, number>();
  readonly ladders: Record<LadderName | TradeLadderName, Rung[]> = {
    buyLimit: [],
    sellLimit: [],
    buyStop: [],
    sellStop: [],
    longTrade: [],
    shortTrade: [],
  };

  get size(): number {
    let total = this.market.size;
    for (const ladder of Object.values(this.ladders)) total += ladder.length;
    return total;
  }
}

interface Placement {
  readonly symbol: string;
  readonly ladder: LadderName | TradeLadderName | "market";
  readonly key: bigint;
}

/** Where an order or trade sits: its symbol and ladder, and its rung there (a market order has none). */
type Placed =
  | { readonly symbol: string; readonly ladder: "market" }
  | { readonly symbol: string; readonly ladder: LadderName | TradeLadderName; readonly rung: Rung };

interface StrategyEntry {
  version: number;
  /** Working orders on the ladders. */
  readonly placed: Set<number>;
  /** The negative ids the index gives watched trades, by symbol. */
  readonly trades: Map<string, number>;
  nextDueMs: number | null;
}

/** The first index whose key is greater than `key` (or >= with `inclusive` false: the lower bound). */
function bound(ladder: readonly Rung[], key: bigint, upper: boolean): number {
  let low = 0;
  let high = ladder.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    const k = (ladder[middle] as Rung).key;
    if (upper ? k <= key : k < key) low = middle + 1;
    else high = middle;
  }
  return low;
}

const NO_ORDERS: ReadonlyMap<number, number[]> = new Map();

/** Whether the ladder's head is at or through the key (its first rung crosses). */
const crosses = (ladder: readonly Rung[], key: bigint) => ladder.length > 0 && (ladder[0] as Rung).key <= key;
/** Whether the ladder's head is strictly through the key. */
const beyond = (ladder: readonly Rung[], key: bigint) => ladder.length > 0 && (ladder[0] as Rung).key < key;

function placementOf(order: LiveOrder): Placement {
  const symbol = order.instrument.fullSymbol;
  const price = (value: Decimal | null) => (value === null ? 0n : (value as bigint));
  switch (order.type) {
    case "market":
      return { symbol, ladder: "market", key: 0n };
    case "limit":
      return order.side === "buy"
        ? { symbol, ladder: "buyLimit", key: -price(order.limit) }
        : { symbol, ladder: "sellLimit", key: price(order.limit) };
    case "stop":
      return order.side === "buy"
        ? { symbol, ladder: "buyStop", key: price(order.stop) }
        : { symbol, ladder: "sellStop", key: -price(order.stop) };
  }
}

export class OrderIndex {
  readonly #symbols = new Map<string, SymbolLadders>();
  readonly #placements = new Map<number, Placed>();
  readonly #strategies = new Map<number, StrategyEntry>();
  #lastTradeId = 0;

  /** Replaces what the index holds for a strategy, unless it already holds that version or a newer one. */
  update(orders: StrategyOrders): boolean {
    const held = this.#strategies.get(orders.strategyId);
    if (held && held.version >= orders.version) return false;
    this.replace(orders);
    return true;
  }

  /** Replaces what the index holds for a strategy. */
  replace(orders: StrategyOrders): void {
    const held = this.#strategies.get(orders.strategyId);
    for (const id of held?.placed ?? []) this.#remove(id);
    for (const id of held?.trades.values() ?? []) this.#remove(id);
    const entry: StrategyEntry = {
      version: orders.version,
      placed: new Set(),
      trades: new Map(),
      nextDueMs: orders.nextDueMs,
    };
    this.#strategies.set(orders.strategyId, entry);
    for (const order of orders.live) this.#placeOrder(entry, order);
    for (const trade of orders.openTrades) this.#watch(entry, trade);
  }

  /**
   * Follows one operation on a strategy: the orders it changed are placed on
   * or taken off the ladders, the open trades of the symbols it touched are
   * watched anew, and the due time is the state's.
   */
  apply(
    strategyId: number,
    changedOrders: readonly LiveOrder[],
    endedOrders: readonly number[],
    trades: { readonly symbols: Iterable<string>; readonly watched: readonly WatchedTrade[] },
    /** The strategy's next due time; undefined: unchanged. */
    nextDueMs: number | null | undefined,
  ): void {
    let entry = this.#strategies.get(strategyId);
    if (!entry) {
      entry = { version: -1, placed: new Set(), trades: new Map(), nextDueMs: nextDueMs ?? null };
      this.#strategies.set(strategyId, entry);
    }
    if (nextDueMs !== undefined) entry.nextDueMs = nextDueMs;
    for (const id of endedOrders) {
      if (entry.placed.delete(id)) this.#remove(id);
    }
    for (const order of changedOrders) this.#placeOrder(entry, order);
    for (const symbol of trades.symbols) {
      const id = entry.trades.get(symbol);
      if (id === undefined) continue;
      this.#remove(id);
      entry.trades.delete(symbol);
    }
    for (const trade of trades.watched) this.#watch(entry, trade);
  }

  #placeOrder(entry: StrategyEntry, order: LiveOrder): void {
    if (entry.placed.has(order.id)) {
      if (order.working) return;
      entry.placed.delete(order.id);
      this.#remove(order.id);
      return;
    }
    if (!order.working) return;
    this.#place(order.id, order.strategyId, placementOf(order));
    entry.placed.add(order.id);
  }

  #watch(entry: StrategyEntry, trade: WatchedTrade): void {
    const id = --this.#lastTradeId;
    const long = trade.side === "buy";
    const threshold = trade.threshold as bigint;
    this.#place(id, trade.strategyId, {
      symbol: trade.fullSymbol,
      ladder: long ? "longTrade" : "shortTrade",
      key: long ? -threshold : threshold,
    });
    entry.trades.set(trade.fullSymbol, id);
  }

  /**
   * The orders the quote may fill, by strategy; empty (and nothing allocated)
   * when none: a quiet quote looks only at each ladder's head.
   */
  crossing(symbol: string, bid: Decimal, ask: Decimal): ReadonlyMap<number, number[]> {
    const ladders = this.#symbols.get(symbol);
    if (!ladders) return NO_ORDERS;
    const { buyLimit, sellLimit, buyStop, sellStop } = ladders.ladders;
    const askKey = ask as bigint;
    const bidKey = bid as bigint;
    if (
      ladders.market.size === 0 &&
      !crosses(buyLimit, -askKey) &&
      !crosses(sellLimit, bidKey) &&
      !crosses(buyStop, askKey) &&
      !crosses(sellStop, -bidKey)
    ) {
      return NO_ORDERS;
    }
    const orders = new Map<number, number[]>();
    const add = (strategyId: number, orderId: number) => {
      const ids = orders.get(strategyId);
      if (ids) ids.push(orderId);
      else orders.set(strategyId, [orderId]);
    };
    for (const [orderId, strategyId] of ladders.market) add(strategyId, orderId);
    for (const [ladder, key] of [
      [buyLimit, -askKey],
      [sellLimit, bidKey],
      [buyStop, askKey],
      [sellStop, -bidKey],
    ] as const) {
      const end = bound(ladder, key, true);
      for (let i = 0; i < end; i++) {
        const rung = ladder[i] as Rung;
        add(rung.strategyId, rung.orderId);
      }
    }
    return orders;
  }

  /**
   * Visits each strategy with an open trade the quote takes beyond the worst
   * price it has seen (once: a strategy holds one trade per symbol), and takes
   * the quote's price as that trade's worst: a market that wavers below the
   * worst prices visits no one again until it goes further. Nothing is
   * allocated: in a falling market this runs for every quote.
   */
  adverse(symbol: string, bid: Decimal, ask: Decimal, visit: (strategyId: number) => void): void {
    const ladders = this.#symbols.get(symbol);
    if (!ladders) return;
    const { longTrade, shortTrade } = ladders.ladders;
    // Strictly beyond: an equal price is no new worst.
    const longKey = -(bid as bigint);
    const shortKey = ask as bigint;
    if (beyond(longTrade, longKey)) this.#visitThrough(longTrade, longKey, visit);
    if (beyond(shortTrade, shortKey)) this.#visitThrough(shortTrade, shortKey, visit);
  }

  /**
   * Visits the strategies of the ladder's prefix strictly before the key and
   * moves their rungs to it: the prefix was below the key and the rest is at
   * or above it, so the ladder stays sorted.
   */
  #visitThrough(ladder: readonly Rung[], key: bigint, visit: (strategyId: number) => void): void {
    const end = bound(ladder, key, false);
    for (let i = 0; i < end; i++) {
      const rung = ladder[i] as Rung;
      visit(rung.strategyId);
      rung.key = key;
    }
  }

  /** The strategy's next due time as indexed (null: none); undefined when the strategy is not indexed. */
  dueOf(strategyId: number): number | null | undefined {
    return this.#strategies.get(strategyId)?.nextDueMs;
  }

  /** Strategies with a release or expiry due at or before the instant. */
  due(atMs: number): number[] {
    const due: number[] = [];
    for (const [strategyId, entry] of this.#strategies) {
      if (entry.nextDueMs !== null && entry.nextDueMs <= atMs) due.push(strategyId);
    }
    return due;
  }

  /** Symbols with working orders or watched open trades: the ones a catch-up quotes. */
  symbols(): string[] {
    return [...this.#symbols.keys()];
  }

  /** Working orders in the index (watched trades not counted). */
  get workingOrders(): number {
    let count = 0;
    for (const entry of this.#strategies.values()) count += entry.placed.size;
    return count;
  }

  version(strategyId: number): number {
    return this.#strategies.get(strategyId)?.version ?? -1;
  }

  #place(id: number, strategyId: number, placement: Placement): void {
    let ladders = this.#symbols.get(placement.symbol);
    if (!ladders) {
      ladders = new SymbolLadders();
      this.#symbols.set(placement.symbol, ladders);
    }
    if (placement.ladder === "market") {
      ladders.market.set(id, strategyId);
      this.#placements.set(id, { symbol: placement.symbol, ladder: "market" });
      return;
    }
    const ladder = ladders.ladders[placement.ladder];
    const rung = { key: placement.key, orderId: id, strategyId };
    ladder.splice(bound(ladder, placement.key, true), 0, rung);
    this.#placements.set(id, { symbol: placement.symbol, ladder: placement.ladder, rung });
  }

  #remove(orderId: number): void {
    const placement = this.#placements.get(orderId);
    if (!placement) return;
    this.#placements.delete(orderId);
    const ladders = this.#symbols.get(placement.symbol);
    if (!ladders) return;
    if (placement.ladder === "market") ladders.market.delete(orderId);
    else {
      // Found from its key as it is now (adverse may have moved it), among the rungs sharing it.
      const { rung } = placement;
      const ladder = ladders.ladders[placement.ladder];
      for (let i = bound(ladder, rung.key, false); i < ladder.length && (ladder[i] as Rung).key === rung.key; i++) {
        if (ladder[i] === rung) {
          ladder.splice(i, 1);
          break;
        }
      }
    }
    if (ladders.size === 0) this.#symbols.delete(placement.symbol);
  }
}
