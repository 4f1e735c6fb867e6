import { type Static, Type } from "@sinclair/typebox";
import { amountProblemMessage, readAmount } from "../../core/amounts.js";
import { parseLocalDateTime } from "../../core/datetime.js";
import { type Decimal, decimal, div, isZero, toNumber, ZERO } from "../../core/decimal.js";
import { type ErrorEntry, Refusal } from "../../core/errors.js";
import type { OrderType, Side } from "../../core/fills.js";
import type { OrderStatus } from "../../core/orders/status.js";
import { ORDER_STATUS_CODES } from "../../core/orders/status.js";
import type { OrderTerms, TimeInForce } from "../../core/orders/terms.js";
import {
  exchangeSymbolOf,
  fromExchangeSymbol,
  fromServiceSymbol,
  type Instrument,
  serviceSymbolOf,
} from "../../core/symbols/instrument.js";
import { sentSymbolOf } from "../../core/symbols/original-futures.js";
import type { ActiveOrder, OpenPosition, OrderView } from "../../services/order-reads.js";
import type { OrderInput } from "../../services/orders.js";
import type { StoredPosition } from "../../store/journal/batch.js";
import { instrumentOf, type OrderRow } from "../../store/trading-state.js";
import { type RawJson, rawJson } from "./raw-json.js";
import { Amount, Id } from "./schemas.js";

/**
 * The order wire format of WIRE.md (OrderDTO in, OrderStatus and Position
 * out) and its translation to and from the services' terms.
 */
const Price = (description: string) => Amount({ description: `Positive. ${description}` });

/** The input forms of ServiceSymbol and ExchangeSymbol are named apart from the records: they hold fewer fields. */
export const ServiceSymbolInput = Type.Object(
  {
    FullSymbol: Type.String({
      minLength: 1,
      maxLength: 40,
      description:
        "AAPL, @ESZ26, EURUSD, an OCC option symbol; futures also in the original service's form: a single-digit year (@ESZ6) and the roots @TY, @US, @FV, @TU (ZN, ZB, ZF, ZT)",
    }),
    SymbolType: Type.Optional(
      Type.Union([Type.Literal("stock"), Type.Literal("option"), Type.Literal("future"), Type.Literal("forex")]),
    ),
  },
  { title: "ServiceSymbolInput" },
);

export const ExchangeSymbolInput = Type.Object(
  {
    Symbol: Type.String({ minLength: 1, maxLength: 40 }),
    SecurityType: Type.Union([Type.Literal("CS"), Type.Literal("FUT"), Type.Literal("OPT"), Type.Literal("FOR")]),
    Currency: Type.Optional(Type.String({ maxLength: 3 })),
    SecurityExchange: Type.Optional(Type.String({ maxLength: 10 })),
    MaturityMonthYear: Type.Optional(Type.String({ maxLength: 8 })),
    PutOrCall: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])),
    StrikePrice: Type.Optional(Amount()),
  },
  { title: "ExchangeSymbolInput" },
);

export const OrderDto = Type.Object(
  {
    StrategyId: Id(),
    OrderType: Type.Union([Type.Literal("1"), Type.Literal("2"), Type.Literal("3")], {
      description: "1 Market, 2 Limit, 3 Stop",
    }),
    Side: Type.Union([Type.Literal("1"), Type.Literal("2")], { description: "1 Buy, 2 Sell" }),
    TIF: Type.Optional(
      Type.Union([Type.Literal("0"), Type.Literal("1")], { description: "0 Day (default), 1 Good-till-canceled" }),
    ),
    OrderQuantity: Amount({ description: "Positive: whole shares, contracts or units" }),
    OpenClose: Type.Optional(
      Type.Union([Type.Literal("O"), Type.Literal("C")], { description: "Inferred from the position when absent" }),
    ),
    Limit: Type.Optional(Price("Limit orders only")),
    Stop: Type.Optional(Price("Stop orders only")),
    ProfitTarget: Type.Optional(Price("Opening orders: a closing limit child")),
    StopLoss: Type.Optional(Price("Opening orders: a closing stop child")),
    DoNotCreateOCAGroup: Type.Optional(Type.Boolean()),
    ParentSignalId: Type.Optional(Id({ description: "Works only after that signal fills" })),
    CancelReplaceSignalId: Type.Optional(Id({ description: "The working signal this order replaces" })),
    ParkedUntilDate: Type.Optional(
      Type.String({ maxLength: 40, description: "Held until then: New York time unless an offset is given" }),
    ),
    DoNotSyncToOpen: Type.Optional(Type.Boolean()),
    ServiceSymbol: Type.Optional(ServiceSymbolInput),
    ExchangeSymbol: Type.Optional(ExchangeSymbolInput),
  },
  { title: "OrderDTO" },
);

