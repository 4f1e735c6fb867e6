import type { Clock } from "../core/clock.js";
import { compare, type Decimal, parseDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { MarketQuote } from "../core/market/quote.js";
import { fromServiceSymbol } from "../core/symbols/instrument.js";
import type { MarketData } from "../engine/market-data.js";

export interface HandQuote {
  readonly symbol: string;
  readonly bid: number | string;
  readonly ask: number | string;
  readonly last: number | string;
  readonly bidSize?: number | string | undefined;
  readonly askSize?: number | string | undefined;
}

/** Sets a symbol's quote by hand (sandbox), at the service clock's time. */
export function setHandQuote(market: MarketData, clock: Clock, input: HandQuote): MarketQuote {
  const instrument = fromServiceSymbol(input.symbol, undefined, clock.now().getTime());
  if (!instrument) throw refuse("InvalidSymbol", { field: "Symbol", message: `Unknown symbol ${input.symbol}` });
  const amount = (field: string, value: number | string): Decimal => {
    const parsed = parseDecimal(value);
    if (parsed === null) throw refuse("InvalidValue", { field, message: `${field} has more than 8 decimal places` });
    return parsed;
  };
  const bid = amount("Bid", input.bid);
  const ask = amount("Ask", input.ask);
  if (compare(bid, ask) > 0) throw refuse("InvalidValue", { field: "Ask", message: "Ask must not be below Bid" });
  const quote: MarketQuote = {
    symbol: instrument.fullSymbol,
    bid,
    ask,
    last: amount("Last", input.last),
    bidSize: input.bidSize === undefined ? null : amount("BidSize", input.bidSize),
    askSize: input.askSize === undefined ? null : amount("AskSize", input.askSize),
    atMs: clock.now().getTime(),
  };
  market.setQuote(quote);
  return quote;
}
