import { Type } from "@sinclair/typebox";
import { Flag, NewYorkTime, OneOf, ResponseList, Text, UnixTime } from "./values.js";

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
  answer: Type.Object({ signal: SignalEcho, signalid: Text(), elapsed_time: Text("Seconds") }),
};

export const CancelSignal = {
  answer: Type.Object({
    signal: SignalRow,
    signalid: Text(),
    title: Text("Signal canceled"),
    message: Text(),
    elapsed_time: Text("Seconds"),
  }),
};

export const RetrieveSignalsWorking = {
  answer: ResponseList(SignalRow),
};

export const RetrieveSignalsAll = {
  answer: ResponseList(SignalRowWithTrades),
};

export const RequestMarginEquity = {
  answer: Type.Object({
    buyPower: Text(),
    marginUsed: Text(),
    modelAccountValue: Text(),
    cash: Text(),
    systemid: Text(),
  }),
};
