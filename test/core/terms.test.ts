import assert from "node:assert/strict";
import { test } from "node:test";
import { decimal, formatDecimal } from "../../src/core/decimal.js";
import {
  checkExitSides,
  checkOrder,
  entryPriceOf,
  exitTermsOf,
  type OrderRequest,
  type OrderTerms,
  SIGNAL_TYPES,
  type TermsCheck,
  tickAt,
} from "../../src/core/orders/terms.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const d = decimal;
const at = (symbol: string): Instrument => {
  const instrument = fromServiceSymbol(symbol);
  assert.ok(instrument, symbol);
  return instrument;
};
const AAPL = at("AAPL");
const PENNY = at("SNDL");
const ES = at("@ESM26");
const EURUSD = at("EURUSD");
const USDJPY = at("USDJPY");
/** A Monday at 10:00 New York. */
const NOW = Date.parse("2026-03-02T15:00:00Z");

type Over = Partial<Omit<OrderRequest, "quantity" | "limit" | "stop" | "profitTarget" | "stopLoss">> & {
  quantity?: string;
  limit?: string;
  stop?: string;
  profitTarget?: string;
  stopLoss?: string;
};
const request = (over: Over = {}): OrderRequest => {
  const { quantity, limit, stop, profitTarget, stopLoss, ...rest } = over;
  return {
    instrument: AAPL,
    type: "market",
    side: "buy",
    tif: "day",
    conditional: false,
    ...rest,
    quantity: d(quantity ?? "100"),
    limit: limit === undefined ? undefined : d(limit),
    stop: stop === undefined ? undefined : d(stop),
    profitTarget: profitTarget === undefined ? undefined : d(profitTarget),
    stopLoss: stopLoss === undefined ? undefined : d(stopLoss),
  };
};
const check = (over: Over = {}, held = "0", nowMs = NOW): TermsCheck => checkOrder(request(over), d(held), nowMs);
/** The errors as "Name Field", or [] when the order passes. */
const errors = (result: TermsCheck): string[] =>
  result.ok ? [] : result.errors.map((e) => `${e.name} ${e.field ?? ""}`);
const terms = (result: TermsCheck): OrderTerms => {
  assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.errors));
  return result.terms;
};

test("quantities are positive whole numbers of shares, contracts or units", () => {
  assert.deepEqual(errors(check({ quantity: "100" })), []);
  for (const quantity of ["0", "-5", "1.5", "0.00000001"]) {
    assert.deepEqual(errors(check({ quantity })), ["InvalidValue Order.OrderQuantity"], quantity);
  }
  assert.deepEqual(errors(check({ instrument: ES, quantity: "2.5" })), ["InvalidValue Order.OrderQuantity"]);
  assert.deepEqual(errors(check({ instrument: EURUSD, quantity: "100000" })), []);
});

test("prices are positive", () => {
  assert.deepEqual(errors(check({ type: "limit", limit: "0" })), ["InvalidValue Order.Limit"]);
  assert.deepEqual(errors(check({ type: "stop", stop: "-1" })), ["InvalidValue Order.Stop"]);
  assert.deepEqual(errors(check({ profitTarget: "-110" })), ["InvalidValue Order.ProfitTarget"]);
});

test("stock prices sit on the cent grid, and on 0.0001 below one dollar", () => {
  assert.equal(formatDecimal(tickAt(AAPL, d("150"))), "0.01");
  assert.equal(formatDecimal(tickAt(PENNY, d("0.9999"))), "0.0001");
  assert.equal(formatDecimal(tickAt(PENNY, d("1"))), "0.01", "one dollar is on the cent grid");
  assert.deepEqual(errors(check({ type: "limit", limit: "150.01" })), []);
  assert.deepEqual(errors(check({ type: "limit", limit: "150.005" })), ["InvalidValue Order.Limit"]);
  assert.deepEqual(errors(check({ instrument: PENNY, type: "limit", limit: "0.1234" })), []);
  assert.deepEqual(errors(check({ instrument: PENNY, type: "limit", limit: "0.12345" })), ["InvalidValue Order.Limit"]);
  assert.deepEqual(errors(check({ instrument: PENNY, type: "limit", limit: "1.0001" })), ["InvalidValue Order.Limit"]);
  const failed = check({ type: "stop", stop: "150.005" });
  assert.ok(!failed.ok && /0\.01/.test(failed.errors[0]?.message ?? ""), "the message names the tick");
});

