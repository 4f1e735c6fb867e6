import assert from "node:assert/strict";
import { test } from "node:test";
import { easter } from "../../src/core/calendar.js";
import {
  currentOrNextSession,
  dayOrderExpiry,
  EUREX,
  FOREX,
  GLOBEX,
  ICE_SOFTS,
  nyseHolidays,
  type Schedule,
  scheduleOf,
  sessionAt,
  US_EQUITIES,
} from "../../src/core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const at = (iso: string) => Date.parse(iso);
const open = (schedule: Schedule, iso: string) => sessionAt(schedule, at(iso)) !== null;
const iso = (ms: number) => new Date(ms).toISOString();
const dates = (year: number) =>
  nyseHolidays(year).map((d) => `${d.year}-${String(d.month).padStart(2, "0")}-${String(d.day).padStart(2, "0")}`);

test("Easter", () => {
  assert.deepEqual(easter(2026), { year: 2026, month: 4, day: 5 });
  assert.deepEqual(easter(2027), { year: 2027, month: 3, day: 28 });
  assert.deepEqual(easter(2030), { year: 2030, month: 4, day: 21 });
});

test("NYSE holidays, with weekend observance", () => {
  assert.deepEqual(dates(2026), [
    "2026-01-01",
    "2026-01-19",
    "2026-02-16",
    "2026-04-03",
    "2026-05-25",
    "2026-06-19",
    "2026-07-03",
    "2026-09-07",
    "2026-11-26",
    "2026-12-25",
  ]);
  assert.deepEqual(dates(2027), [
    "2027-01-01",
    "2027-01-18",
    "2027-02-15",
    "2027-03-26",
    "2027-05-31",
    "2027-06-18",
    "2027-07-05",
    "2027-09-06",
    "2027-11-25",
    "2027-12-24",
  ]);
  assert.equal(dates(2022).includes("2021-12-31"), false, "New Year's Day on a Saturday is not observed");
  assert.equal(dates(2022)[0], "2022-01-17");
});

test("the NYSE's one-off closures close US stocks and ICE softs, not Globex or Eurex", () => {
  for (const day of [
    "2025-01-09",
    "2018-12-05",
    "2012-10-29",
    "2012-10-30",
    "2007-01-02",
    "2004-06-11",
    "2001-09-11",
  ]) {
    assert.ok(dates(Number(day.slice(0, 4))).includes(day), day);
    assert.equal(open(US_EQUITIES, `${day}T16:00:00Z`), false, `${day}: US stocks`);
    assert.equal(open(ICE_SOFTS, `${day}T14:00:00Z`), false, `${day}: ICE softs`);
  }
  assert.equal(open(GLOBEX, "2025-01-09T14:00:00Z"), true);
  assert.equal(open(EUREX, "2025-01-09T10:00:00Z"), true);
  assert.equal(open(US_EQUITIES, "2025-01-08T16:00:00Z"), true, "the day before trades");
  assert.equal(open(US_EQUITIES, "2025-01-10T16:00:00Z"), true, "the day after trades");
  assert.deepEqual(dates(2025).slice(0, 3), ["2025-01-01", "2025-01-09", "2025-01-20"], "in date order");
  assert.equal(
    iso(dayOrderExpiry(US_EQUITIES, at("2018-12-04T22:00:00Z"))),
    "2018-12-06T21:00:00.000Z",
    "a DAY order placed after Tuesday's close lives through the closed Wednesday",
  );
});

test("US stocks trade 09:30 to 16:00 New York, across daylight saving", () => {
  assert.equal(open(US_EQUITIES, "2026-03-02T14:29:59Z"), false);
  assert.equal(open(US_EQUITIES, "2026-03-02T14:30:00Z"), true, "09:30 EST");
  assert.equal(open(US_EQUITIES, "2026-03-02T20:59:59Z"), true);
  assert.equal(open(US_EQUITIES, "2026-03-02T21:00:00Z"), false, "16:00 EST");
  assert.equal(open(US_EQUITIES, "2026-03-09T13:30:00Z"), true, "09:30 EDT");
  assert.equal(open(US_EQUITIES, "2026-03-07T15:00:00Z"), false, "Saturday");
  assert.equal(open(US_EQUITIES, "2026-04-03T15:00:00Z"), false, "Good Friday");
  assert.equal(open(US_EQUITIES, "2026-11-27T17:59:00Z"), true, "early close day before 13:00");
  assert.equal(open(US_EQUITIES, "2026-11-27T18:00:00Z"), false, "13:00 early close");
});

