import { abs, compare, type Decimal, decimal, formatDecimal, isMultipleOf, ONE, sign, ZERO } from "../decimal.js";
import type { ErrorEntry } from "../errors.js";
import type { OrderType, Quote, Side } from "../fills.js";
import type { Instrument } from "../symbols/instrument.js";
import { hasExpired } from "./contract-expiry.js";

/**
 * What an order asks for, fixed when it is placed: the instrument, type,
 * side, quantity, prices and time in force. Its changing state (status,
 * fills) is the OrderState of the book.
 */
export type OpenClose = "open" | "close";
export type TimeInForce = "day" | "gtc";

/**
 * Why an order exists (OrderStatus.SignalType): 1 an order the strategy's
 * owner sent, 4 the profit-target exit of an entry, 5 its stop-loss exit,
 * 6 an order SetDesiredPositions made.
 */
/** 7: an order the service made to close a position when its contract expired (docs/decisions.md, "Contract expiry"). */
export const SIGNAL_TYPES = { owner: 1, profitTarget: 4, stopLoss: 5, desiredPositions: 6, settlement: 7 } as const;
export type SignalType = (typeof SIGNAL_TYPES)[keyof typeof SIGNAL_TYPES];

/** Whether an order of this SignalType is an exit (the profit target or stop loss) of an entry. */
export const isExitSignal = (signalType: number): boolean =>
  signalType === SIGNAL_TYPES.profitTarget || signalType === SIGNAL_TYPES.stopLoss;

export interface OrderTerms {
  readonly instrument: Instrument;
  readonly type: OrderType;
  readonly side: Side;
  readonly openClose: OpenClose;
  readonly tif: TimeInForce;
  readonly quantity: Decimal;
  readonly limit: Decimal | null;
  readonly stop: Decimal | null;
  readonly profitTarget: Decimal | null;
  readonly stopLoss: Decimal | null;
  readonly signalType: SignalType;
}

/** An order as a client sends it, numbers already read as decimals. */
export interface OrderRequest {
  readonly instrument: Instrument;
  readonly type: OrderType;
  readonly side: Side;
  readonly tif: TimeInForce;
  readonly quantity: Decimal;
  readonly openClose?: OpenClose | undefined;
  readonly limit?: Decimal | undefined;
  readonly stop?: Decimal | undefined;
  readonly profitTarget?: Decimal | undefined;
  readonly stopLoss?: Decimal | undefined;
  /** The order waits for another to fill: position checks wait for the fill too. */
  readonly conditional: boolean;
  /** The market's quote now, if one is known: a market entry's exits are checked against it. */
  readonly quote?: Quote | null | undefined;
}

export type TermsCheck =
  | { readonly ok: true; readonly terms: OrderTerms }
  | { readonly ok: false; readonly errors: readonly ErrorEntry[] };

const SUB_DOLLAR_TICK = decimal("0.0001");

/** The price grid of an instrument at a price: US stocks below $1 trade in 0.0001s. */
export function tickAt(instrument: Instrument, price: Decimal): Decimal {
  return instrument.symbolType === "stock" && compare(price, ONE) < 0 ? SUB_DOLLAR_TICK : instrument.tickSize;
}

/** A GTC market order the service makes (desired positions, an expired contract's close). */
export const serviceMarketOrder = (
  instrument: Instrument,
  side: Side,
  quantity: Decimal,
  openClose: OpenClose,
  signalType: SignalType,
): OrderTerms => ({
  instrument,
  type: "market",
  side,
  openClose,
  tif: "gtc",
  quantity,
  limit: null,
  stop: null,
  profitTarget: null,
  stopLoss: null,
  signalType,
});

/** The side that reduces a position of this signed quantity. */
export const closingSide = (held: Decimal): Side | null => (sign(held) > 0 ? "sell" : sign(held) < 0 ? "buy" : null);

