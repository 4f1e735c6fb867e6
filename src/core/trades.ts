import type { PlanCommissions } from "./commissions.js";
import { add, compare, type Decimal, div, mul, round, sub, ZERO } from "./decimal.js";
import type { Side } from "./fills.js";
import { averagePrice, openProfit, type Position } from "./positions.js";
import type { Instrument } from "./symbols/instrument.js";

/**
 * A trade: the life of a position in one symbol from flat to flat, made of
 * the fills that opened, added to, reduced and closed it. A fill that would
 * reverse a position is split in two (the close of one trade, the opening of
 * the next), so every fill belongs to one trade.
 *
 * While a trade is open its maximum adverse excursion is tracked: the worst
 * open profit seen at any observed price (fills and quotes), with the price,
 * when it was seen, the strategy's equity then, the average entry price and
 * the open quantity then.
 */
export interface Excursion {
  /** Open profit in dollars at the worst price seen: zero or below. */
  readonly amount: Decimal;
  readonly worstPrice: Decimal;
  readonly worstPriceAtMs: number;
  readonly equity: Decimal;
  readonly entryPrice: Decimal;
  readonly openQuantity: Decimal;
}

export interface TradeRecord {
  /** The stored id, or a negative stand-in until the trade is stored. */
  readonly key: number;
  readonly instrument: Instrument;
  /** The opening side: buy for a long trade, sell for a short one. */
  readonly side: Side;
  readonly openedAtMs: number;
  readonly closedAtMs: number | null;
  readonly openedQuantity: Decimal;
  readonly closedQuantity: Decimal;
  /** Sum of quantity × price of the opening fills (the closing fills'): average prices are these over the quantities. */
  readonly openNotional: Decimal;
  readonly closeNotional: Decimal;
  /** Realized profit in dollars before commissions. */
  readonly realized: Decimal;
  /** Commissions the model account paid on the trade's fills, in dollars. */
  readonly commission: Decimal;
  /** The commissions the trade's fills would cost under each plan, in dollars. */
  readonly planCommissions: PlanCommissions;
  readonly excursion: Excursion | null;
  /** When the excursion was last evaluated (MaxDrawdown_DateCalculated). */
  readonly evaluatedAtMs: number;
}

export function openTrade(
  key: number,
  instrument: Instrument,
  side: Side,
  quantity: Decimal,
  price: Decimal,
  fee: Decimal,
  nowMs: number,
): TradeRecord {
  return {
    key,
    instrument,
    side,
    openedAtMs: nowMs,
    closedAtMs: null,
    openedQuantity: quantity,
    closedQuantity: ZERO,
    openNotional: mul(quantity, price),
    closeNotional: ZERO,
    realized: ZERO,
    commission: fee,
    planCommissions: {},
    excursion: null,
    evaluatedAtMs: nowMs,
  };
}

/** A fill on the trade's own side: more opened. */
export const addToTrade = (trade: TradeRecord, quantity: Decimal, price: Decimal, fee: Decimal): TradeRecord => ({
  ...trade,
  openedQuantity: add(trade.openedQuantity, quantity),
  openNotional: add(trade.openNotional, mul(quantity, price)),
  commission: add(trade.commission, fee),
});

/** A fill against the trade's side: part or all of it closed. */
export function reduceTrade(
  trade: TradeRecord,
  quantity: Decimal,
  price: Decimal,
  realized: Decimal,
  fee: Decimal,
  closes: boolean,
  nowMs: number,
): TradeRecord {
  return {
    ...trade,
    closedQuantity: add(trade.closedQuantity, quantity),
    closeNotional: add(trade.closeNotional, mul(quantity, price)),
    realized: add(trade.realized, realized),
    commission: add(trade.commission, fee),
    closedAtMs: closes ? nowMs : null,
  };
}

/**
 * The trade after observing a price for its open position: the excursion is
 * replaced when the open profit there is worse than the worst seen so far.
 */
export function observe(
  trade: TradeRecord,
  position: Position,
  price: Decimal,
  usdRate: Decimal,
  /** The account's equity now; a function when it costs to work out (it is asked only for a new worst). */
  equityNow: Decimal | (() => Decimal),
  nowMs: number,
): TradeRecord {
  const profit = round(mul(openProfit(position, price, trade.instrument.multiplier), usdRate), 2);
  const worse = trade.excursion === null ? compare(profit, ZERO) < 0 : compare(profit, trade.excursion.amount) < 0;
  if (!worse) return trade.evaluatedAtMs === nowMs ? trade : { ...trade, evaluatedAtMs: nowMs };
  return {
    ...trade,
    evaluatedAtMs: nowMs,
    excursion: {
      amount: profit,
      worstPrice: price,
      worstPriceAtMs: nowMs,
      equity: typeof equityNow === "function" ? equityNow() : equityNow,
      entryPrice: averagePrice(position) ?? price,
      openQuantity: position.quantity,
    },
  };
}

/** The price at which a trade's position would be valued against it now: the bid for a long, the ask for a short. */
export const adversePrice = (trade: Pick<TradeRecord, "side">, bid: Decimal, ask: Decimal): Decimal =>
  trade.side === "buy" ? bid : ask;

/** The average opening and closing fill prices. */
export const averageOpenPrice = (trade: TradeRecord): Decimal => div(trade.openNotional, trade.openedQuantity);
export const averageClosePrice = (trade: TradeRecord): Decimal | null =>
  compare(trade.closedQuantity, ZERO) === 0 ? null : div(trade.closeNotional, trade.closedQuantity);

/** Splits a fee between the parts of a split fill by quantity, to the cent, so the parts add up to the fee. */
export function splitFee(fee: Decimal, first: Decimal, total: Decimal): [Decimal, Decimal] {
  const part = round(div(mul(fee, first), total), 2);
  return [part, sub(fee, part)];
}
