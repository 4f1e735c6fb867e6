import { administers, type Caller, isServiceAdmin, membership } from "../core/access.js";
import { type AccountSummary, markPositions, summarize } from "../core/account.js";
import { COMMISSION_PLANS } from "../core/commissions.js";
import { add, type Decimal, decimal, div, fromInteger, isZero, neg, ONE } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { MarketQuote } from "../core/market/quote.js";
import {
  type AdverseExtremes,
  advance,
  type FillRecord,
  type MarketView,
  type TradingState,
} from "../core/orders/execution.js";
import { type OrderStatus, TERMINAL, WORKING } from "../core/orders/status.js";
import { averagePrice } from "../core/positions.js";
import { scheduleOf, sessionAt } from "../core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../core/symbols/instrument.js";
import type { MarketData } from "../engine/market-data.js";
import {
  instrumentOf,
  LIVE_STATUSES,
  loadTradingState,
  lockStrategy,
  notifyOrdersChanged,
  type StrategyRow,
  saveTradingState,
} from "../store/trading-state.js";
import { type Tx, transaction } from "../store/transaction.js";
import type { RequestContext, Runtime } from "./runtime.js";

/**
 * The frame of every trading operation: one transaction that locks the
 * strategy, loads its live orders and positions, applies the operation, lets
 * the market act on the result at once (a marketable order fills before the
 * answer), saves, and after the commit tells the fill loop what the
 * strategy's live orders now are.
 */
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

