import type { Logger } from "pino";
import { type MarketQuote, sameQuote } from "../core/market/quote.js";
import { type AdverseExtreme, type Focus, mergeExtremes, type TradingState } from "../core/orders/execution.js";
import { TERMINAL, WORKING } from "../core/orders/status.js";
import { type Schedule, scheduleOf, sessionAt, type TradingSession } from "../core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../core/symbols/instrument.js";
import { markClosesThrough } from "../services/equity-marks.js";
import { type TradingRuntime, workStrategy } from "../services/trading.js";
import { ORDERS_CHANNEL } from "../store/channels.js";
import { currentSchema } from "../store/migrate.js";
import type { WorkingAccount } from "./frame/account.js";
import type { AccountChanges } from "./frame/journal-entry.js";
import type { MarketData } from "./market-data.js";
import {
  dueTimeOf,
  earlier,
  type LiveOrder,
  nextDueOf,
  OrderIndex,
  strategyOrdersOf,
  watchedTradesOf,
} from "./order-index.js";

/**
 * The fill loop: it keeps every strategy's working orders in an index, and
 * for each new quote works only the strategies with an order the quote can
 * fill. The index follows each operation of the trading frame as it is
 * applied, is rebuilt from storage at start (so a restart loses none), and on
 * PostgreSQL follows the accounts other processes commit (their
 * notifications). A quote beyond an open trade's worst price is only noted;
 * such strategies are worked once a tick with the most adverse prices seen.
 * Each tick also releases parked orders and expires DAY orders as their times
 * come, and marks every strategy's equity at each NYSE close the clock
 * passes. The index is a guide, never the authority: working a strategy
 * applies the trading rules to its state in the frame.
 */
export interface FillLoopOptions {
  /** How often the market is sampled and due times are checked; 0 disables the timer (tests drive it). */
  readonly tickMs: number;
  /** The machine's time in milliseconds: when the loop last caught up is told in it (the service clock may stand still). */
  readonly systemNow: () => number;
}

/** How the loop fares, for readiness and metrics. */
export interface FillLoopStatus {
  /** Started and not stopped. */
  readonly running: boolean;
  readonly tickMs: number;
  /** When a catch-up last finished (or the loop started), in machine time; null before the start. */
  readonly caughtUpAtMs: number | null;
  /** Quotes worked since the start: new quotes of open markets. */
  readonly quotesWorked: number;
}

/** What is cached per symbol: its instrument, its session, the last quote worked. */
interface SymbolState {
  readonly instrument: Instrument | null;
  readonly schedule: Schedule | null;
  session: TradingSession | null;
  /** The last quote worked, and the opening of the session it was worked in. */
  last: MarketQuote | null;
  lastSessionOpensAtMs: number;
}

/** The most adverse prices a strategy's open trade saw since it was last worked; changed as quotes come. */
type SeenExtreme = { -readonly [K in keyof AdverseExtreme]: AdverseExtreme[K] };

type WaitingWork = "all" | { readonly orders: number[]; readonly symbols: string[] };

/** Whether instruments of the type expire (options and futures): their orders and positions are due then. */
const expires = (symbolType: string) => symbolType === "option" || symbolType === "future";

/** Something else that works orders against the market (the simulated broker): told what the loop is told. */
export interface QuoteFollower {
  /** A new quote of an open market. */
  quoteChanged(quote: MarketQuote): void;
  /** Brings its orders up to the clock; resolves once its changes are written. */
  catchUp(): Promise<void>;
  /** Resolves once what the quotes told so far did is written. */
  drain(): Promise<void>;
}

/** Something else marked at the closes the clock passes (the brokerage accounts), after the model accounts. */
export interface CloseMarker {
  /** Marks every close passed through `nowMs`, before anything trades at that time; answers how many. */
  markThrough(nowMs: number): Promise<number>;
}

