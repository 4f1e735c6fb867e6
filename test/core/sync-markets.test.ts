import assert from "node:assert/strict";
import { test } from "node:test";
import { SYNC_MARKETS } from "../../src/core/autotrade/settings.js";
import { openVenues, SYNC_VENUES, syncMarketOf, venueOf } from "../../src/core/autotrade/sync-markets.js";
import { japanHolidays } from "../../src/core/japan-holidays.js";
import { currentOrNextSession, OSAKA, sessionAt, XETRA } from "../../src/core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const instrument = (symbol: string) => fromServiceSymbol(symbol) as Instrument;
const opens = (venue: string, from: string) =>
  iso(currentOrNextSession(SYNC_VENUES.find((v) => v.id === venue)?.schedule ?? XETRA, at(from)).opensAtMs);

test("every market of WillSyncToOpen has a venue", () => {
  assert.deepEqual([...new Set(SYNC_VENUES.map((v) => v.market))].sort(), [...SYNC_MARKETS].sort());
});

test("each symbol the service trades belongs to its market and is synced at its own schedule's open", () => {
  assert.equal(syncMarketOf(instrument("AAPL")), "StocksUSA");
  assert.equal(syncMarketOf(instrument("AAPL261218C00150000")), "OptionsUSA");
  assert.equal(syncMarketOf(instrument("EURUSD")), "Forex");
  assert.equal(venueOf(instrument("@ESM26")).id, "FuturesUSA");
  assert.equal(venueOf(instrument("@KCN26")).id, "FuturesUSA.Softs");
  assert.equal(venueOf(instrument("@FDAXM26")).id, "FuturesEurope");
  assert.equal(syncMarketOf({ symbolType: "future", exchange: "XOSE" }), "FuturesAsia");
});

test("Xetra opens at 09:00 Frankfurt: 08:00 UTC in winter, 07:00 UTC in summer", () => {
  assert.equal(opens("StocksEurope", "2026-01-13T05:00:00Z"), "2026-01-13T08:00:00.000Z");
  assert.equal(opens("StocksEurope", "2026-07-14T05:00:00Z"), "2026-07-14T07:00:00.000Z");
  assert.equal(sessionAt(XETRA, at("2026-07-14T15:29:00Z")) !== null, true);
  assert.equal(sessionAt(XETRA, at("2026-07-14T15:31:00Z")), null, "closes 17:30 Frankfurt");
  // Good Friday and Easter Monday 2026 (April 3 and 6) are closed.
  assert.equal(opens("StocksEurope", "2026-04-02T18:00:00Z"), "2026-04-07T07:00:00.000Z");
});

test("Eurex opens at 01:10 Frankfurt: the evening before in UTC in summer", () => {
  assert.equal(opens("FuturesEurope", "2026-01-12T21:30:00Z"), "2026-01-13T00:10:00.000Z");
  assert.equal(opens("FuturesEurope", "2026-07-13T20:00:00Z"), "2026-07-13T23:10:00.000Z");
});

test("the Osaka Exchange opens at 08:45 Tokyo all year (no daylight saving): 23:45 UTC the day before", () => {
  assert.equal(opens("FuturesAsia", "2026-01-13T12:00:00Z"), "2026-01-13T23:45:00.000Z");
  assert.equal(opens("FuturesAsia", "2026-07-13T12:00:00Z"), "2026-07-13T23:45:00.000Z");
  assert.equal(sessionAt(OSAKA, at("2026-07-14T06:44:00Z")) !== null, true);
  assert.equal(sessionAt(OSAKA, at("2026-07-14T06:46:00Z")), null, "closes 15:45 Tokyo");
  // Golden Week 2026: May 4, 5 and 6 (the substitute for Sunday May 3) are closed.
  assert.equal(opens("FuturesAsia", "2026-05-01T12:00:00Z"), "2026-05-06T23:45:00.000Z");
  // The year-end closure: December 31 to January 3.
  assert.equal(opens("FuturesAsia", "2026-12-30T12:00:00Z"), "2027-01-03T23:45:00.000Z");
});

test("Japan's holidays of 2026, substitutes and the citizens' holiday included", () => {
  const dates = japanHolidays(2026).map((d) => `${d.month}-${d.day}`);
  assert.deepEqual(dates, [
    "1-1",
    "1-12",
    "2-11",
    "2-23",
    "3-20",
    "4-29",
    "5-3",
    "5-4",
    "5-5",
    "5-6",
    "7-20",
    "8-11",
    "9-21",
    "9-22",
    "9-23",
    "10-12",
    "11-3",
    "11-23",
  ]);
  // 2025: Sunday holidays move to Monday (February 24, November 24).
  const of2025 = japanHolidays(2025).map((d) => `${d.month}-${d.day}`);
  assert.ok(of2025.includes("2-24") && of2025.includes("11-24") && of2025.includes("5-6"));
  // 2020's Olympic moves.
  const of2020 = japanHolidays(2020).map((d) => `${d.month}-${d.day}`);
  assert.ok(of2020.includes("7-23") && of2020.includes("7-24") && of2020.includes("8-10"));
  assert.ok(!of2020.includes("10-12") && !of2020.includes("8-11"));
});

test("US stocks open at 09:30 New York, futures Sunday 18:00 and forex Sunday 17:00, across daylight saving", () => {
  assert.equal(opens("StocksUSA", "2026-01-13T12:00:00Z"), "2026-01-13T14:30:00.000Z");
  assert.equal(opens("StocksUSA", "2026-07-14T12:00:00Z"), "2026-07-14T13:30:00.000Z");
  assert.equal(opens("FuturesUSA", "2026-01-10T12:00:00Z"), "2026-01-11T23:00:00.000Z");
  assert.equal(opens("FuturesUSA", "2026-07-11T12:00:00Z"), "2026-07-12T22:00:00.000Z");
  assert.equal(opens("Forex", "2026-01-10T12:00:00Z"), "2026-01-11T22:00:00.000Z");
  assert.equal(opens("Forex", "2026-07-11T12:00:00Z"), "2026-07-12T21:00:00.000Z");
});

test("the venues open at an instant, each with its session's open", () => {
  // A Tuesday at 10:00 New York in March: US and European markets and forex trade; Osaka is closed.
  const open = new Map(openVenues(at("2026-03-10T14:00:00Z")).map((o) => [o.venue.id, iso(o.opensAtMs)]));
  assert.equal(open.get("StocksUSA"), "2026-03-10T13:30:00.000Z");
  // Europe keeps winter time until March 29: Xetra opened at 08:00 UTC.
  assert.equal(open.get("StocksEurope"), "2026-03-10T08:00:00.000Z");
  assert.equal(open.get("FuturesUSA"), "2026-03-09T22:00:00.000Z");
  assert.equal(open.has("FuturesAsia"), false);
});
