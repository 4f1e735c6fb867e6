import { Type } from "@sinclair/typebox";
import { NewYorkTime, OneOf, ResponseList, Text, UnixTime } from "./values.js";

/** The record commands' requests and answers: a system's trades and its equity curve. */

const ComponentSignal = Type.Object(
  {
    symbol: Text(),
    signalid: Text(),
    action: Text("BTO, STO, BTC or STC"),
    quant: Text(),
    instrument: Text(),
    tradeprice: Text(),
    tradedwhen: NewYorkTime("Filled"),
  },
  { title: "LegacyComponentSignal" },
);

const Trade = Type.Object(
  {
    trade_id: Text(),
    symbol: Text("As the strategy's client wrote it"),
    fullSymbol: Text(),
    symbol_description: Text(),
    instrument: Text("stock, option, future or forex"),
    underlying: Text(),
    strike: Text(),
    expir: Text(),
    putcall: Text(),
    open_or_closed: OneOf(["open", "closed"], "Whether the trade is flat again"),
    long_or_short: OneOf(["long", "short"], "The trade's direction"),
    quant_opened: Text(),
    quant_closed: Text(),
    opening_price_VWAP: Text(),
    closing_price_VWAP: Text("Empty while nothing closed"),
    openVWAP_timestamp: UnixTime("Opened"),
    closeVWAP_timestamp: UnixTime("Last closing fill"),
    openedWhen: NewYorkTime("Opened"),
    openedWhenUnixTimeStamp: UnixTime("Opened"),
    closedWhen: NewYorkTime("Closed"),
    closedWhenUnixTimeStamp: UnixTime("Closed"),
    markToMarket_time: NewYorkTime("Marked"),
    ptValue: Text("Money per point"),
    PL: Text("Profit or loss, dollars"),
    currency: Text(),
    component_signals: Type.Optional(
      Type.Array(ComponentSignal, { description: "With show_component_signals=1: the trade's fills" }),
    ),
  },
  { title: "LegacyTrade" },
);

const Trades = { answer: ResponseList(Trade) };

export const RequestTrades = Trades;
export const RequestTradesOpen = Trades;

export const RequestAllTradesOverview = {
  answer: ResponseList(Trade),
};

export const RetrieveSystemEquity = {
  answer: Type.Object({
    systemname: Text(),
    systemid: Text(),
    equity_data: Type.Array(
      Type.Object(
        {
          strategy_with_cost: Text("Equity after the plan's commissions"),
          strategy_raw: Text("Equity without commissions"),
          index_price: Text("The S&P 500 proxy"),
          unix_timestamp: Text(),
          YYYYMMDD: Text(),
        },
        { title: "LegacyEquityMark" },
      ),
    ),
    initial_index_to_equity_scaling_factor: Text(),
  }),
};