const ORDER_TYPES: Readonly<Record<string, OrderType>> = { "1": "market", "2": "limit", "3": "stop" };
const ORDER_TYPE_CODES: Readonly<Record<OrderType, string>> = { market: "1", limit: "2", stop: "3" };
export const orderTypeOfCode = (code: string): OrderType | undefined => ORDER_TYPES[code];

/** A symbol as read from a request: its instrument, and a future as the client wrote it (sentSymbolOf). */
export interface SymbolRead {
  readonly instrument: Instrument;
  readonly sentSymbol: string | null;
}

/**
 * The instrument a ServiceSymbol or ExchangeSymbol names (one is required),
 * original futures forms read at `nowMs`; refusals name `field`.
 */
export function readSymbol(
  input: { ServiceSymbol?: Static<typeof ServiceSymbolInput>; ExchangeSymbol?: Static<typeof ExchangeSymbolInput> },
  field: string,
  errors: ErrorEntry[],
  nowMs: number,
): SymbolRead | null {
  if (input.ServiceSymbol) {
    const written = input.ServiceSymbol.FullSymbol;
    const instrument = fromServiceSymbol(written, input.ServiceSymbol.SymbolType, nowMs);
    if (!instrument) {
      errors.push({ name: "InvalidSymbol", field: `${field}ServiceSymbol`, message: `Unknown symbol ${written}` });
      return null;
    }
    return { instrument, sentSymbol: sentSymbolOf(written, instrument) };
  }
  if (input.ExchangeSymbol) {
    const e = input.ExchangeSymbol;
    const instrument = fromExchangeSymbol({
      symbol: e.Symbol,
      securityType: e.SecurityType,
      currency: e.Currency,
      securityExchange: e.SecurityExchange,
      maturityMonthYear: e.MaturityMonthYear,
      putOrCall: e.PutOrCall,
      strikePrice: e.StrikePrice,
    });
    if (!instrument) {
      errors.push({ name: "InvalidSymbol", field: `${field}ExchangeSymbol`, message: `Unknown symbol ${e.Symbol}` });
      return null;
    }
    // The exchange's spelling is no service symbol a client could match against.
    return { instrument, sentSymbol: null };
  }
  errors.push({
    name: "MissingValue",
    field: `${field}ServiceSymbol`,
    message: "ServiceSymbol or ExchangeSymbol is required",
  });
  return null;
}

/** A price or quantity from the wire (schemas.ts Amount); a refusal names `field`. */
export function readDecimal(value: number | string, field: string, errors: ErrorEntry[]): Decimal {
  const reading = readAmount(value);
  if (!reading.ok) {
    errors.push({ name: "InvalidValue", field, message: amountProblemMessage(field, reading.problem) });
    return ZERO;
  }
  return reading.value;
}

/** The order of a NewStrategyOrder or ReplaceStrategyOrder body, in the services' terms, read at `nowMs`. */
export function readOrder(order: Static<typeof OrderDto>, nowMs: number): OrderInput {
  const errors: ErrorEntry[] = [];
  const symbol = readSymbol(order, "Order.", errors, nowMs);
  const amount = (value: number | string | undefined, name: string) =>
    value === undefined ? undefined : readDecimal(value, `Order.${name}`, errors);
  let parkedUntilMs: number | undefined;
  if (order.ParkedUntilDate !== undefined) {
    const parked = parseLocalDateTime(order.ParkedUntilDate, "America/New_York");
    if (!parked) {
      errors.push({
        name: "InvalidValue",
        field: "Order.ParkedUntilDate",
        message: "ParkedUntilDate is not a date-time",
      });
    } else parkedUntilMs = parked.getTime();
  }
  const quantity = readDecimal(order.OrderQuantity, "Order.OrderQuantity", errors);
  const limit = amount(order.Limit, "Limit");
  const stop = amount(order.Stop, "Stop");
  const profitTarget = amount(order.ProfitTarget, "ProfitTarget");
  const stopLoss = amount(order.StopLoss, "StopLoss");
  if (errors.length > 0 || !symbol) throw new Refusal(errors);
  // One literal: keys added after a spread would make each order a hidden class of its own (docs/decisions.md).
  return {
    strategyId: order.StrategyId,
    type: ORDER_TYPES[order.OrderType] as OrderType,
    side: (order.Side === "1" ? "buy" : "sell") as Side,
    tif: (order.TIF === "1" ? "gtc" : "day") as TimeInForce,
    quantity,
    openClose:
      order.OpenClose === undefined ? undefined : order.OpenClose === "O" ? ("open" as const) : ("close" as const),
    limit,
    stop,
    profitTarget,
    stopLoss,
    parentSignalId: order.ParentSignalId,
    cancelReplaceSignalId: order.CancelReplaceSignalId,
    parkedUntilMs,
    doNotCreateOcaGroup: order.DoNotCreateOCAGroup,
    doNotSyncToOpen: order.DoNotSyncToOpen,
    instrument: symbol.instrument,
    sentSymbol: symbol.sentSymbol,
  };
}