test("futures and forex prices sit on the contract's tick", () => {
  assert.equal(formatDecimal(tickAt(ES, d("0.5"))), "0.25", "the sub-dollar grid is for stocks only");
  assert.deepEqual(errors(check({ instrument: ES, type: "limit", limit: "5000.25" })), []);
  assert.deepEqual(errors(check({ instrument: ES, type: "limit", limit: "5000.1" })), ["InvalidValue Order.Limit"]);
  assert.deepEqual(errors(check({ instrument: ES, profitTarget: "5010.75", stopLoss: "4990.3" })), [
    "InvalidValue Order.StopLoss",
  ]);
  assert.deepEqual(errors(check({ instrument: EURUSD, type: "limit", limit: "1.08123" })), []);
  assert.deepEqual(errors(check({ instrument: EURUSD, type: "limit", limit: "1.081234" })), [
    "InvalidValue Order.Limit",
  ]);
  assert.deepEqual(errors(check({ instrument: USDJPY, type: "limit", limit: "150.123" })), []);
  assert.deepEqual(errors(check({ instrument: USDJPY, type: "limit", limit: "150.1234" })), [
    "InvalidValue Order.Limit",
  ]);
});

test("a limit exactly for limit orders and a stop exactly for stop orders", () => {
  assert.deepEqual(errors(check({ type: "limit" })), ["MissingValue Order.Limit"]);
  assert.deepEqual(errors(check({ type: "stop" })), ["MissingValue Order.Stop"]);
  assert.deepEqual(errors(check({ type: "market", limit: "100" })), ["InvalidValue Order.Limit"]);
  assert.deepEqual(errors(check({ type: "market", stop: "100" })), ["InvalidValue Order.Stop"]);
  assert.deepEqual(errors(check({ type: "limit", limit: "100", stop: "99" })), ["InvalidValue Order.Stop"]);
  assert.deepEqual(errors(check({ type: "stop", limit: "100", stop: "99" })), ["InvalidValue Order.Limit"]);
  const limit = terms(check({ type: "limit", limit: "100" }));
  assert.deepEqual([limit.limit, limit.stop], [d("100"), null]);
  const stop = terms(check({ type: "stop", stop: "101" }));
  assert.deepEqual([stop.limit, stop.stop], [null, d("101")]);
});

test("without OpenClose an order closes when it reduces the position and opens otherwise", () => {
  assert.equal(terms(check({ side: "buy" }, "0")).openClose, "open");
  assert.equal(terms(check({ side: "sell" }, "0")).openClose, "open", "a short sale opens");
  assert.equal(terms(check({ side: "sell" }, "100")).openClose, "close");
  assert.equal(terms(check({ side: "buy" }, "-100")).openClose, "close");
  assert.equal(terms(check({ side: "buy" }, "100")).openClose, "open", "adding to a long");
  assert.equal(terms(check({ side: "sell" }, "-100")).openClose, "open", "adding to a short");
});

test("a close must reduce the position", () => {
  assert.deepEqual(errors(check({ side: "sell", openClose: "close" }, "0")), ["InvalidValue Order.OpenClose"]);
  assert.deepEqual(errors(check({ side: "buy", openClose: "close" }, "0")), ["InvalidValue Order.OpenClose"]);
  assert.deepEqual(errors(check({ side: "buy", openClose: "close" }, "100")), ["InvalidValue Order.OpenClose"]);
  assert.deepEqual(errors(check({ side: "sell", openClose: "close" }, "-100")), ["InvalidValue Order.OpenClose"]);
  assert.equal(terms(check({ side: "sell", openClose: "close" }, "100")).openClose, "close");
});

