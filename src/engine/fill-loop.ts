import type { Logger } from "pino";
import type { MarketQuote } from "../core/market/quote.js";
import type { AdverseExtreme } from "../core/orders/execution.js";
import { scheduleOf, sessionAt } from "../core/sessions.js";
import { fromServiceSymbol } from "../core/symbols/instrument.js";
import { markClosesThrough } from "../services/equity-marks.js";
import type { Runtime } from "../services/runtime.js";
import {
  type OrderEvents,
  type StrategyOrders,
  storedLiveOrders,
  type TradingRuntime,
  workStrategy,
} from "../services/trading.js";
import { currentSchema } from "../store/migrate.js";
import { ORDERS_CHANNEL } from "../store/trading-state.js";
import type { MarketData } from "./market-data.js";
import { OrderIndex } from "./order-index.js";

/**
 * The fill loop: it keeps every strategy's working orders in an index
 * (rebuilt from storage at start, so a restart loses none), samples the
 * market for the symbols that have working orders or open trades, and for each
 * new quote works only the strategies with an order the quote can fill; a
 * quote beyond an open trade's worst price is noted, and such strategies are
 * worked once a tick with the most adverse prices seen. On the same
 * passes it releases parked orders and expires DAY orders as their times
 * come, and marks every strategy's equity at each NYSE close the clock
 * passes. Each strategy is worked in its own locked transaction
 * (services/trading.ts), which re-reads the orders, so the index is a guide
 * and never the authority: a stale entry costs a transaction, not a wrong fill.
 *
 * Work is serialized: one quote or one catch-up at a time, in order. With
 * PostgreSQL, the processes sharing a database tell each other about changed
 * strategies (LISTEN/NOTIFY), so each one's index follows the others' orders.
 */
export interface FillLoopOptions {
  /** How often the market is sampled and due times are checked; 0 disables the timer (tests drive it). */
  readonly tickMs: number;
}

export class FillLoop implements OrderEvents {
  readonly index = new OrderIndex();
  readonly #runtime: TradingRuntime;
  readonly #lastQuote = new Map<string, { quote: MarketQuote; sessionOpensAtMs: number }>();
  /** Adverse prices seen for strategies' open trades since each was last worked. */
  readonly #adverse = new Map<number, Map<string, AdverseExtreme>>();
  #queue: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | null = null;
  #stopListening: (() => Promise<void>) | null = null;
  #ticking = false;

  constructor(
    runtime: Runtime,
    readonly market: MarketData,
    private readonly logger: Logger,
    private readonly options: FillLoopOptions,
  ) {
    this.#runtime = { ...runtime, market, orderEvents: this };
  }

  /** The runtime trading services run with: their changes land in this loop's index. */
  get runtime(): TradingRuntime {
    return this.#runtime;
  }

  ordersChanged(orders: StrategyOrders): void {
    this.index.update(orders);
  }