const number = (text: string | null) => (text === null ? null : toNumber(decimal(text)));

function averageFill(filledQuantity: string, filledNotional: string): number | null {
  const filled = decimal(filledQuantity);
  return isZero(filled) ? null : toNumber(div(decimal(filledNotional), filled));
}

const TIF_CODES: Readonly<Record<TimeInForce, string>> = { day: "0", gtc: "1" };

/** The columns of an order's terms and fills, named alike for strategy orders and account orders. */
export type OrderTermsRow = Pick<
  OrderRow,
  | "symbol"
  | "symbol_type"
  | "side"
  | "open_close"
  | "order_type"
  | "tif"
  | "quantity"
  | "limit_price"
  | "stop_price"
  | "status"
  | "filled_quantity"
  | "filled_notional"
>;

/** What an OrderStatus record says that is not the order's terms and fills. */
export interface OrderStatusParticulars {
  readonly id: number;
  readonly strategyId: number;
  readonly strategyName: string;
  readonly signalId: number | null;
  readonly profitTarget: number | null;
  readonly stopLoss: number | null;
  readonly doNotCreateOcaGroup: boolean;
  readonly cancelReplaceSignalId: number | null;
  readonly parentSignalId: number | null;
  readonly parkedUntil: number | null;
  readonly doNotSyncToOpen: boolean;
  readonly rejectMessage: string | null;
  readonly brokerId: number | null;
  readonly postedAt: number;
  readonly signalType: number;
  readonly info: string | null;
}

/** An OrderStatus record of an order's terms and fills and its particulars (a strategy's, or an account's). */
export function orderStatusRecord(row: OrderTermsRow, o: OrderStatusParticulars) {
  const instrument = instrumentOf(row.symbol, row.symbol_type);
  const average = averageFill(row.filled_quantity, row.filled_notional);
  return {
    Id: o.id,
    OrderId: String(o.id),
    StrategyId: o.strategyId,
    StrategyName: o.strategyName,
    SignalId: o.signalId,
    AvgPx: average,
    OrderType: ORDER_TYPE_CODES[row.order_type],
    Side: row.side === "buy" ? "1" : "2",
    OpenClose: row.open_close === "open" ? "O" : "C",
    OrderQuantity: toNumber(decimal(row.quantity)),
    Limit: number(row.limit_price),
    Stop: number(row.stop_price),
    TIF: TIF_CODES[row.tif],
    ProfitTarget: o.profitTarget,
    StopLoss: o.stopLoss,
    DoNotCreateOCAGroup: o.doNotCreateOcaGroup,
    CancelReplaceSignalId: o.cancelReplaceSignalId,
    ParentSignalId: o.parentSignalId,
    ParkedUntilDate: o.parkedUntil === null ? null : new Date(o.parkedUntil),
    DoNotSyncToOpen: o.doNotSyncToOpen,
    ServiceSymbol: serviceSymbolOf(instrument),
    ExchangeSymbol: exchangeSymbolOf(instrument),
    RejectMessage: o.rejectMessage,
    BrokerId: o.brokerId,
    OrderStatus: ORDER_STATUS_CODES[row.status as OrderStatus],
    FilledQuantity: toNumber(decimal(row.filled_quantity)),
    AvgFillPrice: average,
    PostedDate: new Date(o.postedAt),
    SignalType: o.signalType,
    Info: o.info,
  };
}

