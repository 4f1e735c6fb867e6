import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { formatDecimal } from "../../src/core/decimal.js";
import { FOREX_PAIRS } from "../../src/core/symbols/forex.js";
import { FUTURE_CONTRACTS, MONTH_CODES } from "../../src/core/symbols/futures.js";
import {
  exchangeSymbolOf,
  fromExchangeSymbol,
  fromServiceSymbol,
  type Instrument,
  SPECIAL_STOCK_SYMBOLS,
  serviceSymbolOf,
} from "../../src/core/symbols/instrument.js";

const backAndForth = (instrument: Instrument): Instrument | null => {
  const x = exchangeSymbolOf(instrument);
  return fromExchangeSymbol({
    symbol: x.Symbol,
    securityType: x.SecurityType,
    currency: x.Currency,
    securityExchange: x.SecurityExchange,
    maturityMonthYear: x.MaturityMonthYear ?? undefined,
    putOrCall: x.PutOrCall ?? undefined,
    strikePrice: x.StrikePrice,
  });
};

test("stocks and ETFs, with share classes written with a dot or a slash", () => {
  const aapl = fromServiceSymbol("aapl");
  assert.equal(aapl?.fullSymbol, "AAPL");
  assert.deepEqual(exchangeSymbolOf(aapl as Instrument), {
    Symbol: "AAPL",
    Currency: "USD",
    SecurityExchange: "DEFAULT",
    SecurityType: "CS",
    MaturityMonthYear: null,
    PutOrCall: null,
    StrikePrice: 0,
    PriceMultiplier: 1,
  });
  assert.equal(fromServiceSymbol("BRK/B")?.fullSymbol, "BRK.B");
  for (const special of SPECIAL_STOCK_SYMBOLS) assert.equal(fromServiceSymbol(special)?.fullSymbol, special);
  for (const bad of ["", "TOOLONG", "AB1", "A.BC", "$SPX"]) assert.equal(fromServiceSymbol(bad), null, bad);
});

test("US equity options in OCC form, multiplier 100", () => {
  const call = fromServiceSymbol("AAPL  261218C00150000") as Instrument;
  assert.equal(call.fullSymbol, "AAPL261218C00150000");
  assert.deepEqual(serviceSymbolOf(call), {
    FullSymbol: "AAPL261218C00150000",
    SymbolType: "option",
    Underlying: "AAPL",
    Expiry: "2026-12-18",
    PutOrCall: "call",
    StrikePrice: 150,
    Description: "AAPL 18 Dec 2026 150 Call",
  });
  assert.deepEqual(exchangeSymbolOf(call), {
    Symbol: "AAPL",
    Currency: "USD",
    SecurityExchange: "DEFAULT",
    SecurityType: "OPT",
    MaturityMonthYear: "20261218",
    PutOrCall: 1,
    StrikePrice: 150,
    PriceMultiplier: 100,
  });
  const put = fromServiceSymbol("SPY270115P00412500") as Instrument;
  assert.equal(formatDecimal(put.strike as never), "412.5");
  assert.equal(put.putOrCall, "put");
  for (const bad of ["AAPL261318C00150000", "AAPL260230C00150000", "AAPL261218X00150000", "AAPL261218C0015000"]) {
    assert.equal(fromServiceSymbol(bad), null, bad);
  }
});

test("futures by root, month code and year, with the contract's exchange, point value and tick", () => {
  const es = fromServiceSymbol("@ESM26") as Instrument;
  assert.deepEqual(exchangeSymbolOf(es), {
    Symbol: "ES",
    Currency: "USD",
    SecurityExchange: "XCME",
    SecurityType: "FUT",
    MaturityMonthYear: "202606",
    PutOrCall: null,
    StrikePrice: 0,
    PriceMultiplier: 50,
  });
  assert.equal(es.description, "E-mini S&P 500 Jun 2026");
  assert.equal(formatDecimal(es.tickSize), "0.25");
  assert.equal(fromServiceSymbol("@6EH27")?.exchange, "XCME");
  assert.equal(fromServiceSymbol("@ZFH27")?.underlying, "ZF", "a root ending in a month letter");
  assert.equal(fromServiceSymbol("@FDAXZ26")?.currency, "EUR");
  assert.equal(fromServiceSymbol("ESM26", "future")?.fullSymbol, "@ESM26");
  assert.equal(fromServiceSymbol("@ESF26"), null, "ES is not listed in January");
  assert.equal(fromServiceSymbol("@XXM26"), null, "unknown root");
});

