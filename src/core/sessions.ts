import { addDays, easter, instantOf, type LocalDate, localDate, nthWeekday, sameDate, weekday } from "./calendar.js";
import { isJpxHoliday } from "./japan-holidays.js";
import type { Instrument } from "./symbols/instrument.js";

/**
 * When markets trade. Each market has a schedule: for a trading day (a date
 * in the market's zone) the window its session covers, or none on weekends
 * and holidays. Orders fill only inside a session; DAY orders expire at the
 * end of the session they were placed in (or of the next one, if placed while
 * the market was closed).
 *
 * - US stocks and options: 09:30 to 16:00 New York, NYSE holidays and
 *   one-off closures closed, 13:00 closes on the NYSE early-close days.
 * - CME Globex futures (CME, CBOT, NYMEX, COMEX; ICE's dollar index): from
 *   18:00 New York the evening before to 17:00, Monday to Friday, so the daily
 *   break is 17:00 to 18:00 and the week opens Sunday 18:00. Closed on New
 *   Year's Day, Good Friday and Christmas; holiday early halts are not modelled.
 * - ICE US softs: 04:15 to 13:30 New York on NYSE trading days.
 * - Eurex: 01:10 to 22:00 Frankfurt, Monday to Friday, Eurex holidays closed.
 * - Xetra (European stocks; Eurex's equity options keep its hours): 09:00 to
 *   17:30 Frankfurt on the same trading days as Eurex.
 * - Osaka Exchange (JPX derivatives): the day session, 08:45 to 15:45 Tokyo
 *   (no daylight saving), Japan's holidays and the year-end closure closed;
 *   the night session is not modelled.
 * - Forex: 24 hours from Sunday 17:00 New York to Friday 17:00, no holidays.
 */
interface Window {
  /** The session starts on the trading day itself (0) or the evening before (-1). */
  readonly startDay: 0 | -1;
  /** Minutes after local midnight. */
  readonly start: number;
  readonly end: number;
}

export interface Schedule {
  readonly name: string;
  readonly zone: string;
  window(day: LocalDate): Window | null;
}

export interface TradingSession {
  /** The trading day (local date) the session belongs to. */
  readonly tradingDay: LocalDate;
  readonly opensAtMs: number;
  readonly closesAtMs: number;
}

const NEW_YORK = "America/New_York";
const HM = (h: number, m = 0) => h * 60 + m;
const isWeekday = (day: LocalDate) => weekday(day) >= 1 && weekday(day) <= 5;

/** A fixed-date holiday moved to Friday when it falls on Saturday and Monday when on Sunday. */
function observed(date: LocalDate): LocalDate {
  const w = weekday(date);
  return w === 6 ? addDays(date, -1) : w === 0 ? addDays(date, 1) : date;
}

/**
 * Days the NYSE closed outside its rules: national days of mourning for
 * former presidents, the September 11 attacks and Hurricane Sandy. ICE US
 * softs, which keep the NYSE's trading days here, closed on them too; CME
 * Globex and Eurex traded (Globex halted early on some, and its early halts
 * are not modelled).
 */
const NYSE_ONE_OFF_CLOSURES: readonly LocalDate[] = [
  { year: 2001, month: 9, day: 11 },
  { year: 2001, month: 9, day: 12 },
  { year: 2001, month: 9, day: 13 },
  { year: 2001, month: 9, day: 14 },
  { year: 2004, month: 6, day: 11 },
  { year: 2007, month: 1, day: 2 },
  { year: 2012, month: 10, day: 29 },
  { year: 2012, month: 10, day: 30 },
  { year: 2018, month: 12, day: 5 },
  { year: 2025, month: 1, day: 9 },
];

/** The NYSE's closed weekdays of a year, in date order: its holidays and its one-off closures. */
export function nyseHolidays(year: number): LocalDate[] {
  const newYear = { year, month: 1, day: 1 };
  const holidays = [
    // NYSE does not move New Year's Day back into the old year.
    ...(weekday(newYear) === 6 ? [] : [observed(newYear)]),
    nthWeekday(year, 1, 1, 3),
    nthWeekday(year, 2, 1, 3),
    addDays(easter(year), -2),
    nthWeekday(year, 5, 1, -1),
    ...(year >= 2022 ? [observed({ year, month: 6, day: 19 })] : []),
    observed({ year, month: 7, day: 4 }),
    nthWeekday(year, 9, 1, 1),
    nthWeekday(year, 11, 4, 4),
    observed({ year, month: 12, day: 25 }),
    ...NYSE_ONE_OFF_CLOSURES.filter((day) => day.year === year),
  ];
  return holidays.sort((a, b) => a.month - b.month || a.day - b.day);
}

const isNyseHoliday = (day: LocalDate) => nyseHolidays(day.year).some((h) => sameDate(h, day));

function isNyseEarlyClose(day: LocalDate): boolean {
  if (!isWeekday(day) || isNyseHoliday(day)) return false;
  const thanksgiving = nthWeekday(day.year, 11, 4, 4);
  return (
    sameDate(day, { year: day.year, month: 7, day: 3 }) ||
    sameDate(day, addDays(thanksgiving, 1)) ||
    sameDate(day, { year: day.year, month: 12, day: 24 })
  );
}

export const US_EQUITIES: Schedule = {
  name: "US equities",
  zone: NEW_YORK,
  window: (day) =>
    isWeekday(day) && !isNyseHoliday(day)
      ? { startDay: 0, start: HM(9, 30), end: isNyseEarlyClose(day) ? HM(13) : HM(16) }
      : null,
};

const isGlobexHoliday = (day: LocalDate) =>
  sameDate(day, observed({ year: day.year, month: 1, day: 1 })) ||
  sameDate(day, addDays(easter(day.year), -2)) ||
  sameDate(day, observed({ year: day.year, month: 12, day: 25 }));