/**
 * Checks an order against the rules of the simulated broker and the
 * strategy's position in the instrument, and settles whether it opens or
 * closes:
 *
 * - whole shares, contracts or units; prices positive and on the tick grid;
 *   a limit exactly for limit orders and a stop exactly for stop orders;
 * - OpenClose absent: a close when the order reduces the position, else an open;
 * - a close must reduce the position and may not be larger than it (send a
 *   close and then an open to reverse); an open may not go against a position;
 *   orders conditional on another wait for that fill, so these position checks
 *   are left to the fill, which never closes more than is held;
 * - ProfitTarget and StopLoss only on opening orders, on the profitable and the
 *   losing side of the entry's price (checkExitSides).
 */
export function checkOrder(request: OrderRequest, held: Decimal, nowMs: number, field = "Order"): TermsCheck {
  const errors: ErrorEntry[] = [];
  const invalid = (name: string, message: string) =>
    errors.push({ name: "InvalidValue", field: `${field}.${name}`, message });
  const { instrument } = request;
  if (hasExpired(instrument, nowMs)) {
    errors.push({
      name: "InvalidSymbol",
      field: `${field}.ServiceSymbol`,
      message: `${instrument.fullSymbol} has expired`,
    });
  }
  if (compare(request.quantity, ZERO) <= 0 || !isMultipleOf(request.quantity, ONE)) {
    invalid("OrderQuantity", "OrderQuantity must be a positive whole number of shares, contracts or units");
  }
  const price = (name: string, value: Decimal | undefined): Decimal | null => {
    if (value === undefined) return null;
    if (compare(value, ZERO) <= 0) {
      invalid(name, `${name} must be positive`);
      return null;
    }
    const tick = tickAt(instrument, value);
    if (!isMultipleOf(value, tick)) {
      invalid(name, `${name} must be a multiple of the tick size ${formatDecimal(tick)} for ${instrument.fullSymbol}`);
    }
    return value;
  };
  const limit = price("Limit", request.limit);
  const stop = price("Stop", request.stop);
  const profitTarget = price("ProfitTarget", request.profitTarget);
  const stopLoss = price("StopLoss", request.stopLoss);
  const needs = (name: "Limit" | "Stop", value: Decimal | undefined, wanted: boolean) => {
    if (wanted && value === undefined) {
      errors.push({
        name: "MissingValue",
        field: `${field}.${name}`,
        message: `A ${request.type} order needs ${name}`,
      });
    }
    if (!wanted && value !== undefined) invalid(name, `A ${request.type} order takes no ${name}`);
  };
  needs("Limit", request.limit, request.type === "limit");
  needs("Stop", request.stop, request.type === "stop");

  const reducing = closingSide(held) === request.side;
  const openClose: OpenClose = request.openClose ?? (reducing ? "close" : "open");
  if (!request.conditional) {
    if (openClose === "close" && !reducing) {
      invalid(
        "OpenClose",
        `There is no ${request.side === "sell" ? "long" : "short"} position in ${instrument.fullSymbol} to close`,
      );
    } else if (openClose === "close" && compare(request.quantity, abs(held)) > 0) {
      invalid(
        "OrderQuantity",
        `The closing order is larger than the position of ${formatDecimal(abs(held))}: close it, then open the other way`,
      );
    } else if (openClose === "open" && reducing) {
      invalid(
        "OpenClose",
        `The strategy is ${sign(held) > 0 ? "long" : "short"} ${instrument.fullSymbol}: close first`,
      );
    }
  }
  if ((profitTarget !== null || stopLoss !== null) && openClose === "close") {
    if (profitTarget !== null) invalid("ProfitTarget", "Only opening orders take a profit target");
    if (stopLoss !== null) invalid("StopLoss", "Only opening orders take a stop loss");
  } else {
    const entry = entryPriceOf({ type: request.type, side: request.side, limit, stop }, request.quote ?? null);
    errors.push(...checkExitSides(request.side, entry, profitTarget, stopLoss, field));
  }
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    terms: {
      instrument,
      type: request.type,
      side: request.side,
      openClose,
      tif: request.tif,
      quantity: request.quantity,
      limit,
      stop,
      profitTarget,
      stopLoss,
      signalType: SIGNAL_TYPES.owner,
    },
  };
}

