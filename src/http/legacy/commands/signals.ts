import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { localParts } from "../../../core/calendar.js";
import { parseLocalDateTime } from "../../../core/datetime.js";
import { type Decimal, decimal, div, formatDecimal, isZero } from "../../../core/decimal.js";
import { MUX_LOCAL_ID_PREFIX } from "../../../core/mux.js";
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
import { defineLegacyCommand, type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { amount as amountField, amountOf, digits, flag, id, never, text } from "../fields.js";
import { mustReadSystem, systemActedFor } from "../reach.js";
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

/** Caller-chosen ids (signalid, ocaid) and the ids that name a signal (conditionalupon, xreplace). */
const SIGNAL_ID = 100;

/** The fields of a signal object (API.md, "signal object of submitSignal"); others are ignored. */
const signalFields = <Parent extends TSchema>(
  conditionalUponSignal: Parent,
  options: { failure?: "InvalidSignal" } = {},
) =>
  Type.Object(
    {
      action: text(10),
      quant: amountField(),
      symbol: text(40),
      typeofsymbol: Type.Optional(text(10)),
      duration: Type.Optional(text(10)),
      limit: Type.Optional(amountField()),
      stop: Type.Optional(amountField()),
      profittarget: Type.Optional(amountField()),
      stoploss: Type.Optional(amountField()),
      conditionalupon: Type.Optional(text(SIGNAL_ID)),
      conditionalUponSignal: Type.Optional(conditionalUponSignal),
      xreplace: Type.Optional(text(SIGNAL_ID)),
      leave_oca_intact: Type.Optional(flag()),
      forcenooca: Type.Optional(flag()),
      signalid: Type.Optional(text(SIGNAL_ID)),
      ocaid: Type.Optional(text(SIGNAL_ID)),
      parkUntilSecs: Type.Optional(digits(12)),
      parkUntilYYYYMMDDHHMM: Type.Optional(digits(12)),
    },
    options,
  );

/** A parent given inline is placed with its signal: it has no inline parent of its own. */
const ParentSignal = signalFields(
  never("cannot hold a conditionalUponSignal of its own: a signal is placed with one parent at most"),
);
const Signal = signalFields(ParentSignal, { failure: "InvalidSignal" });
type SignalFields = Omit<Static<typeof ParentSignal>, "conditionalUponSignal">;

/** A signal of the system by its service id or its caller-chosen signalid. */
async function signalId(ctx: LegacyRequestContext, strategyId: number, named: string): Promise<number> {
  const text = named.trim();
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

/** A price, or undefined for none ("", 0). */
function price(value: number | string | undefined, field: string): Decimal | undefined {
  if (value === undefined || value === 0 || (typeof value === "string" && ["", "0"].includes(value.trim()))) {
    return undefined;
  }
  return amountOf(value, field, "InvalidSignal");
}

/** The park time: parkUntilSecs (epoch seconds) or parkUntilYYYYMMDDHHMM (New York). */
function parkedUntil(signal: SignalFields, field: string): number | undefined {
  const seconds = signal.parkUntilSecs?.trim();
  if (seconds) return Number(seconds) * 1000;
  const text = signal.parkUntilYYYYMMDDHHMM?.trim();
  if (!text) return undefined;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  const parsed = m && parseLocalDateTime(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:00`, NEW_YORK);
  if (!parsed) {
    throw new LegacyFailure("InvalidSignal", `${field}.parkUntilYYYYMMDDHHMM must be a New York YYYYMMDDHHMM time`);
  }
  return parsed.getTime();
}

/** The order a signal object describes, with the parent it gives inline. */
async function orderOf(
  ctx: LegacyRequestContext,
  strategyId: number,
  signal: Static<typeof Signal>,
): Promise<OrderInput & { readonly inlineParent?: OrderInput }> {
  const input = await plainOrderOf(ctx, strategyId, signal, "signal");
  const inline = signal.conditionalUponSignal;
  if (inline === undefined) return input;
  return { ...input, inlineParent: await plainOrderOf(ctx, strategyId, inline, "signal.conditionalUponSignal") };
}

async function plainOrderOf(
  ctx: LegacyRequestContext,
  strategyId: number,
  signal: SignalFields,
  field: string,
): Promise<OrderInput> {
  const action = ACTIONS[signal.action.trim().toUpperCase()];
  if (!action) throw new LegacyFailure("InvalidSignal", `${field}.action must be BTO, STO, SSHORT, BTC or STC`);
  const written = signal.symbol;
  const symbolType = signal.typeofsymbol ?? "stock";
  const instrument = fromServiceSymbol(written, symbolType, ctx.clock.nowMs());
  if (!instrument) throw new LegacyFailure("InvalidSymbol", `${written} is not a known ${symbolType}`);
  const quantity = amountOf(signal.quant, `${field}.quant`, "InvalidSignal");
  const limit = price(signal.limit, `${field}.limit`);
  const stop = price(signal.stop, `${field}.stop`);
  if (limit !== undefined && stop !== undefined) {
    throw new LegacyFailure(
      "InvalidSignal",
      `${field}.limit and ${field}.stop are both given: a signal is a limit, a stop or a market order, not a stop-limit`,
    );
  }
  const duration = (signal.duration ?? "DAY").trim().toUpperCase();
  if (duration !== "DAY" && duration !== "GTC") {
    throw new LegacyFailure("InvalidSignal", `${field}.duration must be DAY or GTC`);
  }
  const local = (value: string | undefined) => value?.trim() || undefined;
  for (const [name, value] of [
    ["signalid", local(signal.signalid)],
    ["ocaid", local(signal.ocaid)],
  ] as const) {
    // The ids of the orders StrategyMux mirrors into a variant: a caller's must never take one.
    if (value?.startsWith(MUX_LOCAL_ID_PREFIX)) {
      throw new LegacyFailure("InvalidSignal", `${field}.${name} may not begin with ${MUX_LOCAL_ID_PREFIX}`);
    }
  }
  const xreplace = local(signal.xreplace);
  const conditional = local(signal.conditionalupon);
  return {
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
      xreplace !== undefined ? signal.leave_oca_intact?.trim() !== "1" : signal.forcenooca?.trim() === "1",
    parentSignalId: conditional === undefined ? undefined : await signalId(ctx, strategyId, conditional),
    cancelReplaceSignalId: xreplace === undefined ? undefined : await signalId(ctx, strategyId, xreplace),
    parkedUntilMs: parkedUntil(signal, field),
    localSignalId: local(signal.signalid),
    localOcaId: local(signal.ocaid),
    sentSymbol: sentSymbolOf(written, instrument),
  };
}

const priceText = (value: Decimal | null | undefined) =>
  value === null || value === undefined ? "" : formatDecimal(value);

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
    limit: priceText(input.limit),
    stop: priceText(input.stop),
    profittarget: priceText(input.profitTarget),
    stoploss: priceText(input.stopLoss),
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

function filterTime(value: string | undefined, field: string): number | undefined {
  if (!value?.trim()) return undefined;
  const parsed = parseLocalDateTime(value.trim().replace(" ", "T"), NEW_YORK);
  if (!parsed) throw new LegacyFailure("InvalidRequest", `${field} must be YYYY-MM-DD HH:MM:SS (New York)`);
  return parsed.getTime();
}

/** A signal whose values the trading rules refuse is an invalid signal, as clients of the original service know it. */
const SIGNAL_REFUSALS = { InvalidValue: "InvalidSignal", MissingValue: "InvalidSignal" } as const;

const SystemOnly = Type.Object({ systemid: id() });

export const signalCommands: readonly LegacyCommand[] = [
  defineLegacyCommand({
    name: "submitSignal",
    summary:
      "Sends a signal (order) to the system: market, limit or stop, with profit target and stop loss (one OCA group), conditional on a parent, replacing a working signal (xreplace) or parked until a time. A marketable signal fills before the answer while its market is open.",
    answer: SubmitSignal.answer,
    refusals: SIGNAL_REFUSALS,
    contexts: ["world", "platform"],
    input: Type.Object({ systemid: id(), signal: Signal }),
    async handler(ctx, request) {
      const from = started();
      const { strategyId, acting } = await systemActedFor(ctx, request.systemid);
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
  }),
  defineLegacyCommand({
    name: "cancelSignal",
    contexts: ["world", "platform"],
    summary:
      "Cancels a working or held signal with its exits and OCA siblings. A traded signal answers ok 0, 'Signal was traded', with the signal.",
    answer: CancelSignal.answer,
    input: Type.Object({ systemid: id(), signalid: text(SIGNAL_ID) }),
    async handler(ctx, request) {
      const from = started();
      const { strategyId, acting } = await systemActedFor(ctx, request.systemid);
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
  }),
  defineLegacyCommand({
    name: "retrieveSignalsWorking",
    contexts: ["world", "platform"],
    summary: "The system's working and held signals, oldest first. Open to subscribers too.",
    answer: RetrieveSignalsWorking.answer,
    input: SystemOnly,
    async handler(ctx, { systemid }) {
      await mustReadSystem(ctx, systemid, true);
      const working = await activeOrders(ctx, { strategyIds: [systemid] });
      const names = await symbolNames(ctx, systemid);
      return { response: working.map(({ order }) => signalRow(order, null, names)) };
    },
  }),
  defineLegacyCommand({
    name: "retrieveSignalsAll",
    contexts: ["world", "platform"],
    summary:
      "Every signal of the system, or those posted, traded, expired or canceled between two New York times, with the trades they opened and closed. Open to subscribers too.",
    answer: RetrieveSignalsAll.answer,
    input: Type.Object({
      systemid: id(),
      filter_type: Type.Optional(text(40)),
      filter_date_time_start: Type.Optional(text(40)),
      filter_date_time_end: Type.Optional(text(40)),
    }),
    async handler(ctx, request) {
      await mustReadSystem(ctx, request.systemid, true);
      // "" is "not given", as legacy clients send it: every signal.
      const filter = request.filter_type?.trim() || undefined;
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
      const signals = await signalsWithTrades(ctx, request.systemid, window);
      const names = await symbolNames(ctx, request.systemid);
      return {
        response: signals.map(({ signal, openingTradeId, closingTradeId }) =>
          signalRow(signal, { opening: openingTradeId, closing: closingTradeId }, names),
        ),
      };
    },
  }),
  defineLegacyCommand({
    name: "requestMarginEquity",
    contexts: ["world", "platform"],
    summary: "The system's model account now: buying power, margin used, equity and cash.",
    answer: RequestMarginEquity.answer,
    input: SystemOnly,
    async handler(ctx, { systemid }) {
      const { strategyId } = await systemActedFor(ctx, systemid);
      const account = await modelAccount(ctx, strategyId);
      return {
        buyPower: formatDecimal(account.buyingPower),
        marginUsed: formatDecimal(account.marginUsed),
        modelAccountValue: formatDecimal(account.equity),
        cash: formatDecimal(account.cash),
        systemid: String(strategyId),
      };
    },
  }),
];