export class FillLoop {
  readonly index = new OrderIndex();
  readonly #runtime: TradingRuntime;
  readonly #symbols = new Map<string, SymbolState>();
  /** Adverse prices seen for strategies' open trades since each was last worked. */
  readonly #adverse = new Map<number, Map<string, SeenExtreme>>();
  /** The quote being worked, for #noteAdverse. */
  #quote: MarketQuote | null = null;
  /**
   * Work not yet applied, by strategy (its account was loading, or ids were
   * short): quotes meanwhile add the orders they cross to it rather than
   * queue more work on orders the first may fill.
   */
  readonly #waiting = new Map<number, WaitingWork>();
  #catchingUp: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopListening: (() => Promise<void>) | null = null;
  #running = false;
  #caughtUpAtMs: number | null = null;
  #quotesWorked = 0;
  readonly #followers: QuoteFollower[] = [];
  readonly #markers: CloseMarker[] = [];

  constructor(
    runtime: TradingRuntime,
    readonly market: MarketData,
    private readonly logger: Logger,
    private readonly options: FillLoopOptions,
  ) {
    this.#runtime = { ...runtime, market };
    runtime.frame.listen({
      applied: (strategyId, account, changes) => this.#follow(strategyId, account, changes),
    });
    runtime.frame.takeAdversePricesFrom({
      take: (strategyId) => {
        const noted = this.#adverse.get(strategyId);
        this.#adverse.delete(strategyId);
        return noted;
      },
      putBack: (strategyId, extremes) => {
        this.#adverse.set(strategyId, mergeExtremes(extremes, this.#adverse.get(strategyId) ?? new Map()));
      },
    });
  }

