import { amountProblemMessage, readAmount } from "../../../core/amounts.js";
import { localParts } from "../../../core/calendar.js";
import { parseLocalDateTime } from "../../../core/datetime.js";
import { type Decimal, decimal, div, formatDecimal, isZero } from "../../../core/decimal.js";
import { fromServiceSymbol, type Instrument } from "../../../core/symbols/instrument.js";
import { sentSymbolOf } from "../../../core/symbols/original-futures.js";
import { activeOrders } from "../../../services/order-reads.js";
import {
  cancelOrder,
  type OrderInput,
  type PlacedOrder,
  placeOrder,
  placeWithParent,
} from "../../../services/orders.js";
import { type SymbolNames, symbolNames } from "../../../services/sent-symbols.js";
import { type SignalWindow, signalNamed, signalRecord, signalsWithTrades } from "../../../services/signals.js";
import { modelAccount } from "../../../services/trading.js";
import type { OrderRow } from "../../../store/trading-state.js";
import { instrumentOf } from "../../../store/trading-state.js";
import { type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { integerOf, systemActedFor, systemRead } from "../reach.js";
import {
  CancelSignal,
  RequestMarginEquity,
  RetrieveSignalsAll,
  RetrieveSignalsWorking,
  SubmitSignal,
} from "../shapes/signals.js";

/**
 * The legacy signal commands (API.md 4.7), answered by the same services as
 * the v4 order operations: a signal sent here is an order there, with the
 * same id. Numbers go out as strings; times as New York `YYYY-MM-DD HH:MM:SS`
 * with a `_unix` twin.
 */
const NEW_YORK = "America/New_York";
const started = () => performance.now();
const elapsed = (from: number) => `${((performance.now() - from) / 1000).toFixed(3)}`;

/** A signal of the system by its service id or its caller-chosen signalid. */
async function signalId(ctx: LegacyRequestContext, strategyId: number, value: unknown): Promise<number> {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
  if (text === "") throw new LegacyFailure("InvalidRequest", "signalid is required");
  const id = await signalNamed(ctx, strategyId, text);
  if (id === null) throw new LegacyFailure("UnknownSignal", `System ${strategyId} has no signal ${text}`);
  return id;
}

const ACTIONS: Readonly<Record<string, { side: "buy" | "sell"; openClose: "open" | "close" }>> = {
  BTO: { side: "buy", openClose: "open" },
  STO: { side: "sell", openClose: "open" },
  SSHORT: { side: "sell", openClose: "open" },
  BTC: { side: "buy", openClose: "close" },
  STC: { side: "sell", openClose: "close" },
};

const actionOf = (side: string, openClose: string) =>
  side === "buy" ? (openClose === "open" ? "BTO" : "BTC") : openClose === "open" ? "STO" : "STC";

/** A price or quantity of a signal: a JSON number rounded to eight places, or text read exactly (amounts.ts). */
function amount(value: unknown, field: string): Decimal {
  const reading = typeof value === "number" || typeof value === "string" ? readAmount(value) : null;
  if (reading === null) throw new LegacyFailure("InvalidSignal", `${field} must be a number`);
  if (!reading.ok) throw new LegacyFailure("InvalidSignal", amountProblemMessage(field, reading.problem));
  return reading.value;
}

function price(value: unknown, field: string): Decimal | undefined {
  if (value === undefined || value === null || value === "" || value === 0 || value === "0") return undefined;
  return amount(value, field);
}

/** The park time: parkUntilSecs (epoch seconds) or parkUntilYYYYMMDDHHMM (New York). */
function parkedUntil(signal: Readonly<Record<string, unknown>>): number | undefined {
  if (signal.parkUntilSecs !== undefined && signal.parkUntilSecs !== null && signal.parkUntilSecs !== "") {
    return integerOf(signal.parkUntilSecs, "parkUntilSecs") * 1000;
  }
  const text = signal.parkUntilYYYYMMDDHHMM;
  if (text === undefined || text === null || text === "") return undefined;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(String(text).trim());
  const parsed = m && parseLocalDateTime(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:00`, NEW_YORK);
  if (!parsed) throw new LegacyFailure("InvalidSignal", "parkUntilYYYYMMDDHHMM must be a New York YYYYMMDDHHMM time");
  return parsed.getTime();
}

/** The order a signal object describes. */
async function orderOf(
  ctx: LegacyRequestContext,
  strategyId: number,
  raw: unknown,
  field = "signal",
): Promise<OrderInput & { readonly inlineParent?: OrderInput }> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new LegacyFailure("InvalidSignal", `${field} must be an object`);
  }
  const signal = raw as Readonly<Record<string, unknown>>;
  const action =
    ACTIONS[
      String(signal.action ?? "")
        .trim()
        .toUpperCase()
    ];
  if (!action) throw new LegacyFailure("InvalidSignal", `${field}.action must be BTO, STO, SSHORT, BTC or STC`);
  const written = String(signal.symbol ?? "");
  const instrument = fromServiceSymbol(written, String(signal.typeofsymbol ?? "stock"), ctx.clock.nowMs());
  if (!instrument) {
    throw new LegacyFailure(
      "InvalidSymbol",
      `${String(signal.symbol)} is not a known ${String(signal.typeofsymbol ?? "stock")}`,
    );
  }
  const quantity = amount(signal.quant, `${field}.quant`);
  const limit = price(signal.limit, `${field}.limit`);
  const stop = price(signal.stop, `${field}.stop`);
  if (limit !== undefined && stop !== undefined) {
    throw new LegacyFailure("InvalidSignal", "A signal is a limit, a stop or a market order, not a stop-limit");
  }
  const duration = String(signal.duration ?? "DAY")
    .trim()
    .toUpperCase();
  if (duration !== "DAY" && duration !== "GTC") throw new LegacyFailure("InvalidSignal", "duration must be DAY or GTC");
  const local = (value: unknown) =>
    value === undefined || value === null || value === "" ? undefined : String(value).trim();
  const xreplace = local(signal.xreplace);
  const conditional = local(signal.conditionalupon);
  const input: OrderInput = {
    strategyId,
    instrument,
    type: limit !== undefined ? "limit" : stop !== undefined ? "stop" : "market",
    side: action.side,
    openClose: action.openClose,
    tif: duration === "GTC" ? "gtc" : "day",
    quantity,
    limit,
    stop,
    profitTarget: price(signal.profittarget, `${field}.profittarget`),
    stopLoss: price(signal.stoploss, `${field}.stoploss`),
    doNotCreateOcaGroup:
      xreplace !== undefined
        ? String(signal.leave_oca_intact ?? "0") !== "1"
        : String(signal.forcenooca ?? "0") === "1",
    parentSignalId: conditional === undefined ? undefined : await signalId(ctx, strategyId, conditional),
    cancelReplaceSignalId: xreplace === undefined ? undefined : await signalId(ctx, strategyId, xreplace),
    parkedUntilMs: parkedUntil(signal),
    localSignalId: local(signal.signalid),
    localOcaId: local(signal.ocaid),
    sentSymbol: sentSymbolOf(written, instrument),
  };
  const inline = signal.conditionalUponSignal;
  if (inline === undefined || inline === null) return input;
  return { ...input, inlineParent: await orderOf(ctx, strategyId, inline, `${field}.conditionalUponSignal`) };
}

const text = (value: Decimal | null | undefined) => (value === null || value === undefined ? "" : formatDecimal(value));

/** The echo of a submitted signal. */
function echo(strategyId: number, input: OrderInput, placed: PlacedOrder, instrument: Instrument) {
  return {
    signalid: String(placed.signalId),
    localsignalid: input.localSignalId ?? "",
    systemid: String(strategyId),
    action: actionOf(input.side, input.openClose ?? "open"),
    quant: formatDecimal(input.quantity),
    symbol: input.sentSymbol ?? instrument.fullSymbol,
    typeofsymbol: instrument.symbolType,
    description: instrument.description,
    currency: instrument.currency,
    pointvalue: formatDecimal(instrument.multiplier),
    duration: input.tif === "gtc" ? "GTC" : "DAY",
    day: input.tif === "day" ? "1" : "0",
    gtc: input.tif === "gtc" ? "1" : "0",
    market: input.type === "market" ? "1" : "0",
    limit: text(input.limit),
    stop: text(input.stop),
    profittarget: text(input.profitTarget),
    stoploss: text(input.stopLoss),
    profittargetsignalid: placed.profitTargetSignalId === null ? "" : String(placed.profitTargetSignalId),
    stoplosssignalid: placed.stopLossSignalId === null ? "" : String(placed.stopLossSignalId),
    targetocagroupid: placed.exitSignalsOcaGroupId === null ? "" : String(placed.exitSignalsOcaGroupId),
    ocaid: input.localOcaId ?? (placed.exitSignalsOcaGroupId === null ? "" : String(placed.exitSignalsOcaGroupId)),
    conditionalupon: input.parentSignalId === undefined ? "" : String(input.parentSignalId),
    xreplace: input.cancelReplaceSignalId === undefined ? "" : String(input.cancelReplaceSignalId),
    parkUntilSecs: placed.parkedUntilMs === null ? "" : String(Math.floor(placed.parkedUntilMs / 1000)),
  };
}

/** New York wall time as the legacy API writes it. */
export function newYorkTime(ms: number | null): { text: string; unix: string } {
  if (ms === null) return { text: "", unix: "" };
  const p = localParts(NEW_YORK, ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return {
    text: `${p.year}-${two(p.month)}-${two(p.day)} ${two(p.hour)}:${two(p.minute)}:${two(p.second)}`,
    unix: String(Math.floor(ms / 1000)),
  };
}

const STATUS_WORDS: Readonly<Record<string, string>> = {
  PendingNew: "working",
  Working: "working",
  PartiallyFilled: "working",
  PendingCancel: "working",
  PendingReplace: "working",
  Filled: "traded",
  Canceled: "canceled",
  Replaced: "replaced",
  Rejected: "rejected",
  Expired: "expired",
};

/** A signal row of retrieveSignalsWorking / retrieveSignalsAll, its future named as its client wrote it. */
export function signalRow(
  order: OrderRow,
  trades: { opening: number | null; closing: number | null } | null,
  names: SymbolNames,
) {
  const instrument = instrumentOf(order.symbol, order.symbol_type);
  const posted = newYorkTime(order.posted_at);
  const ended = (status: string) => newYorkTime(order.status === status ? order.closed_at : null);
  const filled = decimal(order.filled_quantity);
  return {
    signal_id: String(order.id),
    localsignalid: order.local_signal_id ?? "",
    status: STATUS_WORDS[order.status] ?? order.status,
    symbol: names(order.symbol, order.sent_symbol),
    name: instrument.description,
    instrument: instrument.symbolType,
    underlying: instrument.underlying ?? "",
    strike: instrument.strike === null ? "" : formatDecimal(instrument.strike),
    putcall: instrument.putOrCall ?? "",
    expiration: instrument.expiry ?? "",
    quant: order.quantity,
    action: actionOf(order.side, order.open_close),
    tif: order.tif.toUpperCase(),
    isLimitOrder: order.limit_price ?? "0",
    isMarketOrder: order.order_type === "market" ? "1" : "0",
    isStopOrder: order.stop_price ?? "0",
    posted_time: posted.text,
    posted_time_unix: posted.unix,
    ...(trades
      ? {
          canceled_time: ended("Canceled").text,
          canceled_time_unix: ended("Canceled").unix,
          expired_time: ended("Expired").text,
          expired_time_unix: ended("Expired").unix,
          traded_time: ended("Filled").text,
          traded_time_unix: ended("Filled").unix,
          traded_price: isZero(filled) ? "" : formatDecimal(div(decimal(order.filled_notional), filled)),
          trade_id_opening: trades.opening === null ? "" : String(trades.opening),
          trade_id_closing: trades.closing === null ? "" : String(trades.closing),
        }
      : {}),
  };
}

/** retrieveSignalsAll's filter_type: which time bounds the signals listed. */
const FILTERS: Readonly<Record<string, SignalWindow["by"]>> = {
  time_posted: "posted",
  time_traded: "traded",
  time_expired: "expired",
  time_canceled: "canceled",
};

function filterTime(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const parsed = parseLocalDateTime(String(value).trim().replace(" ", "T"), NEW_YORK);
  if (!parsed) throw new LegacyFailure("InvalidRequest", `${field} must be YYYY-MM-DD HH:MM:SS (New York)`);
  return parsed.getTime();
}

/** A signal whose values the trading rules refuse is an invalid signal, as clients of the original service know it. */
const SIGNAL_REFUSALS = { InvalidValue: "InvalidSignal", MissingValue: "InvalidSignal" } as const;

export const signalCommands: readonly LegacyCommand[] = [
  {
    name: "submitSignal",
    summary:
      "Sends a signal (order) to the system: market, limit or stop, with profit target and stop loss (one OCA group), conditional on a parent, replacing a working signal (xreplace) or parked until a time. A marketable signal fills before the answer while its market is open.",
    input: SubmitSignal.input,
    answer: SubmitSignal.answer,
    refusals: SIGNAL_REFUSALS,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const from = started();
      const { strategyId, acting } = await systemActedFor(ctx, request);
      const { inlineParent, ...input } = await orderOf(ctx, strategyId, request.signal);
      if (inlineParent) {
        const both = await placeWithParent(acting, inlineParent, input);
        const signal = {
          ...echo(strategyId, { ...input, parentSignalId: both.parent.signalId }, both.child, input.instrument),
          conditionalUponSignal: { signalid: String(both.parent.signalId) },
        };
        return { signal, signalid: String(both.child.signalId), elapsed_time: elapsed(from) };
      }
      const placed = await placeOrder(acting, input);
      return {
        signal: echo(strategyId, input, placed, input.instrument),
        signalid: String(placed.signalId),
        elapsed_time: elapsed(from),
      };
    },
  },
  {
    name: "cancelSignal",
    summary:
      "Cancels a working or held signal with its exits and OCA siblings. A traded signal answers ok 0, 'Signal was traded', with the signal.",
    input: CancelSignal.input,
    answer: CancelSignal.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const from = started();
      const { strategyId, acting } = await systemActedFor(ctx, request);
      const id = await signalId(ctx, strategyId, request.signalid);
      const before = await signalRecord(ctx, id);
      const names = await symbolNames(ctx, strategyId);
      if (before.status === "Filled") {
        throw new LegacyFailure("SignalTraded", `Signal ${id} was traded and could not be canceled`, {
          signal: signalRow(before, null, names),
          signalid: String(id),
          elapsed_time: elapsed(from),
        });
      }
      await cancelOrder(acting, strategyId, id);
      return {
        signal: signalRow(await signalRecord(ctx, id), null, names),
        signalid: String(id),
        title: "Signal canceled",
        message: `Signal ${id} was canceled`,
        elapsed_time: elapsed(from),
      };
    },
  },
  {
    name: "retrieveSignalsWorking",
    summary: "The system's working and held signals, oldest first. Open to subscribers too.",
    input: RetrieveSignalsWorking.input,
    answer: RetrieveSignalsWorking.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = await systemRead(ctx, request, true);
      const working = await activeOrders(ctx, { strategyIds: [strategyId] });
      const names = await symbolNames(ctx, strategyId);
      return { response: working.map(({ order }) => signalRow(order, null, names)) };
    },
  },
  {
    name: "retrieveSignalsAll",
    summary:
      "Every signal of the system, or those posted, traded, expired or canceled between two New York times, with the trades they opened and closed. Open to subscribers too.",
    input: RetrieveSignalsAll.input,
    answer: RetrieveSignalsAll.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = await systemRead(ctx, request, true);
      const filter = request.filter_type === undefined ? undefined : String(request.filter_type);
      if (filter !== undefined && !Object.hasOwn(FILTERS, filter)) {
        throw new LegacyFailure(
          "InvalidRequest",
          "filter_type must be time_posted, time_traded, time_expired or time_canceled",
        );
      }
      const window =
        filter === undefined
          ? undefined
          : {
              by: FILTERS[filter] as SignalWindow["by"],
              startMs: filterTime(request.filter_date_time_start, "filter_date_time_start"),
              endMs: filterTime(request.filter_date_time_end, "filter_date_time_end"),
            };
      const signals = await signalsWithTrades(ctx, strategyId, window);
      const names = await symbolNames(ctx, strategyId);
      return {
        response: signals.map(({ signal, openingTradeId, closingTradeId }) =>
          signalRow(signal, { opening: openingTradeId, closing: closingTradeId }, names),
        ),
      };
    },
  },
  {
    name: "requestMarginEquity",
    summary: "The system's model account now: buying power, margin used, equity and cash.",
    input: RequestMarginEquity.input,
    answer: RequestMarginEquity.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId } = await systemActedFor(ctx, request);
      const account = await modelAccount(ctx, strategyId);
      return {
        buyPower: formatDecimal(account.buyingPower),
        marginUsed: formatDecimal(account.marginUsed),
        modelAccountValue: formatDecimal(account.equity),
        cash: formatDecimal(account.cash),
        systemid: String(strategyId),
      };
    },
  },
];
