/**
 * Civil dates and wall-clock times in a time zone, computed with Intl (no
 * I/O): what a market's local date is at an instant, and the instant of a
 * local time on a local date.
 */
export interface LocalDate {
  readonly year: number;
  /** 1 to 12. */
  readonly month: number;
  readonly day: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall-clock fields in the zone at an instant. */
export function localParts(zone: string, atMs: number) {
  const parts = Object.fromEntries(
    formatter(zone)
      .formatToParts(atMs)
      .map((p) => [p.type, p.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

export function localDate(zone: string, atMs: number): LocalDate {
  const { year, month, day } = localParts(zone, atMs);
  return { year, month, day };
}

/** The instant at which the zone's clocks show `minutes` after midnight on the date. */
export function instantOf(zone: string, date: LocalDate, minutes: number): number {
  const wanted = Date.UTC(date.year, date.month - 1, date.day, 0, minutes);
  // Start from the wall time read as UTC and correct by the zone's offset twice (DST edges).
  let guess = wanted;
  for (let i = 0; i < 2; i++) {
    const p = localParts(zone, guess);
    const shown = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
    guess += wanted - shown;
  }
  return guess;
}

export function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** 0 = Sunday ... 6 = Saturday. */
export const weekday = (date: LocalDate): number => new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();

export const sameDate = (a: LocalDate, b: LocalDate): boolean =>
  a.year === b.year && a.month === b.month && a.day === b.day;

/** The n-th given weekday of a month (n = -1: the last). */
export function nthWeekday(year: number, month: number, day: number, n: number): LocalDate {
  if (n > 0) {
    const first = weekday({ year, month, day: 1 });
    return { year, month, day: 1 + ((day - first + 7) % 7) + (n - 1) * 7 };
  }
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const lastDay = weekday({ year, month, day: last });
  return { year, month, day: last - ((lastDay - day + 7) % 7) };
}

/** Easter Sunday (Gregorian; anonymous algorithm). */
export function easter(year: number): LocalDate {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return { year, month, day };
}