/** An OrderStatus record. */
export function orderStatusOf(row: OrderView) {
  return orderStatusRecord(row, {
    id: row.id,
    strategyId: row.strategy_id,
    strategyName: row.strategy_name,
    signalId: row.id,
    profitTarget: number(row.profit_target),
    stopLoss: number(row.stop_loss),
    doNotCreateOcaGroup: row.do_not_create_oca === 1,
    cancelReplaceSignalId: row.cancel_replace_id,
    parentSignalId: row.parent_id,
    parkedUntil: row.parked_until,
    doNotSyncToOpen: row.do_not_sync_to_open === 1,
    rejectMessage: row.status === "Rejected" ? row.info : null,
    brokerId: null,
    postedAt: row.posted_at,
    signalType: row.signal_type,
    info: row.info,
  });
}

/** A row of SetDesiredPositions' lists. */
export function desiredPositionsOrderOf(row: OrderView) {
  const status = orderStatusOf(row);
  return {
    SignalId: status.SignalId,
    OrderStatus: status.OrderStatus,
    OrderType: status.OrderType,
    Side: status.Side,
    OpenClose: status.OpenClose,
    OrderQuantity: status.OrderQuantity,
    Limit: status.Limit,
    Stop: status.Stop,
    TIF: status.TIF,
    FilledQuantity: status.FilledQuantity,
    AvgFillPrice: status.AvgFillPrice,
    PostedDate: status.PostedDate,
    ServiceSymbol: status.ServiceSymbol,
    ExchangeSymbol: status.ExchangeSymbol,
    RejectMessage: status.RejectMessage,
  };
}

/** A rejected (never stored) order of SetDesiredPositions. */
export function rejectedOrderOf(terms: OrderTerms, reason: string) {
  return {
    SignalId: null,
    OrderStatus: ORDER_STATUS_CODES.Rejected,
    OrderType: ORDER_TYPE_CODES[terms.type],
    Side: terms.side === "buy" ? "1" : "2",
    OpenClose: terms.openClose === "open" ? "O" : "C",
    OrderQuantity: toNumber(terms.quantity),
    Limit: terms.limit === null ? null : toNumber(terms.limit),
    Stop: terms.stop === null ? null : toNumber(terms.stop),
    TIF: TIF_CODES[terms.tif],
    FilledQuantity: 0,
    AvgFillPrice: null,
    PostedDate: null,
    ServiceSymbol: serviceSymbolOf(terms.instrument),
    ExchangeSymbol: exchangeSymbolOf(terms.instrument),
    RejectMessage: reason,
  };
}

/**
 * The serialized record of each stored row, with the strategy name it was
 * written with: a committed row is replaced, never changed, when its order or
 * position changes, so the record is written once per change, not per read.
 */
function keptPerRow<Row extends object>(write: (row: Row, strategyName: string) => unknown) {
  const kept = new WeakMap<Row, { readonly strategyName: string; readonly json: RawJson }>();
  return (row: Row, strategyName: string): RawJson => {
    const found = kept.get(row);
    if (found !== undefined && found.strategyName === strategyName) return found.json;
    const json = rawJson(write(row, strategyName));
    kept.set(row, { strategyName, json });
    return json;
  };
}

/** An active order's OrderStatus record, serialized. */
export const activeOrderJson = (active: ActiveOrder): RawJson => orderJsonOf(active.order, active.strategyName);
const orderJsonOf = keptPerRow((row: OrderRow, strategyName: string) =>
  orderStatusOf({ ...row, strategy_name: strategyName }),
);

/** An open position's Position record, serialized. */
export const openPositionJson = (open: OpenPosition): RawJson => positionJsonOf(open.position, open.strategyName);
const positionJsonOf = keptPerRow(positionOf);

/** A Position record, of a strategy's model account or of what a setup holds in a brokerage account. */
export function positionOf(
  row: Pick<StoredPosition, "strategy_id" | "symbol" | "symbol_type" | "quantity" | "cost" | "opened_at">,
  strategyName: string,
) {
  const instrument = instrumentOf(row.symbol, row.symbol_type);
  const quantity = decimal(row.quantity);
  return {
    StrategyId: row.strategy_id,
    Quantity: toNumber(quantity),
    AvgPx: toNumber(div(decimal(row.cost), quantity)),
    ServiceSymbol: serviceSymbolOf(instrument),
    ExchangeSymbol: exchangeSymbolOf(instrument),
    StrategyName: strategyName,
    Currency: instrument.currency,
    OpenedDate: new Date(row.opened_at),
  };
}