/** The price an entry is expected to fill at, and what it is, for messages. */
export interface EntryPrice {
  readonly price: Decimal;
  readonly what: string;
}

/**
 * The price an entry will fill at, which its exits are checked against: the
 * limit of a limit order, the stop of a stop order (a limit fills at it or
 * better, a stop at it or worse: either way it is where the entry trades),
 * and for a market order the side of the quote it takes now (the ask for a
 * buy, the bid for a sell); null when a market order has no quote.
 */
export function entryPriceOf(
  order: {
    readonly type: OrderType;
    readonly side: Side;
    readonly limit: Decimal | null;
    readonly stop: Decimal | null;
  },
  quote: Quote | null,
): EntryPrice | null {
  switch (order.type) {
    case "limit":
      return order.limit === null ? null : { price: order.limit, what: `its limit ${formatDecimal(order.limit)}` };
    case "stop":
      return order.stop === null ? null : { price: order.stop, what: `its stop ${formatDecimal(order.stop)}` };
    case "market": {
      if (!quote) return null;
      const [price, what] = order.side === "buy" ? [quote.ask, "ask"] : [quote.bid, "bid"];
      return { price, what: `the ${what} ${formatDecimal(price)} it would fill at now` };
    }
  }
}

/**
 * An entry's exits on their sides: the profit target strictly beyond the
 * entry's price on the profitable side, the stop loss strictly beyond it on
 * the losing side (an exit at or through the entry's price would fill as soon
 * as the entry does), and the target beyond the stop when the entry's price
 * is not known. Each error names the exit at fault (both, when they are on the wrong sides of each other).
 */
export function checkExitSides(
  side: Side,
  entry: EntryPrice | null,
  profitTarget: Decimal | null,
  stopLoss: Decimal | null,
  field = "Order",
): ErrorEntry[] {
  const buying = side === "buy";
  /** Whether `a` is beyond `b` in the direction of profit. */
  const beyond = (a: Decimal, b: Decimal) => (buying ? compare(a, b) > 0 : compare(a, b) < 0);
  const [up, down] = buying ? ["above", "below"] : ["below", "above"];
  const errors: ErrorEntry[] = [];
  const invalid = (name: "ProfitTarget" | "StopLoss", message: string) =>
    errors.push({ name: "InvalidValue", field: `${field}.${name}`, message });
  if (entry !== null && profitTarget !== null && !beyond(profitTarget, entry.price)) {
    invalid("ProfitTarget", `The profit target of a ${side} entry must be ${up} ${entry.what}`);
  }
  if (entry !== null && stopLoss !== null && !beyond(entry.price, stopLoss)) {
    invalid("StopLoss", `The stop loss of a ${side} entry must be ${down} ${entry.what}`);
  }
  if (errors.length === 0 && profitTarget !== null && stopLoss !== null && !beyond(profitTarget, stopLoss)) {
    invalid("ProfitTarget", `The profit target of a ${side} entry must be ${up} its stop loss`);
    invalid("StopLoss", `The stop loss of a ${side} entry must be ${down} its profit target`);
  }
  return errors;
}

/** The closing children of an entry: a profit-target limit and a stop-loss stop, for the entry's quantity. */
export function exitTermsOf(entry: OrderTerms): { profitTarget: OrderTerms | null; stopLoss: OrderTerms | null } {
  const exit = {
    instrument: entry.instrument,
    side: (entry.side === "buy" ? "sell" : "buy") as Side,
    openClose: "close" as const,
    tif: entry.tif,
    quantity: entry.quantity,
    profitTarget: null,
    stopLoss: null,
  };
  // Each exit's own keys before the shared ones (docs/decisions.md, "Objects keep their hidden classes").
  return {
    profitTarget:
      entry.profitTarget === null
        ? null
        : { type: "limit", limit: entry.profitTarget, stop: null, signalType: SIGNAL_TYPES.profitTarget, ...exit },
    stopLoss:
      entry.stopLoss === null
        ? null
        : { type: "stop", limit: null, stop: entry.stopLoss, signalType: SIGNAL_TYPES.stopLoss, ...exit },
  };
}