  /**
   * Loads every account with live orders or positions into the frame (the
   * index follows them as they load), follows other processes, and starts the
   * timer.
   */
  async start(): Promise<void> {
    await this.#runtime.frame.preload();
    const { storage } = this.#runtime;
    if (storage.listen) {
      const schema = await currentSchema(storage);
      this.#stopListening = await storage.listen(
        ORDERS_CHANNEL,
        (payload) => this.#heard(payload, schema),
        // What other processes committed while the connection was down was never told: it is read.
        (listening) => {
          if (!listening) return;
          this.#runtime.frame
            .resync()
            .catch((error: unknown) => this.logger.error({ err: error }, "reading other processes' accounts failed"));
        },
      );
    }
    this.#running = true;
    this.#caughtUpAtMs = this.options.systemNow();
    if (this.options.tickMs > 0) {
      this.#timer = setInterval(() => {
        if (this.#catchingUp === null) void this.catchUp();
      }, this.options.tickMs);
      this.#timer.unref();
    }
  }

  /** Tells the follower every quote the loop works, and catches it up with the loop. */
  follow(follower: QuoteFollower): void {
    this.#followers.push(follower);
  }

  /** Runs the marker at each catch-up, after the model accounts' marks and before orders are worked. */
  marksCloses(marker: CloseMarker): void {
    this.#markers.push(marker);
  }

  get status(): FillLoopStatus {
    return {
      running: this.#running,
      tickMs: this.options.tickMs,
      caughtUpAtMs: this.#caughtUpAtMs,
      quotesWorked: this.#quotesWorked,
    };
  }

  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#stopListening?.();
    this.#stopListening = null;
    await this.#catchingUp;
    await this.#runtime.frame.drain();
  }

  /**
   * Works the strategies a new quote can fill orders of, at once: an account
   * in memory is worked before this returns (its commit follows in the next
   * batch). Quotes of a closed market and repeats of the last quote are
   * skipped.
   */
  quoteChanged(quote: MarketQuote): void {
    const symbol = this.#symbolState(quote.symbol);
    if (!symbol.schedule) return;
    const nowMs = this.#runtime.clock.nowMs();
    let session: TradingSession | null = symbol.session;
    if (!session || nowMs < session.opensAtMs || nowMs >= session.closesAtMs) {
      session = sessionAt(symbol.schedule, nowMs);
      symbol.session = session;
    }
    if (!session) return;
    const last = symbol.lastSessionOpensAtMs === session.opensAtMs ? symbol.last : null;
    // The same quote again in the same session is no new liquidity, and orders placed since were
    // tried against it when placed; in a new session it is worked again (orders placed while the
    // market was closed wait for it).
    if (last && sameQuote(last, quote)) return;
    symbol.last = quote;
    symbol.lastSessionOpensAtMs = session.opensAtMs;
    this.#quotesWorked += 1;
    for (const follower of this.#followers) follower.quoteChanged(quote);
    // A new worst price for an open trade is only noted here; the strategy is worked for it at the
    // next settling (each tick), not on every quote of a trending market.
    this.#quote = quote;
    this.index.adverse(quote.symbol, quote.bid, quote.ask, this.#noteAdverse);
    // Each strategy is worked for the orders the quote crosses (the index knows which).
    for (const [strategyId, orders] of this.index.crossing(quote.symbol, quote.bid, quote.ask)) {
      this.#work(strategyId, { orders, symbols: [] });
    }
  }

  /**
   * Brings every strategy up to the clock: releases and expiries that are due,
   * a fresh quote for every symbol with working orders or open trades, and the
   * open trades' excursions. Resolves once all of it is committed.
   */
  catchUp(): Promise<void> {
    const run = async () => {
      const { frame } = this.#runtime;
      // Marks first, of the accounts as committed: the closes passed were closes of the positions held before.
      await frame.drain();
      const now = this.#runtime.clock.nowMs();
      try {
        // The trades' worst prices seen that day are written at each close too.
        if ((await markClosesThrough(this.#runtime, now)) > 0) await frame.flushQuiet();
      } catch (error) {
        this.logger.error({ err: error }, "marking equity failed");
      }
      for (const marker of this.#markers) {
        await marker.markThrough(now).catch((error: unknown) => this.logger.error({ err: error }, "marking failed"));
      }
      for (const strategyId of this.index.due(now)) this.#work(strategyId, "all");
      for (const symbol of this.index.symbols()) {
        const instrument = this.#symbolState(symbol).instrument;
        const quote = instrument && this.market.quote(instrument);
        if (quote) this.quoteChanged(quote);
      }
      this.#settleTrades();
      await frame.drain();
      for (const follower of this.#followers) {
        await follower.catchUp().catch((error: unknown) => this.logger.error({ err: error }, "catching up failed"));
      }
      this.#caughtUpAtMs = this.options.systemNow();
    };
    const previous = this.#catchingUp ?? Promise.resolve();
    const next = previous.then(run, run).finally(() => {
      if (this.#catchingUp === next) this.#catchingUp = null;
    });
    this.#catchingUp = next;
    return next;
  }

  /** Works the strategies whose open trades saw a new worst price since they were last worked. */
  async settleTrades(): Promise<void> {
    this.#settleTrades();
    await this.#runtime.frame.drain();
    for (const follower of this.#followers) await follower.drain();
  }

  #settleTrades(): void {
    // Only the open trades are looked at (the quotes that could fill anything were worked as they came), and
    // their worst prices are written with the account's next batch: losing some to a crash harms no one.
    for (const strategyId of [...this.#adverse.keys()]) this.#work(strategyId, { orders: [], symbols: [] }, true);
  }

  #symbolState(symbol: string): SymbolState {
    let state = this.#symbols.get(symbol);
    if (!state) {
      const instrument = fromServiceSymbol(symbol);
      state = {
        instrument,
        schedule: instrument && scheduleOf(instrument),
        session: null,
        last: null,
        lastSessionOpensAtMs: Number.NaN,
      };
      this.#symbols.set(symbol, state);
    }
    return state;
  }

  /** Notes the quote being worked (`#quote`) as seen by the strategy's open trade in its symbol. */
  readonly #noteAdverse = (strategyId: number): void => {
    const quote = this.#quote as MarketQuote;
    let extremes = this.#adverse.get(strategyId);
    if (!extremes) {
      extremes = new Map();
      this.#adverse.set(strategyId, extremes);
    }
    const seen = extremes.get(quote.symbol);
    if (!seen) {
      extremes.set(quote.symbol, { bid: quote.bid, bidAtMs: quote.atMs, ask: quote.ask, askAtMs: quote.atMs });
      return;
    }
    // Changed in place: a falling market notes every quote for every trade under water.
    if (quote.bid < seen.bid) {
      seen.bid = quote.bid;
      seen.bidAtMs = quote.atMs;
    }
    if (quote.ask > seen.ask) {
      seen.ask = quote.ask;
      seen.askAtMs = quote.atMs;
    }
  };

  #work(strategyId: number, focus: Focus, quiet = false): void {
    const waiting = this.#waiting.get(strategyId);
    if (waiting !== undefined && !quiet) {
      if (waiting === "all") return;
      if (focus !== "all") {
        waiting.orders.push(...focus.orders);
        waiting.symbols.push(...focus.symbols);
        return;
      }
    }
    const extremes = this.#adverse.get(strategyId);
    this.#adverse.delete(strategyId);
    // Read when the work is applied: quotes until then add what they cross.
    const work: WaitingWork = focus === "all" ? "all" : { orders: [...focus.orders], symbols: [...focus.symbols] };
    if (!quiet) this.#waiting.set(strategyId, work);
    workStrategy(this.#runtime, strategyId, { extremes, focus: work, quiet })
      .catch((error: unknown) => this.logger.error({ err: error, strategyId }, "working a strategy's orders failed"))
      .finally(() => {
        if (this.#waiting.get(strategyId) === work) this.#waiting.delete(strategyId);
      });
  }

  /** Keeps the index on what the frame did to an account. */
  #follow(strategyId: number, account: WorkingAccount, changes: AccountChanges | null): void {
    // The strategy's waiting work, if any, is applied or follows this: later quotes see the index as it is now.
    this.#waiting.delete(strategyId);
    const { state } = account;
    if (changes === null) {
      this.index.replace(strategyOrdersOf(strategyId, this.#runtime.frame.versionOf(strategyId), state));
      return;
    }
    const changed: LiveOrder[] = [];
    const ended: number[] = [];
    // The due time moves only with orders that expire or are parked, or are in contracts that expire, and with
    // positions in such contracts. A new order can only bring it earlier; one that changed or ended, or a
    // position, may have held it, and then it is found again over the whole book (a pass over every order of
    // the strategy for each DAY order placed made the default TIF cost more the more rested).
    let timed = false;
    let dueAgain = false;
    let newDue: number | null = null;
    for (const [id, { row, isNew }] of changes.orders) {
      if (row.expires_at !== null || row.parked_until !== null || expires(row.symbol_type)) {
        timed = true;
        if (isNew) newDue = earlier(newDue, dueTimeOf(state, id));
        else dueAgain = true;
      }
      const order = state.book.get(id);
      const terms = state.terms.get(id);
      if (!order || !terms || TERMINAL.has(order.state.status)) {
        ended.push(id);
        continue;
      }
      changed.push({
        id,
        strategyId,
        instrument: terms.instrument,
        side: terms.side,
        type: terms.type,
        limit: terms.limit,
        stop: terms.stop,
        working: WORKING.has(order.state.status),
      });
    }
    for (const symbol of changes.positions.keys()) {
      if ((this.#symbolState(symbol).instrument?.expiry ?? null) !== null) {
        timed = true;
        dueAgain = true;
      }
    }
    const symbols = new Set<string>(changes.positions.keys());
    for (const { row } of changes.trades.values()) symbols.add(row.symbol);
    const watched = symbols.size === 0 ? [] : watchedTradesOf(strategyId, state, symbols);
    this.index.apply(
      strategyId,
      changed,
      ended,
      { symbols, watched },
      timed ? this.#nextDue(strategyId, state, dueAgain, newDue) : undefined,
    );
  }

  /** The strategy's next due time after a change of timed orders: the earlier of the kept one and the new orders'. */
  #nextDue(strategyId: number, state: TradingState, dueAgain: boolean, newDue: number | null): number | null {
    const kept = this.index.dueOf(strategyId);
    return dueAgain || kept === undefined ? nextDueOf(state) : earlier(kept, newDue);
  }

  /** Another process committed accounts: their state here is dropped and their orders read again. */
  #heard(payload: string, schema: string): void {
    const [from, origin, list] = payload.split("|");
    if (from !== schema || origin === this.#runtime.frame.origin || list === undefined) return;
    const moved: number[] = [];
    for (const item of list.split(",")) {
      const [, strategy, version] = item.split(":").map(Number);
      if (strategy === undefined || version === undefined || !(strategy > 0)) continue;
      if (this.#runtime.frame.versionOf(strategy) >= version) continue;
      this.#runtime.frame.forget(strategy);
      moved.push(strategy);
    }
    if (moved.length === 0) return;
    this.#runtime.frame
      .preload(moved)
      .catch((error: unknown) => this.logger.error({ err: error }, "reading other processes' accounts failed"));
  }
}
