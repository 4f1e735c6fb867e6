import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { FUTURE_CONTRACTS } from "../../src/core/symbols/futures.js";
import { fromExchangeSymbol, fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";
import { ORIGINAL_ROOTS, sentSymbolOf, yearOfDigit } from "../../src/core/symbols/original-futures.js";

const at = (iso: string) => Date.parse(iso);
const MARCH_2026 = at("2026-03-10T14:00:00Z");

test("a single digit names one year of the ten starting two years back", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 2002, max: 2090 }), (digit, current) => {
      const year = yearOfDigit(digit, current);
      assert.equal(year % 10, digit);
      assert.ok(year >= current - 2 && year <= current + 7, `${digit} in ${current}: ${year}`);
    }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 2002, max: 2090 }), (current) => {
      const years = Array.from({ length: 10 }, (_, digit) => yearOfDigit(digit, current)).sort();
      assert.deepEqual(
        years,
        Array.from({ length: 10 }, (_, i) => current - 2 + i),
      );
    }),
  );
});

test("around a decade boundary", () => {
  const names = (current: number) => Array.from({ length: 10 }, (_, digit) => yearOfDigit(digit, current));
  assert.deepEqual(names(2026), [2030, 2031, 2032, 2033, 2024, 2025, 2026, 2027, 2028, 2029]);
  assert.deepEqual(names(2029), [2030, 2031, 2032, 2033, 2034, 2035, 2036, 2027, 2028, 2029]);
  assert.deepEqual(names(2030), [2030, 2031, 2032, 2033, 2034, 2035, 2036, 2037, 2028, 2029]);
  assert.deepEqual(names(2031), [2030, 2031, 2032, 2033, 2034, 2035, 2036, 2037, 2038, 2029]);
  assert.deepEqual(names(2032), [2030, 2031, 2032, 2033, 2034, 2035, 2036, 2037, 2038, 2039]);
});

test("a single-digit year is read against the service clock, in New York's year", () => {
  const full = (symbol: string, nowMs?: number) => fromServiceSymbol(symbol, undefined, nowMs)?.fullSymbol ?? null;
  assert.equal(full("@ESZ6", MARCH_2026), "@ESZ26");
  assert.equal(full("@esz6", MARCH_2026), "@ESZ26");
  assert.equal(full("@ESH4", MARCH_2026), "@ESH24", "two years back: the expired contract, not one ten years out");
  assert.equal(full("@ESH3", MARCH_2026), "@ESH33");
  assert.equal(full("@NQH7", MARCH_2026), "@NQH27");
  // New Year's Eve in New York while it is already 2030 in UTC.
  assert.equal(full("@ESZ7", at("2030-01-01T03:00:00Z")), "@ESZ27");
  assert.equal(full("@ESZ7", at("2030-01-01T06:00:00Z")), "@ESZ37");
  assert.equal(full("@ESZ6"), null, "without the clock only two-digit years are read");
  assert.equal(full("@ESZ26"), "@ESZ26");
  assert.equal(fromServiceSymbol("ESZ6", "future", MARCH_2026)?.fullSymbol, "@ESZ26");
  assert.equal(fromServiceSymbol("ESZ6", undefined, MARCH_2026), null, "without @ only with SymbolType future");
  assert.equal(full("@ESX6", MARCH_2026), null, "a month ES is not listed in");
  assert.equal(full("@ESZ", MARCH_2026), null);
  assert.equal(full("@ESZ126", MARCH_2026), null);
});

test("the original Treasury roots name the service's contracts, with either year form", () => {
  const cases: [string, string][] = [
    ["@TYZ6", "@ZNZ26"],
    ["@TYM27", "@ZNM27"],
    ["@USH6", "@ZBH26"],
    ["@FVU6", "@ZFU26"],
    ["@TUZ26", "@ZTZ26"],
  ];
  for (const [written, service] of cases) {
    const instrument = fromServiceSymbol(written, "future", MARCH_2026) as Instrument;
    assert.equal(instrument.fullSymbol, service, written);
    assert.equal(instrument.exchangeSymbol, service.slice(1, 3));
    assert.equal(instrument.exchange, "XCBT");
  }
  assert.equal(fromServiceSymbol("TYZ6", "future", MARCH_2026)?.fullSymbol, "@ZNZ26");
  const exchange = fromExchangeSymbol({ symbol: "TY", securityType: "FUT", maturityMonthYear: "202612" });
  assert.equal(exchange?.fullSymbol, "@ZNZ26");
  assert.equal(
    fromExchangeSymbol({ symbol: "US", securityType: "FUT", maturityMonthYear: "202612", securityExchange: "XCME" }),
    null,
    "the contract trades on CBOT only",
  );
  for (const [original, root] of Object.entries(ORIGINAL_ROOTS)) {
    assert.ok(
      FUTURE_CONTRACTS.some((c) => c.root === root),
      `${original} names a listed root`,
    );
    assert.ok(!FUTURE_CONTRACTS.some((c) => c.root === original), `${original} is no root of the service's`);
  }
});

test("every listed contract reads the same with one year digit as with two", () => {
  const listed = fc
    .constantFrom(...FUTURE_CONTRACTS)
    .chain((contract) => fc.tuple(fc.constant(contract), fc.constantFrom(...contract.months)));
  fc.assert(
    fc.property(
      listed,
      fc.integer({ min: 0, max: 9 }),
      fc.integer({ min: 2003, max: 2090 }),
      ([contract, month], digit, current) => {
        const nowMs = Date.UTC(current, 5, 15);
        const year = yearOfDigit(digit, current);
        const short = fromServiceSymbol(`@${contract.root}${month}${digit}`, undefined, nowMs);
        const long = fromServiceSymbol(`@${contract.root}${month}${String(year % 100).padStart(2, "0")}`);
        assert.ok(short && long);
        assert.deepEqual(short, long);
      },
    ),
  );
});

test("the symbol a client wrote is remembered only for a future not in the service's form", () => {
  const future = fromServiceSymbol("@ESZ26") as Instrument;
  assert.equal(sentSymbolOf(" @esz6 ", future), "@ESZ6");
  assert.equal(sentSymbolOf("@ESZ26", future), null);
  assert.equal(sentSymbolOf("@esz26", future), null);
  assert.equal(sentSymbolOf("ESZ26", future), "ESZ26");
  assert.equal(sentSymbolOf("@TYZ6", fromServiceSymbol("@ZNZ26") as Instrument), "@TYZ6");
  assert.equal(sentSymbolOf("BRK/B", fromServiceSymbol("BRK.B") as Instrument), null);
  assert.equal(sentSymbolOf("EUR/USD", fromServiceSymbol("EURUSD") as Instrument), null);
});