test("a close may not be larger than the position", () => {
  assert.deepEqual(errors(check({ side: "sell", quantity: "101" }, "100")), ["InvalidValue Order.OrderQuantity"]);
  assert.deepEqual(errors(check({ side: "buy", quantity: "150", openClose: "close" }, "-100")), [
    "InvalidValue Order.OrderQuantity",
  ]);
  assert.deepEqual(errors(check({ side: "sell", quantity: "100" }, "100")), [], "closing all of it is fine");
});

test("an open may not go against a position", () => {
  assert.deepEqual(errors(check({ side: "sell", openClose: "open" }, "100")), ["InvalidValue Order.OpenClose"]);
  assert.deepEqual(errors(check({ side: "buy", openClose: "open" }, "-100")), ["InvalidValue Order.OpenClose"]);
  assert.deepEqual(errors(check({ side: "buy", openClose: "open" }, "100")), []);
});

test("orders conditional on another skip the position checks", () => {
  const conditional = { conditional: true };
  assert.equal(terms(check({ ...conditional, side: "sell", openClose: "close" }, "0")).openClose, "close");
  assert.equal(terms(check({ ...conditional, side: "sell", quantity: "500" }, "100")).openClose, "close");
  assert.equal(terms(check({ ...conditional, side: "sell", openClose: "open" }, "100")).openClose, "open");
  assert.equal(terms(check({ ...conditional, side: "buy", openClose: "close" }, "100")).openClose, "close");
});

test("profit target and stop loss only on opening orders", () => {
  assert.deepEqual(errors(check({ side: "sell", profitTarget: "90" }, "100")), ["InvalidValue Order.ProfitTarget"]);
  assert.deepEqual(errors(check({ side: "sell", stopLoss: "110" }, "100")), ["InvalidValue Order.StopLoss"]);
  assert.deepEqual(errors(check({ side: "sell", openClose: "close", conditional: true, stopLoss: "110" }, "0")), [
    "InvalidValue Order.StopLoss",
  ]);
  const opening = terms(check({ side: "buy", profitTarget: "110", stopLoss: "90" }, "100"));
  assert.deepEqual([opening.profitTarget, opening.stopLoss], [d("110"), d("90")]);
});

test("a buy's profit target is above and its stop loss below the entry price", () => {
  const buy = (profitTarget?: string, stopLoss?: string, type: "limit" | "stop" = "limit") =>
    errors(
      check({
        side: "buy",
        type,
        ...(type === "limit" ? { limit: "100" } : { stop: "100" }),
        ...(profitTarget ? { profitTarget } : {}),
        ...(stopLoss ? { stopLoss } : {}),
      }),
    );
  assert.deepEqual(buy("110", "90"), []);
  assert.deepEqual(buy("110", "90", "stop"), [], "a stop entry's price is its stop");
  assert.deepEqual(buy("95"), ["InvalidValue Order.ProfitTarget"]);
  assert.deepEqual(buy("100"), ["InvalidValue Order.ProfitTarget"], "at the entry is not above it");
  assert.deepEqual(buy(undefined, "105"), ["InvalidValue Order.StopLoss"]);
  assert.deepEqual(buy(undefined, "100"), ["InvalidValue Order.StopLoss"], "at the entry is not below it");
  assert.deepEqual(buy("95", undefined, "stop"), ["InvalidValue Order.ProfitTarget"]);
  assert.deepEqual(buy("95", "105"), ["InvalidValue Order.ProfitTarget", "InvalidValue Order.StopLoss"], "each named");
});

test("a sell's profit target is below and its stop loss above the entry price", () => {
  const sell = (profitTarget?: string, stopLoss?: string) =>
    errors(
      check({
        side: "sell",
        type: "limit",
        limit: "100",
        ...(profitTarget ? { profitTarget } : {}),
        ...(stopLoss ? { stopLoss } : {}),
      }),
    );
  assert.deepEqual(sell("90", "110"), []);
  assert.deepEqual(sell("105"), ["InvalidValue Order.ProfitTarget"]);
  assert.deepEqual(sell("100"), ["InvalidValue Order.ProfitTarget"]);
  assert.deepEqual(sell(undefined, "95"), ["InvalidValue Order.StopLoss"]);
  assert.deepEqual(sell(undefined, "100"), ["InvalidValue Order.StopLoss"]);
  const failed = check({ side: "sell", type: "limit", limit: "100", stopLoss: "95" });
  assert.ok(!failed.ok);
  assert.equal(failed.errors[0]?.message, "The stop loss of a sell entry must be above its limit 100");
});