test("forex pairs written EURUSD or EUR/USD, priced in the quote currency", () => {
  const eur = fromServiceSymbol("eur/usd") as Instrument;
  assert.equal(eur.fullSymbol, "EURUSD");
  assert.equal(eur.currency, "USD");
  assert.equal(formatDecimal(eur.tickSize), "0.00001");
  assert.equal(formatDecimal((fromServiceSymbol("USDJPY") as Instrument).tickSize), "0.001");
  assert.equal(fromExchangeSymbol({ symbol: "EUR", currency: "USD", securityType: "FOR" })?.fullSymbol, "EURUSD");
  assert.equal(fromExchangeSymbol({ symbol: "EUR/USD", securityType: "for" })?.fullSymbol, "EURUSD");
  assert.equal(fromServiceSymbol("EURXYZ"), null);
});

test("a SymbolType that disagrees with the symbol is refused", () => {
  assert.equal(fromServiceSymbol("AAPL", "future"), null);
  assert.equal(fromServiceSymbol("EURUSD", "stock"), null);
  assert.equal(fromServiceSymbol("AAPL", "stock")?.symbolType, "stock");
});

test("exchange spellings that disagree with the contract are refused", () => {
  assert.equal(
    fromExchangeSymbol({ symbol: "ES", securityType: "FUT", maturityMonthYear: "202606", securityExchange: "XNYM" }),
    null,
  );
  assert.equal(
    fromExchangeSymbol({ symbol: "ES", securityType: "FUT", maturityMonthYear: "202606", currency: "EUR" }),
    null,
  );
  assert.equal(fromExchangeSymbol({ symbol: "ES", securityType: "FUT", maturityMonthYear: "2026-06" }), null);
  assert.equal(
    fromExchangeSymbol({ symbol: "AAPL", securityType: "OPT", maturityMonthYear: "20261218", putOrCall: 1 }),
    null,
  );
  assert.equal(fromExchangeSymbol({ symbol: "AAPL", securityType: "XYZ" }), null);
});

test("every instrument survives the trip ServiceSymbol -> ExchangeSymbol -> instrument", () => {
  const futures = fc
    .tuple(fc.constantFrom(...FUTURE_CONTRACTS), fc.integer({ min: 2026, max: 2035 }), fc.nat(11))
    .map(([contract, year, month]) => {
      const code = MONTH_CODES[month] as string;
      return contract.months.includes(code) ? `@${contract.root}${code}${String(year % 100)}` : null;
    });
  const options = fc
    .tuple(
      fc.constantFrom("AAPL", "SPY", "QQQ", "TSLA", "F"),
      fc.date({ min: new Date("2026-01-01"), max: new Date("2030-12-31"), noInvalidDate: true }),
      fc.constantFrom("C", "P"),
      fc.integer({ min: 1, max: 99_999_999 }),
    )
    .map(([root, day, side, strike]) => {
      const iso = day.toISOString();
      return `${root}${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${side}${String(strike).padStart(8, "0")}`;
    });
  const symbols = fc.oneof(futures, options, fc.constantFrom(...FOREX_PAIRS), fc.constantFrom("AAPL", "MSFT", "BRK.B"));
  fc.assert(
    fc.property(symbols, (symbol) => {
      if (symbol === null) return;
      const instrument = fromServiceSymbol(symbol);
      assert.ok(instrument, symbol);
      assert.deepEqual(backAndForth(instrument), instrument, symbol);
      assert.deepEqual(fromServiceSymbol(instrument.fullSymbol, instrument.symbolType), instrument);
    }),
  );
});

test("an instrument is one object for every spelling of it, so orders in memory share it", () => {
  for (const symbol of ["AAPL", "AAPL261218C00150000", "@ESM26", "EURUSD"]) {
    const instrument = fromServiceSymbol(symbol);
    assert.ok(instrument, symbol);
    assert.equal(fromServiceSymbol(` ${symbol.toLowerCase()} `), instrument, symbol);
    assert.equal(fromServiceSymbol(symbol, instrument.symbolType), instrument, symbol);
    assert.equal(backAndForth(instrument), instrument, symbol);
  }
  assert.equal(fromServiceSymbol("EUR/USD"), fromServiceSymbol("EURUSD"));
  assert.notEqual(fromServiceSymbol("MSFT"), fromServiceSymbol("AAPL"));
});

test("an ExchangeSymbol's strike with binary noise is rounded to eight places; as text it is exact", () => {
  const option = (strikePrice: number | string) =>
    fromExchangeSymbol({
      symbol: "AAPL",
      securityType: "OPT",
      maturityMonthYear: "20261218",
      putOrCall: 1,
      strikePrice,
    })?.fullSymbol ?? null;
  assert.equal(option(0.1 * 3 * 500), "AAPL261218C00150000");
  assert.equal(option("150.000000000000003"), null);
  assert.equal(option(1e308), null);
});
