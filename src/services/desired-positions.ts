import {
  abs,
  compare,
  type Decimal,
  decimal,
  formatDecimal,
  isMultipleOf,
  isZero,
  ONE,
  sign,
  sub,
  ZERO,
} from "../core/decimal.js";
import { type ErrorEntry, Refusal } from "../core/errors.js";
import type { Side } from "../core/fills.js";
import { type BookEvent, cancel, submit } from "../core/orders/book.js";
import { hasExpired } from "../core/orders/contract-expiry.js";
import { type TradingState, withBook } from "../core/orders/execution.js";
import { TERMINAL } from "../core/orders/status.js";
import { type OrderTerms, SIGNAL_TYPES, serviceMarketOrder } from "../core/orders/terms.js";
import type { Instrument } from "../core/symbols/instrument.js";
import { editable } from "../core/transient.js";
import { serviceOrder } from "../engine/frame/journal-entry.js";
import { instrumentOf } from "../store/trading-state.js";
import { type OrderView, orderViews } from "./order-reads.js";
import { checkBuyingPower } from "./orders.js";
import { dbOf } from "./runtime.js";
import { type TradingContext, tradeOn } from "./trading.js";

/**
 * SetDesiredPositions: the owner states the portfolio the strategy must
 * hold; the service cancels the strategy's live orders (they would move it
 * elsewhere) and sends market orders (GTC, so they wait for a closed market
 * to open) for every difference: positions left out are closed, a position
 * on the other side is closed and then opened the other way (the opening
 * order waits for the close to fill). An opening order the account cannot
 * afford is rejected (not stored) and reported.
 */
export interface DesiredPosition {
  readonly instrument: Instrument;
  /** Signed: below zero is short. */
  readonly quantity: Decimal;
  /** A future as the client wrote it, when not in the service's form (sentSymbolOf): its orders remember it. */
  readonly sentSymbol?: string | null | undefined;
}

export interface RejectedOrder {
  readonly terms: OrderTerms;
  readonly reason: string;
}

export interface DesiredPositionsOutcome {
  readonly newSignals: readonly OrderView[];
  readonly canceledSignals: readonly OrderView[];
  readonly rejectedSignals: readonly RejectedOrder[];
}

const marketOrder = (instrument: Instrument, side: Side, quantity: Decimal, openClose: "open" | "close"): OrderTerms =>
  serviceMarketOrder(instrument, side, quantity, openClose, SIGNAL_TYPES.desiredPositions);

function checkDesired(positions: readonly DesiredPosition[], nowMs: number): void {
  const errors: ErrorEntry[] = [];
  const seen = new Set<string>();
  positions.forEach((position, index) => {
    const field = `Positions[${index}]`;
    if (isZero(position.quantity) || !isMultipleOf(position.quantity, ONE)) {
      errors.push({
        name: "InvalidValue",
        field: `${field}.Quantity`,
        message: "Quantity must be a whole number other than zero",
      });
    }
    if (hasExpired(position.instrument, nowMs)) {
      errors.push({
        name: "InvalidSymbol",
        field: `${field}.ServiceSymbol`,
        message: `${position.instrument.fullSymbol} has expired`,
      });
    }
    if (seen.has(position.instrument.fullSymbol)) {
      errors.push({ name: "InvalidValue", field, message: `${position.instrument.fullSymbol} is listed twice` });
    }
    seen.add(position.instrument.fullSymbol);
  });
  if (errors.length > 0) throw new Refusal(errors);
}