test("a market entry's exits are checked against the quote it would fill at now: the ask for a buy, the bid for a sell", () => {
  const quote = { bid: d("59.98"), ask: d("60.02"), bidSize: null, askSize: null };
  const market = (side: "buy" | "sell", exits: { profitTarget?: string; stopLoss?: string }) =>
    check({ side, quote, ...exits });
  assert.deepEqual(errors(market("buy", { profitTarget: "55" })), ["InvalidValue Order.ProfitTarget"]);
  const losing = market("buy", { profitTarget: "55" });
  assert.ok(!losing.ok);
  assert.equal(
    losing.errors[0]?.message,
    "The profit target of a buy entry must be above the ask 60.02 it would fill at now",
  );
  assert.deepEqual(errors(market("buy", { profitTarget: "60.02" })), ["InvalidValue Order.ProfitTarget"]);
  assert.deepEqual(errors(market("buy", { profitTarget: "60.03", stopLoss: "59.98" })), [], "the bid is no matter");
  assert.deepEqual(errors(market("buy", { stopLoss: "60.02" })), ["InvalidValue Order.StopLoss"]);
  assert.deepEqual(errors(market("sell", { profitTarget: "59.98" })), ["InvalidValue Order.ProfitTarget"]);
  assert.deepEqual(errors(market("sell", { stopLoss: "60" })), [], "a sell fills at the bid, below 60");
  assert.deepEqual(errors(market("sell", { stopLoss: "59.98" })), ["InvalidValue Order.StopLoss"]);
  assert.deepEqual(
    errors(check({ side: "buy", type: "limit", limit: "50", quote, profitTarget: "55" })),
    [],
    "a limit entry is checked at its limit, not the quote",
  );
});

test("entryPriceOf: the limit, the stop, or the side of the quote a market order takes; none without a quote", () => {
  const quote = { bid: d("99.98"), ask: d("100.02"), bidSize: null, askSize: null };
  const order = { type: "market" as const, side: "buy" as const, limit: null, stop: null };
  assert.deepEqual(entryPriceOf(order, quote), { price: d("100.02"), what: "the ask 100.02 it would fill at now" });
  assert.equal(entryPriceOf({ ...order, side: "sell" }, quote)?.price, d("99.98"));
  assert.equal(entryPriceOf(order, null), null);
  assert.deepEqual(entryPriceOf({ ...order, type: "limit", limit: d("99") }, quote), {
    price: d("99"),
    what: "its limit 99",
  });
  assert.equal(entryPriceOf({ ...order, type: "stop", stop: d("101") }, null)?.price, d("101"));
  const names = (errors: { field?: string | undefined }[]) => errors.map((e) => e.field);
  const entry = { price: d("100"), what: "its limit 100" };
  assert.deepEqual(names(checkExitSides("buy", entry, d("100.01"), d("99.99"))), []);
  assert.deepEqual(names(checkExitSides("buy", entry, d("99"), d("101"), "Signal")), [
    "Signal.ProfitTarget",
    "Signal.StopLoss",
  ]);
  assert.deepEqual(names(checkExitSides("sell", entry, d("99.99"), d("100.01"))), []);
  assert.deepEqual(names(checkExitSides("sell", null, d("101"), d("100"))), ["Order.ProfitTarget", "Order.StopLoss"]);
});

test("without an entry price (a market order with no quote) the profit target and stop loss are ordered among themselves", () => {
  const both = ["InvalidValue Order.ProfitTarget", "InvalidValue Order.StopLoss"];
  assert.deepEqual(errors(check({ side: "buy", profitTarget: "110", stopLoss: "90" })), []);
  assert.deepEqual(errors(check({ side: "buy", profitTarget: "90", stopLoss: "110" })), both);
  assert.deepEqual(errors(check({ side: "buy", profitTarget: "100", stopLoss: "100" })), both);
  assert.deepEqual(errors(check({ side: "sell", profitTarget: "90", stopLoss: "110" })), []);
  assert.deepEqual(errors(check({ side: "sell", profitTarget: "110", stopLoss: "90" })), both);
  const failed = check({ side: "sell", profitTarget: "110", stopLoss: "90" });
  assert.ok(!failed.ok && /below its stop loss/.test(failed.errors[0]?.message ?? ""));
});