export interface StrategyOrders {
  readonly strategyId: number;
  /** The strategy's trading version after the change: a cache keeps the newest it has seen. */
  readonly version: number;
  readonly live: readonly LiveOrder[];
  /** The earliest time an order expires or is released, or null. */
  readonly nextDueMs: number | null;
  /** The open trades, watched for new adverse prices (their maximum adverse excursion). */
  readonly openTrades: readonly WatchedTrade[];
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

/** Where trading operations report the live orders they leave behind (the fill loop listens). */
export interface OrderEvents {
  ordersChanged(orders: StrategyOrders): void;
}

export interface TradingRuntime extends Runtime {
  readonly market: MarketData;
  readonly orderEvents: OrderEvents;
}

export interface TradingContext extends TradingRuntime, RequestContext {}

/** Model accounts pay the Default commission plan. */
export const MODEL_ACCOUNT_PLAN = COMMISSION_PLANS[0] as (typeof COMMISSION_PLANS)[number];

/** A market view that also records what fills took from the quotes it showed. */
export interface TradingMarketView extends MarketView {
  /** Takes the fills' quantities from the quotes' sizes (negative: gives them back). */
  take(fills: readonly FillRecord[], direction?: 1 | -1): void;
}

/** Prices (less the size fills have taken), sessions and dollar rates at the moment, read once per symbol. */
export function marketViewAt(market: MarketData, nowMs: number): TradingMarketView {
  const quotes = new Map<string, MarketQuote | null>();
  const rawQuote = (instrument: Instrument) => {
    if (!quotes.has(instrument.fullSymbol)) quotes.set(instrument.fullSymbol, market.quoteAt(instrument, nowMs));
    return quotes.get(instrument.fullSymbol) ?? null;
  };
  const quoteOf = (instrument: Instrument) => {
    const quote = rawQuote(instrument);
    return quote && market.available(quote);
  };
  const mid = (symbol: string): Decimal | null => {
    const instrument = fromServiceSymbol(symbol, "forex");
    const quote = instrument && quoteOf(instrument);
    return quote ? div(add(quote.bid, quote.ask), fromInteger(2)) : null;
  };
  return {
    quote: quoteOf,
    isOpen: (instrument) => sessionAt(scheduleOf(instrument), nowMs) !== null,
    usdRate(currency) {
      if (currency === "USD") return ONE;
      const direct = mid(`${currency}USD`);
      if (direct !== null) return direct;
      const inverse = mid(`USD${currency}`);
      return inverse === null || isZero(inverse) ? null : div(ONE, inverse);
    },
    take(fills, direction = 1) {
      for (const fill of fills) {
        const quote = rawQuote(fill.instrument);
        if (quote) market.take(quote, fill.side, direction === 1 ? fill.quantity : neg(fill.quantity));
      }
    },
  };
}

/** The model account of a strategy now: starting cash, cash, equity, margin used and buying power, in dollars. */
export async function modelAccount(
  runtime: TradingRuntime,
  strategyId: number,
): Promise<AccountSummary & { readonly startingCash: Decimal }> {
  const strategy = await runtime.storage.db
    .selectFrom("strategies")
    .select(["cash", "starting_capital"])
    .where("id", "=", strategyId)
    .executeTakeFirst();
  if (!strategy) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${strategyId}` });
  const rows = await runtime.storage.db
    .selectFrom("positions")
    .selectAll()
    .where("strategy_id", "=", strategyId)
    .execute();
  const held = rows.map((row) => ({
    instrument: instrumentOf(row.symbol, row.symbol_type),
    position: { quantity: decimal(row.quantity), cost: decimal(row.cost) },
    openedAtMs: row.opened_at,
  }));
  const account = summarize(
    decimal(strategy.cash),
    markPositions(held, marketViewAt(runtime.market, runtime.clock.nowMs())),
  );
  return { ...account, startingCash: decimal(strategy.starting_capital) };
}

/** Who may trade a strategy and read its orders: its owner, the owner's site administrators, service admins. */
export async function mayTrade(tx: Tx, caller: Caller, strategy: StrategyRow): Promise<boolean> {
  if (strategy.owner_person_id === caller.personId || isServiceAdmin(caller)) return true;
  if (caller.role === "person") return false;
  const owner = await tx
    .selectFrom("persons as p")
    .leftJoin("sites as s", "s.id", "p.white_label_site_id")
    .select(["p.white_label_site_id", "p.geo_site_id", "s.geo_site_id as site_geo_id"])
    .where("p.id", "=", strategy.owner_person_id)
    .executeTakeFirst();
  return (
    owner !== undefined &&
    administers(caller, membership(owner.white_label_site_id, owner.geo_site_id ?? owner.site_geo_id))
  );
}

export function liveOrdersOf(
  strategyId: number,
  state: TradingState,
): { live: LiveOrder[]; nextDueMs: number | null; openTrades: WatchedTrade[] } {
  const live: LiveOrder[] = [];
  let nextDueMs: number | null = null;
  const due = (at: number | null | undefined) => {
    if (at !== null && at !== undefined && (nextDueMs === null || at < nextDueMs)) nextDueMs = at;
  };
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
    due(state.expiresAtMs.get(order.id));
    if (order.state.status === "PendingNew") due(order.parkedUntilMs);
  }
  const openTrades: WatchedTrade[] = [];
  for (const held of state.positions.values()) {
    const trade = state.trades.get(held.tradeKey);
    const threshold = trade?.excursion?.worstPrice ?? averagePrice(held.position);
    if (!trade || threshold === null) continue;
    openTrades.push({ strategyId, fullSymbol: held.instrument.fullSymbol, side: trade.side, threshold });
  }
  return { live, nextDueMs, openTrades };
}

export interface TradeStep<T> {
  readonly state: TradingState;
  readonly result: T;
}

/**
 * Runs one trading operation on a strategy. `authorize` sees the locked
 * strategy first (refusing throws); `step` changes the loaded state. Without
 * a caller (the fill loop, the schedulers) nothing is authorized.
 */
export async function tradeOn<T>(
  runtime: TradingRuntime,
  strategyId: number,
  caller: Caller | null,
  step: (tx: Tx, strategy: StrategyRow, state: TradingState, nowMs: number) => Promise<TradeStep<T>>,
  /** Adverse prices the fill loop saw since it last worked the strategy (for open trades' excursions). */
  extremes?: AdverseExtremes,
): Promise<T> {
  // What the step took from the quotes' sizes, given back if the transaction fails.
  let taken: { view: TradingMarketView; fills: readonly FillRecord[] } | null = null;
  const outcome = await transaction(runtime.storage, async (tx) => {
    const strategy = await lockStrategy(tx, runtime.storage.backend, strategyId);
    if (!strategy) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${strategyId}` });
    if (caller && !(await mayTrade(tx, caller, strategy))) {
      throw refuse("Forbidden", {
        field: "StrategyId",
        message: "Only the strategy's owner, the owner's site administrators and service admins may trade it",
      });
    }
    const nowMs = runtime.clock.nowMs();
    const before = await loadTradingState(tx, strategy);
    const stepped = await step(tx, strategy, before, nowMs);
    const view = marketViewAt(runtime.market, nowMs);
    const advanced = advance(stepped.state, view, MODEL_ACCOUNT_PLAN, nowMs, extremes);
    view.take(advanced.fills);
    taken = { view, fills: advanced.fills };
    const version = await saveTradingState(tx, strategy, before, advanced.state, advanced.fills, nowMs);
    await notifyOrdersChanged(tx, runtime.storage.backend, strategyId, version);
    return { result: stepped.result, version, state: advanced.state };
  }).catch((error: unknown) => {
    taken?.view.take(taken.fills, -1);
    throw error;
  });
  runtime.orderEvents.ordersChanged({
    strategyId,
    version: outcome.version,
    ...liveOrdersOf(strategyId, outcome.state),
  });
  return outcome.result;
}

