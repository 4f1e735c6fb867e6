import assert from "node:assert/strict";
import { test } from "node:test";
import { hasExpired, tradingEndOf } from "../../src/core/orders/contract-expiry.js";
import { GLOBEX, lastSessionBefore, US_EQUITIES } from "../../src/core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const at = (symbol: string): Instrument => {
  const instrument = fromServiceSymbol(symbol);
  assert.ok(instrument, symbol);
  return instrument;
};
const iso = (ms: number | null | undefined) => (ms == null ? "none" : new Date(ms).toISOString());

test("options trade through their expiry date in New York, futures through their contract month", () => {
  const option = at("AAPL260320C00150000");
  assert.equal(option.expiry, "2026-03-20");
  assert.equal(hasExpired(option, Date.parse("2026-03-20T15:00:00Z")), false, "expiry day");
  assert.equal(
    hasExpired(option, Date.parse("2026-03-21T02:00:00Z")),
    false,
    "already the 21st in UTC, still the 20th (22:00 EDT) in New York",
  );
  assert.equal(hasExpired(option, Date.parse("2026-03-21T03:59:59Z")), false);
  assert.equal(hasExpired(option, Date.parse("2026-03-21T04:00:00Z")), true, "midnight in New York");
  const future = at("@ESH26");
  assert.equal(future.expiry, "2026-03");
  assert.equal(hasExpired(future, Date.parse("2026-03-31T20:00:00Z")), false);
  assert.equal(hasExpired(future, Date.parse("2026-04-01T03:59:59Z")), false, "March 31 23:59 in New York");
  assert.equal(hasExpired(future, Date.parse("2026-04-01T04:00:00Z")), true);
  assert.equal(hasExpired(at("AAPL"), Date.parse("2099-01-01T00:00:00Z")), false, "stocks never expire");
  assert.equal(hasExpired(at("EURUSD"), Date.parse("2099-01-01T00:00:00Z")), false);
});

test("a contract's trading ends at New York midnight after its last day, in winter and summer time and across the year", () => {
  assert.equal(iso(tradingEndOf(at("AAPL260116C00150000"))), "2026-01-17T05:00:00.000Z", "EST");
  assert.equal(iso(tradingEndOf(at("AAPL260717P00150000"))), "2026-07-18T04:00:00.000Z", "EDT");
  assert.equal(iso(tradingEndOf(at("@ESZ26"))), "2027-01-01T05:00:00.000Z", "December's contract ends with the year");
  assert.equal(iso(tradingEndOf(at("@ESM26"))), "2026-07-01T04:00:00.000Z");
  assert.equal(tradingEndOf(at("AAPL")), null);
  assert.equal(tradingEndOf(at("EURUSD")), null);
});

test("the last session before an instant: the day's own once closed, else the trading day before", () => {
  const fridayClose = "2026-03-20T20:00:00.000Z";
  const saturdayNight = Date.parse("2026-03-21T04:00:00Z");
  assert.equal(iso(lastSessionBefore(US_EQUITIES, saturdayNight)?.closesAtMs), fridayClose);
  assert.equal(iso(lastSessionBefore(US_EQUITIES, Date.parse(fridayClose))?.closesAtMs), fridayClose, "at the close");
  assert.equal(
    iso(lastSessionBefore(US_EQUITIES, Date.parse(fridayClose) - 1)?.closesAtMs),
    "2026-03-19T20:00:00.000Z",
    "while Friday's session is open, Thursday's",
  );
  assert.equal(
    iso(lastSessionBefore(US_EQUITIES, Date.parse("2026-04-04T04:00:00Z"))?.closesAtMs),
    "2026-04-02T20:00:00.000Z",
    "Good Friday is an NYSE holiday",
  );
  assert.equal(
    iso(lastSessionBefore(GLOBEX, Date.parse("2026-04-01T04:00:00Z"))?.closesAtMs),
    "2026-03-31T21:00:00.000Z",
  );
});