export const GLOBEX: Schedule = {
  name: "CME Globex",
  zone: NEW_YORK,
  window: (day) => (isWeekday(day) && !isGlobexHoliday(day) ? { startDay: -1, start: HM(18), end: HM(17) } : null),
};

export const ICE_SOFTS: Schedule = {
  name: "ICE US softs",
  zone: NEW_YORK,
  window: (day) => (isWeekday(day) && !isNyseHoliday(day) ? { startDay: 0, start: HM(4, 15), end: HM(13, 30) } : null),
};

const isEurexHoliday = (day: LocalDate) => {
  const e = easter(day.year);
  return [
    { year: day.year, month: 1, day: 1 },
    addDays(e, -2),
    addDays(e, 1),
    { year: day.year, month: 5, day: 1 },
    { year: day.year, month: 12, day: 24 },
    { year: day.year, month: 12, day: 25 },
    { year: day.year, month: 12, day: 26 },
    { year: day.year, month: 12, day: 31 },
  ].some((h) => sameDate(h, day));
};

export const EUREX: Schedule = {
  name: "Eurex",
  zone: "Europe/Berlin",
  window: (day) => (isWeekday(day) && !isEurexHoliday(day) ? { startDay: 0, start: HM(1, 10), end: HM(22) } : null),
};

/** European stocks (Xetra, Frankfurt) and Eurex's equity options, which keep Xetra's hours. */
export const XETRA: Schedule = {
  name: "Xetra",
  zone: "Europe/Berlin",
  window: (day) => (isWeekday(day) && !isEurexHoliday(day) ? { startDay: 0, start: HM(9), end: HM(17, 30) } : null),
};

/** The Osaka Exchange's day session (JPX derivatives: Nikkei 225, TOPIX, JGB futures). */
export const OSAKA: Schedule = {
  name: "Osaka Exchange",
  zone: "Asia/Tokyo",
  window: (day) => (isWeekday(day) && !isJpxHoliday(day) ? { startDay: 0, start: HM(8, 45), end: HM(15, 45) } : null),
};

export const FOREX: Schedule = {
  name: "Forex",
  zone: NEW_YORK,
  window: (day) => (isWeekday(day) ? { startDay: -1, start: HM(17), end: HM(17) } : null),
};

export function scheduleOf(instrument: Pick<Instrument, "symbolType" | "exchange" | "exchangeSymbol">): Schedule {
  switch (instrument.symbolType) {
    case "stock":
    case "option":
      return US_EQUITIES;
    case "forex":
      return FOREX;
    case "future":
      if (instrument.exchange === "XEUR") return EUREX;
      if (instrument.exchange === "XICE" && instrument.exchangeSymbol !== "DX") return ICE_SOFTS;
      return GLOBEX;
  }
}

function sessionOn(schedule: Schedule, day: LocalDate): TradingSession | null {
  const window = schedule.window(day);
  if (!window) return null;
  return {
    tradingDay: day,
    opensAtMs: instantOf(schedule.zone, addDays(day, window.startDay), window.start),
    closesAtMs: instantOf(schedule.zone, day, window.end),
  };
}

/**
 * The last answer per schedule and the span of time it holds for: within a
 * session the session, within a closed spell nothing until the next open.
 * Working out a session reads the zone's calendar (tens of microseconds), and
 * the fill loop asks for every quote and order, mostly about the same span.
 */
const lastAnswers = new Map<
  Schedule,
  { readonly from: number; readonly to: number; readonly session: TradingSession | null }
>();

/** The session open at the instant, or null when the market is closed. */
export function sessionAt(schedule: Schedule, atMs: number): TradingSession | null {
  const known = lastAnswers.get(schedule);
  if (known && known.from <= atMs && atMs < known.to) return known.session;
  const today = localDate(schedule.zone, atMs);
  for (const day of [today, addDays(today, 1)]) {
    const session = sessionOn(schedule, day);
    if (session && session.opensAtMs <= atMs && atMs < session.closesAtMs) {
      lastAnswers.set(schedule, { from: session.opensAtMs, to: session.closesAtMs, session });
      return session;
    }
  }
  lastAnswers.set(schedule, { from: atMs, to: nextSessionAfter(schedule, atMs).opensAtMs, session: null });
  return null;
}

/** The first session opening after the instant. */
function nextSessionAfter(schedule: Schedule, atMs: number): TradingSession {
  const today = localDate(schedule.zone, atMs);
  // Two weeks always hold a trading day, holidays included.
  for (let k = 0; k < 15; k++) {
    const session = sessionOn(schedule, addDays(today, k));
    if (session && session.opensAtMs > atMs) return session;
  }
  throw new Error(`${schedule.name} has no session within two weeks of ${new Date(atMs).toISOString()}`);
}

/** The last session that closed at or before the instant (within two weeks), or null. */
export function lastSessionBefore(schedule: Schedule, atMs: number): TradingSession | null {
  const today = localDate(schedule.zone, atMs);
  for (let k = 0; k < 15; k++) {
    const session = sessionOn(schedule, addDays(today, -k));
    if (session && session.closesAtMs <= atMs) return session;
  }
  return null;
}

/** The session open at the instant, or else the next one to open. */
export function currentOrNextSession(schedule: Schedule, atMs: number): TradingSession {
  return sessionAt(schedule, atMs) ?? nextSessionAfter(schedule, atMs);
}

/** When a DAY order placed at the instant expires: the close of the current or next session. */
export const dayOrderExpiry = (schedule: Schedule, placedAtMs: number): number =>
  currentOrNextSession(schedule, placedAtMs).closesAtMs;
