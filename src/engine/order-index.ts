import type { Decimal } from "../core/decimal.js";
import type { LiveOrder, StrategyOrders } from "../services/trading.js";

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
  readonly key: bigint;
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

interface StrategyEntry {
  readonly version: number;
  /** Order ids, and the negative ids the index gives watched trades. */
  readonly placed: readonly number[];
  readonly nextDueMs: number | null;
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
  readonly #placements = new Map<number, Placement>();
  readonly #strategies = new Map<number, StrategyEntry>();
  #lastTradeId = 0;

  /** Replaces what the index holds for a strategy, unless it already holds a newer state. */
  update(orders: StrategyOrders): boolean {
    const held = this.#strategies.get(orders.strategyId);
    if (held && held.version >= orders.version) return false;
    for (const id of held?.placed ?? []) this.#remove(id);
    const placed: number[] = [];
    for (const order of orders.live) {
      if (!order.working) continue;
      this.#place(order.id, order.strategyId, placementOf(order));
      placed.push(order.id);
    }
    for (const trade of orders.openTrades) {
      const id = --this.#lastTradeId;
      const long = trade.side === "buy";
      const threshold = trade.threshold as bigint;
      this.#place(id, trade.strategyId, {
        symbol: trade.fullSymbol,
        ladder: long ? "longTrade" : "shortTrade",
        key: long ? -threshold : threshold,
      });
      placed.push(id);
    }
    this.#strategies.set(orders.strategyId, { version: orders.version, placed, nextDueMs: orders.nextDueMs });
    return true;
  }

  /** The strategies with an order the quote may fill. */
  crossing(symbol: string, bid: Decimal, ask: Decimal): Set<number> {
    const strategies = new Set<number>();
    const ladders = this.#symbols.get(symbol);
    if (!ladders) return strategies;
    for (const strategyId of ladders.market.values()) strategies.add(strategyId);
    const thresholds: Record<LadderName, bigint> = {
      buyLimit: -(ask as bigint),
      sellLimit: bid as bigint,
      buyStop: ask as bigint,
      sellStop: -(bid as bigint),
    };
    for (const name of Object.keys(thresholds) as LadderName[]) {
      const ladder = ladders.ladders[name];
      const end = bound(ladder, thresholds[name], true);
      for (let i = 0; i < end; i++) strategies.add((ladder[i] as Rung).strategyId);
    }
    return strategies;
  }

  /** The strategies with an open trade the quote takes beyond the worst price it has seen. */
  adverse(symbol: string, bid: Decimal, ask: Decimal): Set<number> {
    const strategies = new Set<number>();
    const ladders = this.#symbols.get(symbol);
    if (!ladders) return strategies;
    // Strictly beyond: an equal price is no new worst.
    const thresholds: Record<TradeLadderName, bigint> = { longTrade: -(bid as bigint), shortTrade: ask as bigint };
    for (const name of Object.keys(thresholds) as TradeLadderName[]) {
      const ladder = ladders.ladders[name];
      const end = bound(ladder, thresholds[name], false);
      for (let i = 0; i < end; i++) strategies.add((ladder[i] as Rung).strategyId);
    }
    return strategies;
  }

  /** Strategies with a release or expiry due at or before the instant. */
  due(atMs: number): number[] {
    const due: number[] = [];
    for (const [strategyId, entry] of this.#strategies) {
      if (entry.nextDueMs !== null && entry.nextDueMs <= atMs) due.push(strategyId);
    }
    return due;
  }

  /** Symbols with working orders. */
  symbols(): string[] {
    return [...this.#symbols.keys()];
  }

  /** Working orders in the index (watched trades not counted). */
  get workingOrders(): number {
    let count = 0;
    for (const id of this.#placements.keys()) if (id > 0) count += 1;
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
    if (placement.ladder === "market") ladders.market.set(id, strategyId);
    else {
      const ladder = ladders.ladders[placement.ladder];
      ladder.splice(bound(ladder, placement.key, true), 0, { key: placement.key, orderId: id, strategyId });
    }
    this.#placements.set(id, placement);
  }

  #remove(orderId: number): void {
    const placement = this.#placements.get(orderId);
    if (!placement) return;
    this.#placements.delete(orderId);
    const ladders = this.#symbols.get(placement.symbol);
    if (!ladders) return;
    if (placement.ladder === "market") ladders.market.delete(orderId);
    else {
      const ladder = ladders.ladders[placement.ladder];
      for (let i = bound(ladder, placement.key, false); i < ladder.length; i++) {
        const rung = ladder[i] as Rung;
        if (rung.key !== placement.key) break;
        if (rung.orderId === orderId) {
          ladder.splice(i, 1);
          break;
        }
      }
    }
    if (ladders.size === 0) this.#symbols.delete(placement.symbol);
  }
}