  /** Rebuilds the index from storage, follows other processes, and starts the timer. */
  async start(): Promise<void> {
    for (const orders of await storedLiveOrders(this.#runtime)) this.index.update(orders);
    const { storage } = this.#runtime;
    if (storage.listen) {
      const schema = await currentSchema(storage);
      this.#stopListening = await storage.listen(ORDERS_CHANNEL, (payload) => this.#heard(payload, schema));
    }
    if (this.options.tickMs > 0) {
      this.#timer = setInterval(() => {
        if (this.#ticking) return;
        this.#ticking = true;
        this.catchUp().finally(() => {
          this.#ticking = false;
        });
      }, this.options.tickMs);
      this.#timer.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#stopListening?.();
    this.#stopListening = null;
    await this.#queue;
  }

  /** Works the strategies a new quote can fill orders of. */
  quoteChanged(quote: MarketQuote): Promise<void> {
    return this.#serially(() => this.#onQuote(quote));
  }

  /**
   * Brings every strategy up to the clock: releases and expiries that are due,
   * a fresh quote for every symbol with working orders or open trades, and the
   * open trades' excursions.
   */
  catchUp(): Promise<void> {
    return this.#serially(async () => {
      const now = this.#runtime.clock.nowMs();
      // Marks first: the closes passed were closes of the positions held before anything trades now.
      try {
        await markClosesThrough(this.#runtime, now);
      } catch (error) {
        this.logger.error({ err: error }, "marking equity failed");
      }
      for (const strategyId of this.index.due(now)) await this.#work(strategyId);
      for (const symbol of this.index.symbols()) {
        const instrument = fromServiceSymbol(symbol);
        const quote = instrument && this.market.quote(instrument);
        if (quote) await this.#onQuote(quote);
      }
      await this.#settleTrades();
    });
  }

  #serially(work: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #onQuote(quote: MarketQuote): Promise<void> {
    const instrument = fromServiceSymbol(quote.symbol);
    const session = instrument && sessionAt(scheduleOf(instrument), this.#runtime.clock.nowMs());
    if (!session) return;
    const last = this.#lastQuote.get(quote.symbol);
    // The same quote again in the same session is no new liquidity, and orders placed since were
    // tried against it when placed; in a new session it is worked again (orders placed while the
    // market was closed wait for it).
    if (
      last &&
      last.sessionOpensAtMs === session.opensAtMs &&
      last.quote.bid === quote.bid &&
      last.quote.ask === quote.ask &&
      last.quote.bidSize === quote.bidSize &&
      last.quote.askSize === quote.askSize &&
      last.quote.atMs === quote.atMs
    ) {
      return;
    }
    this.#lastQuote.set(quote.symbol, { quote, sessionOpensAtMs: session.opensAtMs });
    // A new worst price for an open trade is only noted here; the strategy is worked for it at the
    // next settling (each tick), not on every quote of a trending market.
    for (const strategyId of this.index.adverse(quote.symbol, quote.bid, quote.ask)) {
      this.#noteAdverse(strategyId, quote);
    }
    for (const strategyId of this.index.crossing(quote.symbol, quote.bid, quote.ask)) await this.#work(strategyId);
  }

  /** Works the strategies whose open trades saw a new worst price since they were last worked. */
  settleTrades(): Promise<void> {
    return this.#serially(() => this.#settleTrades());
  }

  async #settleTrades(): Promise<void> {
    for (const strategyId of [...this.#adverse.keys()]) await this.#work(strategyId);
  }

  #noteAdverse(strategyId: number, quote: MarketQuote): void {
    let extremes = this.#adverse.get(strategyId);
    if (!extremes) {
      extremes = new Map();
      this.#adverse.set(strategyId, extremes);
    }
    const seen = extremes.get(quote.symbol);
    const lowerBid = !seen || quote.bid < seen.bid;
    const higherAsk = !seen || quote.ask > seen.ask;
    extremes.set(quote.symbol, {
      bid: lowerBid ? quote.bid : (seen as AdverseExtreme).bid,
      bidAtMs: lowerBid ? quote.atMs : (seen as AdverseExtreme).bidAtMs,
      ask: higherAsk ? quote.ask : (seen as AdverseExtreme).ask,
      askAtMs: higherAsk ? quote.atMs : (seen as AdverseExtreme).askAtMs,
    });
  }

  async #work(strategyId: number): Promise<void> {
    const extremes = this.#adverse.get(strategyId);
    this.#adverse.delete(strategyId);
    try {
      await workStrategy(this.#runtime, strategyId, extremes);
    } catch (error) {
      this.logger.error({ err: error, strategyId }, "working a strategy's orders failed");
    }
  }

  #heard(payload: string, schema: string): void {
    const [from, id, version] = payload.split(":");
    const strategyId = Number(id);
    if (from !== schema || !(Number(version) > this.index.version(strategyId))) return;
    storedLiveOrders(this.#runtime, [strategyId])
      .then((changed) => {
        for (const orders of changed) this.index.update(orders);
      })
      .catch((error: unknown) => this.logger.error({ err: error, strategyId }, "reloading a strategy's orders failed"));
  }
}