test("an expired option or future is refused as an invalid symbol", () => {
  const option = at("AAPL260320C00150000");
  assert.deepEqual(errors(check({ instrument: option, quantity: "1" }, "0", Date.parse("2026-03-20T19:00:00Z"))), []);
  assert.deepEqual(errors(check({ instrument: option, quantity: "1" }, "0", Date.parse("2026-03-23T15:00:00Z"))), [
    "InvalidSymbol Order.ServiceSymbol",
  ]);
  assert.deepEqual(
    errors(check({ instrument: at("@ESH26"), quantity: "1" }, "0", Date.parse("2026-04-02T15:00:00Z"))),
    ["InvalidSymbol Order.ServiceSymbol"],
  );
});

test("every problem is reported, under the caller's field name", () => {
  const result = checkOrder(request({ type: "limit", quantity: "1.5", stop: "100.001" }), d("0"), NOW, "Signal");
  assert.deepEqual(
    new Set(errors(result)),
    new Set(["InvalidValue Signal.OrderQuantity", "InvalidValue Signal.Stop", "MissingValue Signal.Limit"]),
  );
});

test("the accepted terms are the request's, with the owner's signal type", () => {
  const accepted = terms(check({ type: "limit", side: "sell", tif: "gtc", limit: "101.5", quantity: "30" }, "100"));
  assert.deepEqual(accepted, {
    instrument: AAPL,
    type: "limit",
    side: "sell",
    openClose: "close",
    tif: "gtc",
    quantity: d("30"),
    limit: d("101.5"),
    stop: null,
    profitTarget: null,
    stopLoss: null,
    signalType: SIGNAL_TYPES.owner,
  });
});

test("exits: the opposite side, closing, for the entry's quantity and time in force", () => {
  const entry = terms(
    check({
      instrument: ES,
      type: "limit",
      side: "buy",
      tif: "gtc",
      quantity: "3",
      limit: "5000",
      profitTarget: "5010",
      stopLoss: "4990",
    }),
  );
  const { profitTarget, stopLoss } = exitTermsOf(entry);
  assert.deepEqual(profitTarget, {
    instrument: ES,
    type: "limit",
    side: "sell",
    openClose: "close",
    tif: "gtc",
    quantity: d("3"),
    limit: d("5010"),
    stop: null,
    profitTarget: null,
    stopLoss: null,
    signalType: 4,
  });
  assert.deepEqual(stopLoss, {
    instrument: ES,
    type: "stop",
    side: "sell",
    openClose: "close",
    tif: "gtc",
    quantity: d("3"),
    limit: null,
    stop: d("4990"),
    profitTarget: null,
    stopLoss: null,
    signalType: 5,
  });
});

test("exits of a short entry buy; an entry without a target or a stop has only the other exit", () => {
  const short = terms(check({ side: "sell", tif: "day", quantity: "50", profitTarget: "90" }));
  const exits = exitTermsOf(short);
  assert.equal(exits.stopLoss, null);
  assert.equal(exits.profitTarget?.side, "buy");
  assert.equal(exits.profitTarget?.tif, "day");
  assert.equal(exits.profitTarget?.quantity, d("50"));
  assert.equal(exits.profitTarget?.signalType, SIGNAL_TYPES.profitTarget);
  const onlyStop = exitTermsOf(terms(check({ side: "buy", stopLoss: "90" })));
  assert.equal(onlyStop.profitTarget, null);
  assert.equal(onlyStop.stopLoss?.type, "stop");
  assert.equal(onlyStop.stopLoss?.signalType, SIGNAL_TYPES.stopLoss);
  assert.deepEqual(exitTermsOf(terms(check())), { profitTarget: null, stopLoss: null });
});
