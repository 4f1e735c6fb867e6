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
 * and market orders cross every quote. Held orders are not on the ladders; the
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

class SymbolLadders {
  readonly market = new Map<number, number>();
  readonly ladders: Record<LadderName, Rung[]> = { buyLimit: [], sellLimit: [], buyStop: [], sellStop: [] };

  get size(): number {
    let total = this.market.size;
    for (const ladder of Object.values(this.ladders)) total += ladder.length;
    return total;
  }
}

interface Placement {
  readonly symbol: string;
  readonly ladder: LadderName | "market";
  readonly key: bigint;
}

interface StrategyEntry {
  readonly version: number;
  readonly orderIds: readonly number[];
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

  /** Replaces what the index holds for a strategy, unless it already holds a newer state. */
  update(orders: StrategyOrders): boolean {
    const held = this.#strategies.get(orders.strategyId);
    if (held && held.version >= orders.version) return false;
    for (const orderId of held?.orderIds ?? []) this.#remove(orderId);
    const working = orders.live.filter((order) => order.working);
    for (const order of working) this.#add(order);
    this.#strategies.set(orders.strategyId, {
      version: orders.version,
      orderIds: working.map((order) => order.id),
      nextDueMs: orders.nextDueMs,
    });
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

  get workingOrders(): number {
    return this.#placements.size;
  }

  version(strategyId: number): number {
    return this.#strategies.get(strategyId)?.version ?? -1;
  }

  #add(order: LiveOrder): void {
    const placement = placementOf(order);
    let ladders = this.#symbols.get(placement.symbol);
    if (!ladders) {
      ladders = new SymbolLadders();
      this.#symbols.set(placement.symbol, ladders);
    }
    if (placement.ladder === "market") ladders.market.set(order.id, order.strategyId);
    else {
      const ladder = ladders.ladders[placement.ladder];
      ladder.splice(bound(ladder, placement.key, true), 0, {
        key: placement.key,
        orderId: order.id,
        strategyId: order.strategyId,
      });
    }
    this.#placements.set(order.id, placement);
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
