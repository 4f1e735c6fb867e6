import { Type } from "@sinclair/typebox";
import {
  AmountIn,
  CountIn,
  Flag,
  FlagIn,
  NewYorkTime,
  OneOf,
  ResponseList,
  SystemIdIn,
  Text,
  UnixTime,
} from "./values.js";

/** The signal commands' requests and answers (API.md 4.7, "signal object of submitSignal"). */

const SignalRef = Type.Union([Type.Integer(), Type.String({ maxLength: 100 })], {
  description: "A signal of the system: its service id or its caller-chosen signalid",
});

const signalFields = {
  action: OneOf(["BTO", "STO", "SSHORT", "BTC", "STC"], "Buy or sell to open, sell short, buy to cover, sell to close"),
  quant: AmountIn("Quantity: whole shares, contracts or units"),
  symbol: Type.String({ maxLength: 40, description: "AAPL, @ESZ26 (or @ESZ6), EURUSD, an OCC option symbol" }),
  typeofsymbol: Type.Optional(OneOf(["stock", "option", "future", "forex"], "stock when absent (ETFs are stock)")),
  duration: Type.Optional(OneOf(["DAY", "GTC"], "Time in force; DAY when absent")),
  limit: Type.Optional(AmountIn("Limit price: a limit order")),
  stop: Type.Optional(AmountIn("Stop price: a stop order")),
  market: Type.Optional(FlagIn("1: a market order; without limit and stop the order is a market order all the same")),
  profittarget: Type.Optional(AmountIn("An opening order's closing limit child")),
  stoploss: Type.Optional(AmountIn("An opening order's closing stop child; with profittarget one OCA group")),
  conditionalupon: Type.Optional(SignalRef),
  xreplace: Type.Optional(SignalRef),
  leave_oca_intact: Type.Optional(FlagIn("With xreplace of an OCA member: 1 leaves the sibling working")),
  signalid: Type.Optional(
    Type.String({ maxLength: 100, description: "The caller's own id, unique in the system for all time" }),
  ),
  ocaid: Type.Optional(Type.String({ maxLength: 100, description: "The caller's own OCA group id" })),
  forcenooca: Type.Optional(FlagIn("1: profittarget and stoploss are not grouped")),
  parkUntilSecs: Type.Optional(CountIn("Held until then: unix seconds")),
  parkUntilYYYYMMDDHHMM: Type.Optional(Type.String({ description: "Held until then: New York time" })),
};

const Signal = Type.Object(
  {
    ...signalFields,
    conditionalUponSignal: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description: "The parent as a signal object of its own, placed first; this one works once it fills",
        },
      ),
    ),
  },
  { title: "LegacySignal" },
);

const SignalEcho = Type.Object(
  {
    signalid: Text("The service's id of the signal"),
    localsignalid: Text("The caller's signalid, or empty"),
    systemid: Text(),
    action: Text(),
    quant: Text(),
    symbol: Text("As the client wrote it"),
    typeofsymbol: Text(),
    description: Text(),
    currency: Text(),
    pointvalue: Text(),
    duration: Text(),
    day: Flag(),
    gtc: Flag(),
    market: Flag(),
    limit: Text(),
    stop: Text(),
    profittarget: Text(),
    stoploss: Text(),
    profittargetsignalid: Text(),
    stoplosssignalid: Text(),
    targetocagroupid: Text(),
    ocaid: Text(),
    conditionalupon: Text(),
    xreplace: Text(),
    parkUntilSecs: Text(),
    conditionalUponSignal: Type.Optional(
      Type.Object({ signalid: Text() }, { description: "With an inline parent: the parent's id" }),
    ),
  },
  { title: "LegacySignalEcho" },
);

const rowFields = {
  signal_id: Text(),
  localsignalid: Text(),
  status: OneOf(["working", "traded", "canceled", "replaced", "rejected", "expired"], "The signal's state"),
  symbol: Text(),
  name: Text(),
  instrument: Text(),
  underlying: Text(),
  strike: Text(),
  putcall: Text(),
  expiration: Text(),
  quant: Text(),
  action: Text(),
  tif: Text(),
  isLimitOrder: Text("The limit price, or 0"),
  isMarketOrder: Flag(),
  isStopOrder: Text("The stop price, or 0"),
  posted_time: NewYorkTime("Posted"),
  posted_time_unix: UnixTime("Posted"),
};

const SignalRow = Type.Object(rowFields, { title: "LegacySignalRow" });

const SignalRowWithTrades = Type.Object(
  {
    ...rowFields,
    canceled_time: NewYorkTime("Canceled"),
    canceled_time_unix: UnixTime("Canceled"),
    expired_time: NewYorkTime("Expired"),
    expired_time_unix: UnixTime("Expired"),
    traded_time: NewYorkTime("Filled"),
    traded_time_unix: UnixTime("Filled"),
    traded_price: Text("The average fill price, or empty"),
    trade_id_opening: Text(),
    trade_id_closing: Text(),
  },
  { title: "LegacySignalRowWithTrades" },
);

export const SubmitSignal = {
  input: Type.Object({ systemid: SystemIdIn, signal: Signal }),
  answer: Type.Object({ signal: SignalEcho, signalid: Text(), elapsed_time: Text("Seconds") }),
};

export const CancelSignal = {
  input: Type.Object({ systemid: SystemIdIn, signalid: SignalRef }),
  answer: Type.Object({
    signal: SignalRow,
    signalid: Text(),
    title: Text("Signal canceled"),
    message: Text(),
    elapsed_time: Text("Seconds"),
  }),
};

export const RetrieveSignalsWorking = {
  input: Type.Object({ systemid: SystemIdIn }),
  answer: ResponseList(SignalRow),
};

export const RetrieveSignalsAll = {
  input: Type.Object({
    systemid: SystemIdIn,
    filter_type: Type.Optional(
      OneOf(["time_posted", "time_traded", "time_expired", "time_canceled"], "Which time the bounds apply to"),
    ),
    filter_date_time_start: Type.Optional(Type.String({ description: "New York time, YYYY-MM-DD HH:MM:SS" })),
    filter_date_time_end: Type.Optional(Type.String({ description: "New York time, YYYY-MM-DD HH:MM:SS" })),
  }),
  answer: ResponseList(SignalRowWithTrades),
};

export const RequestMarginEquity = {
  input: Type.Object({ systemid: SystemIdIn }),
  answer: Type.Object({
    buyPower: Text(),
    marginUsed: Text(),
    modelAccountValue: Text(),
    cash: Text(),
    systemid: Text(),
  }),
};