test("DAY orders expire at the close of their session, or of the next one when placed while closed", () => {
  assert.equal(iso(dayOrderExpiry(US_EQUITIES, at("2026-03-02T15:00:00Z"))), "2026-03-02T21:00:00.000Z");
  assert.equal(
    iso(dayOrderExpiry(US_EQUITIES, at("2026-03-07T15:00:00Z"))),
    "2026-03-09T20:00:00.000Z",
    "Saturday -> Monday, EDT",
  );
  assert.equal(
    iso(dayOrderExpiry(US_EQUITIES, at("2026-04-02T21:30:00Z"))),
    "2026-04-06T20:00:00.000Z",
    "over Good Friday",
  );
  const next = currentOrNextSession(US_EQUITIES, at("2026-03-02T22:00:00Z"));
  assert.equal(iso(next.opensAtMs), "2026-03-03T14:30:00.000Z");
});

test("Globex futures: Sunday evening to Friday, with the daily 17:00-18:00 break", () => {
  assert.equal(open(GLOBEX, "2026-03-01T22:59:00Z"), false, "Sunday before 18:00 EST");
  assert.equal(open(GLOBEX, "2026-03-01T23:00:00Z"), true, "Sunday 18:00 EST");
  assert.equal(open(GLOBEX, "2026-03-02T21:59:00Z"), true);
  assert.equal(open(GLOBEX, "2026-03-02T22:30:00Z"), false, "daily break");
  assert.equal(open(GLOBEX, "2026-03-02T23:00:00Z"), true);
  assert.equal(open(GLOBEX, "2026-03-06T22:00:00Z"), false, "Friday 17:00");
  assert.equal(open(GLOBEX, "2026-04-03T12:00:00Z"), false, "Good Friday");
  const session = sessionAt(GLOBEX, at("2026-03-03T03:00:00Z"));
  assert.deepEqual(
    session?.tradingDay,
    { year: 2026, month: 3, day: 3 },
    "the evening belongs to the next trading day",
  );
});

test("forex trades around the clock from Sunday 17:00 to Friday 17:00 New York", () => {
  assert.equal(open(FOREX, "2026-03-01T21:59:00Z"), false);
  assert.equal(open(FOREX, "2026-03-01T22:00:00Z"), true);
  assert.equal(open(FOREX, "2026-03-03T22:00:00Z"), true, "no daily break");
  assert.equal(open(FOREX, "2026-03-06T21:59:00Z"), true);
  assert.equal(open(FOREX, "2026-03-06T22:00:00Z"), false);
});

test("Eurex in Frankfurt time, ICE softs in New York", () => {
  assert.equal(open(EUREX, "2026-03-02T00:10:00Z"), true, "01:10 CET");
  assert.equal(open(EUREX, "2026-03-02T21:00:00Z"), false, "22:00 CET");
  assert.equal(open(EUREX, "2026-05-01T10:00:00Z"), false, "Labour Day");
  assert.equal(open(ICE_SOFTS, "2026-03-02T09:15:00Z"), true, "04:15 EST");
  assert.equal(open(ICE_SOFTS, "2026-03-02T18:30:00Z"), false, "13:30 EST");
});

test("each instrument trades on its market's schedule", () => {
  const schedule = (symbol: string) => scheduleOf(fromServiceSymbol(symbol) as Instrument).name;
  assert.equal(schedule("AAPL"), "US equities");
  assert.equal(schedule("AAPL261218C00150000"), "US equities");
  assert.equal(schedule("@ESM26"), "CME Globex");
  assert.equal(schedule("@GCM26"), "CME Globex");
  assert.equal(schedule("@KCN26"), "ICE US softs");
  assert.equal(schedule("@DXM26"), "CME Globex");
  assert.equal(schedule("@FDAXM26"), "Eurex");
  assert.equal(schedule("EURUSD"), "Forex");
});
