import { addDays, type LocalDate, nthWeekday, sameDate, weekday } from "./calendar.js";

/**
 * The days Japan's exchanges (JPX: the Tokyo Stock Exchange, the Osaka
 * Exchange) do not trade on a weekday: the national holidays of the Act on
 * National Holidays as amended through 2018 (with the one-offs of 2019 to
 * 2021: the enthronement and the Olympic moves), their substitutes (a
 * holiday on a Sunday moves to the next day that is not one) and the
 * citizens' holidays (a day between two holidays), plus the exchanges' own
 * year-end closure, December 31 to January 3.
 */

/** The equinoxes by the formula of the National Astronomical Observatory (valid 1980 to 2099). */
const equinox = (year: number, base: number): number =>
  Math.floor(base + 0.242194 * (year - 1980) - Math.floor((year - 1980) / 4));

const date = (year: number, month: number, day: number): LocalDate => ({ year, month, day });

/** Holidays moved or added for one year only. */
const ONE_OFFS: Readonly<
  Record<number, { readonly moved: readonly LocalDate[]; readonly added: readonly LocalDate[] }>
> = {
  2019: { moved: [], added: [date(2019, 4, 30), date(2019, 5, 1), date(2019, 5, 2), date(2019, 10, 22)] },
  // The Tokyo Olympics moved Marine Day, Sports Day and Mountain Day around the games.
  2020: { moved: [date(2020, 7, 23), date(2020, 7, 24), date(2020, 8, 10)], added: [] },
  2021: { moved: [date(2021, 7, 22), date(2021, 7, 23), date(2021, 8, 8)], added: [] },
};

/** The national holidays of a year as the law names them, before substitutes. */
function namedHolidays(year: number): LocalDate[] {
  const moved = ONE_OFFS[year]?.moved;
  const days = [
    date(year, 1, 1),
    nthWeekday(year, 1, 1, 2),
    date(year, 2, 11),
    ...(year >= 2020 ? [date(year, 2, 23)] : year <= 2018 ? [date(year, 12, 23)] : []),
    date(year, 3, equinox(year, 20.8431)),
    date(year, 4, 29),
    date(year, 5, 3),
    date(year, 5, 4),
    date(year, 5, 5),
    // Marine Day, Sports Day and Mountain Day, unless a one-off moved them.
    ...(moved ?? [nthWeekday(year, 7, 1, 3), nthWeekday(year, 10, 1, 2), ...(year >= 2016 ? [date(year, 8, 11)] : [])]),
    nthWeekday(year, 9, 1, 3),
    date(year, 9, equinox(year, 23.2488)),
    date(year, 11, 3),
    date(year, 11, 23),
    ...(ONE_OFFS[year]?.added ?? []),
  ];
  return days;
}

const holidayCache = new Map<number, readonly LocalDate[]>();

/** Japan's holidays of a year: the named ones, their substitutes and the citizens' holidays, in date order. */
export function japanHolidays(year: number): readonly LocalDate[] {
  const known = holidayCache.get(year);
  if (known) return known;
  const named = namedHolidays(year);
  const isNamed = (day: LocalDate) => named.some((h) => sameDate(h, day));
  const all = [...named];
  for (const holiday of named) {
    if (weekday(holiday) !== 0) continue;
    // A holiday on a Sunday moves to the next day that is not a holiday itself.
    let substitute = addDays(holiday, 1);
    while (isNamed(substitute)) substitute = addDays(substitute, 1);
    all.push(substitute);
  }
  for (const holiday of named) {
    // A day between two holidays is a holiday too (in practice in May and some Septembers).
    const between = addDays(holiday, 1);
    if (!isNamed(between) && isNamed(addDays(holiday, 2)) && weekday(between) !== 0) all.push(between);
  }
  const sorted = all
    .filter((day, i) => all.findIndex((other) => sameDate(other, day)) === i)
    .sort((a, b) => a.month - b.month || a.day - b.day);
  holidayCache.set(year, sorted);
  return sorted;
}

/** Whether JPX is closed on the (week)day: a holiday of Japan or the year-end closure. */
export function isJpxHoliday(day: LocalDate): boolean {
  if ((day.month === 1 && day.day <= 3) || (day.month === 12 && day.day === 31)) return true;
  return japanHolidays(day.year).some((holiday) => sameDate(holiday, day));
}