export async function setDesiredPositions(
  ctx: TradingContext,
  strategyId: number,
  positions: readonly DesiredPosition[],
  /** Legacy: also hold the strategy at this portfolio (signal entry off) until the mode is turned off. */
  engage = false,
): Promise<DesiredPositionsOutcome> {
  checkDesired(positions, ctx.clock.nowMs());
  const outcome = await tradeOn(ctx, strategyId, (op) => {
    const { nowMs, market } = op;
    const loaded = op.account.state;
    if (engage) op.setDesiredPositions(JSON.stringify(positions.map(storedPosition)));
    const events: BookEvent[] = [];
    let state: TradingState = loaded;
    const canceled: number[] = [];
    for (const order of loaded.book.values()) {
      if (TERMINAL.has(state.book.get(order.id)?.state.status ?? "Filled")) continue;
      const result = cancel(state.book, order.id);
      state = withBook(state, result, events);
      if (result.ok)
        for (const ended of result.events) if (ended.event.kind === "canceled") canceled.push(ended.orderId);
    }
    const wanted = new Map(positions.map((p) => [p.instrument.fullSymbol, p]));
    const instruments = new Map<string, Instrument>();
    for (const held of state.positions.values()) instruments.set(held.instrument.fullSymbol, held.instrument);
    for (const p of positions) instruments.set(p.instrument.fullSymbol, p.instrument);
    const created: number[] = [];
    const rejected: RejectedOrder[] = [];
    const add = (terms: OrderTerms, parentId: number | null): number => {
      const id = op.newOrder(serviceOrder(terms, wanted.get(terms.instrument.fullSymbol)?.sentSymbol ?? null));
      state = { ...state, terms: editable(state.terms).set(id, terms) };
      state = withBook(state, submit(state.book, { id, quantity: terms.quantity, parentId }, nowMs), events);
      created.push(id);
      return id;
    };
    for (const [symbol, instrument] of [...instruments].sort(([a], [b]) => a.localeCompare(b))) {
      const held = state.positions.get(symbol)?.position.quantity ?? ZERO;
      const target = wanted.get(symbol)?.quantity ?? ZERO;
      if (compare(held, target) === 0) continue;
      let closeId: number | null = null;
      let toOpen = target;
      if (!isZero(held)) {
        const reversing = sign(target) !== sign(held);
        const shrinking = !reversing && compare(abs(target), abs(held)) < 0;
        if (reversing || shrinking) {
          const quantity = reversing ? abs(held) : abs(sub(held, target));
          closeId = add(marketOrder(instrument, sign(held) > 0 ? "sell" : "buy", quantity, "close"), null);
          toOpen = reversing ? target : ZERO;
        } else {
          toOpen = sub(target, held);
        }
      }
      if (isZero(toOpen)) continue;
      const terms = marketOrder(instrument, sign(toOpen) > 0 ? "buy" : "sell", abs(toOpen), "open");
      try {
        checkBuyingPower(state, terms, market, closeId === null ? undefined : state.positions.get(symbol));
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        rejected.push({ terms, reason: error.message });
        continue;
      }
      add(terms, closeId);
    }
    return { state, result: { created, canceled, rejected } };
  });
  const rows = async (ids: readonly number[]) =>
    ids.length === 0
      ? []
      : ((await orderViews(dbOf(ctx))
          .where("o.id", "in", [...ids])
          .orderBy("o.id")
          .execute()) as OrderView[]);
  return {
    newSignals: await rows(outcome.created),
    canceledSignals: await rows(outcome.canceled),
    rejectedSignals: outcome.rejected,
  };
}

interface StoredPosition {
  readonly symbol: string;
  readonly symbolType: string;
  readonly quantity: string;
  /** Absent for the service's form (and in portfolios held before it was kept). */
  readonly sentSymbol?: string;
}

const storedPosition = (position: DesiredPosition): StoredPosition => ({
  symbol: position.instrument.fullSymbol,
  symbolType: position.instrument.symbolType,
  quantity: formatDecimal(position.quantity),
  ...(position.sentSymbol ? { sentSymbol: position.sentSymbol } : {}),
});

/**
 * The portfolio the legacy desired-positions mode holds, or null when the mode
 * is off. A contract that has expired since the portfolio was set is left out:
 * its position was settled (contract-expiry.ts) and nothing can hold it again.
 */
export async function heldPortfolio(ctx: TradingContext, strategyId: number): Promise<DesiredPosition[] | null> {
  const account = (await ctx.frame.committedAccounts([strategyId])).get(strategyId);
  const portfolio = account?.strategy.desiredPositions;
  if (!portfolio) return null;
  const nowMs = ctx.clock.nowMs();
  return (JSON.parse(portfolio) as StoredPosition[])
    .map((p) => ({
      instrument: instrumentOf(p.symbol, p.symbolType),
      quantity: decimal(p.quantity),
      sentSymbol: p.sentSymbol ?? null,
    }))
    .filter((position) => !hasExpired(position.instrument, nowMs));
}

/** Turns the legacy desired-positions mode off: holdings stay as they are and signal entry works again. */
export async function releasePortfolio(ctx: TradingContext, strategyId: number): Promise<void> {
  await tradeOn(ctx, strategyId, (op) => {
    op.setDesiredPositions(null);
    return { state: op.account.state, result: undefined };
  });
}