/** Lets the market and the clock act on a strategy: fills, releases, expiries and excursions due now. */
export const workStrategy = (runtime: TradingRuntime, strategyId: number, extremes?: AdverseExtremes): Promise<void> =>
  tradeOn(runtime, strategyId, null, async (_tx, _strategy, state) => ({ state, result: undefined }), extremes);

/**
 * The live orders of the strategies (all of them when no ids are given) as
 * stored: the fill loop rebuilds its index from this at start, and reloads a
 * strategy another process changed.
 */
export async function storedLiveOrders(runtime: Runtime, strategyIds?: readonly number[]): Promise<StrategyOrders[]> {
  let query = runtime.storage.db
    .selectFrom("orders as o")
    .innerJoin("strategies as st", "st.id", "o.strategy_id")
    .select([
      "o.id",
      "o.strategy_id",
      "o.symbol",
      "o.symbol_type",
      "o.side",
      "o.order_type",
      "o.limit_price",
      "o.stop_price",
      "o.status",
      "o.parked_until",
      "o.expires_at",
      "st.trading_version",
    ])
    .where("o.status", "in", LIVE_STATUSES);
  if (strategyIds) query = query.where("o.strategy_id", "in", [...strategyIds]);
  const rows = await query.orderBy("o.strategy_id").orderBy("o.id").execute();
  let held = runtime.storage.db
    .selectFrom("positions as p")
    .innerJoin("strategies as st", "st.id", "p.strategy_id")
    .leftJoin("trades as t", "t.id", "p.trade_id")
    .select(["p.strategy_id", "p.symbol", "p.quantity", "p.cost", "t.side", "t.mae_worst_price", "st.trading_version"]);
  if (strategyIds) held = held.where("p.strategy_id", "in", [...strategyIds]);
  const positions = await held.execute();
  type Entry = { version: number; live: LiveOrder[]; nextDueMs: number | null; openTrades: WatchedTrade[] };
  const byStrategy = new Map<number, Entry>();
  const entryOf = (strategyId: number, version: number): Entry => {
    let entry = byStrategy.get(strategyId);
    if (!entry) {
      entry = { version, live: [], nextDueMs: null, openTrades: [] };
      byStrategy.set(strategyId, entry);
    }
    return entry;
  };
  for (const id of strategyIds ?? []) {
    const version = await runtime.storage.db
      .selectFrom("strategies")
      .select("trading_version")
      .where("id", "=", id)
      .executeTakeFirst();
    if (version) entryOf(id, version.trading_version);
  }
  for (const p of positions) {
    const threshold =
      p.mae_worst_price === null
        ? averagePrice({ quantity: decimal(p.quantity), cost: decimal(p.cost) })
        : decimal(p.mae_worst_price);
    if (threshold === null || p.side === null) continue;
    entryOf(p.strategy_id, p.trading_version).openTrades.push({
      strategyId: p.strategy_id,
      fullSymbol: p.symbol,
      side: p.side,
      threshold,
    });
  }
  for (const row of rows) {
    const entry = entryOf(row.strategy_id, row.trading_version);
    const status = row.status as OrderStatus;
    entry.live.push({
      id: row.id,
      strategyId: row.strategy_id,
      instrument: instrumentOf(row.symbol, row.symbol_type),
      side: row.side,
      type: row.order_type,
      limit: row.limit_price === null ? null : decimal(row.limit_price),
      stop: row.stop_price === null ? null : decimal(row.stop_price),
      working: WORKING.has(status),
    });
    for (const at of [row.expires_at, status === "PendingNew" ? row.parked_until : null]) {
      if (at !== null && (entry.nextDueMs === null || at < entry.nextDueMs)) entry.nextDueMs = at;
    }
  }
  return [...byStrategy].map(([strategyId, entry]) => ({ strategyId, ...entry }));
}
