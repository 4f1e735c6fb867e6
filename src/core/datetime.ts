import { instantOf } from "./calendar.js";

const ISO_DATE_TIME = /^(\d{4}-\d{2}-\d{2})([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO 8601 date-time as a UTC instant, or null. Without an offset it is
 * UTC (Date.parse would use the host's zone for a time without one); an
 * impossible day (Feb 30) is refused instead of rolling into the next month.
 */
export function parseDateTime(value: string): Date | null {
  const match = ISO_DATE_TIME.exec(value.trim());
  if (!match) return null;
  const [, day, time, , , offset] = match;
  const dayOnly = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(dayOnly.getTime()) || dayOnly.toISOString().slice(0, 10) !== day) return null;
  const text = `${day}T${time ? time.slice(1) : "00:00"}${offset ? offset.replace(/^([+-]\d{2})(\d{2})$/, "$1:$2") : "Z"}`;
  const instant = new Date(text);
  return Number.isNaN(instant.getTime()) ? null : instant;
}

/**
 * A date-time in a zone's local time unless it carries an offset (then that
 * offset rules): ParkedUntilDate is New York time. Seconds and fractions are
 * kept; null when the text is no date-time or names an impossible day.
 */
export function parseLocalDateTime(value: string, zone: string): Date | null {
  const match = ISO_DATE_TIME.exec(value.trim());
  if (!match) return null;
  if (match[5]) return parseDateTime(value);
  const asUtc = parseDateTime(value);
  if (!asUtc) return null;
  const [year, month, day] = (match[1] as string).split("-").map(Number) as [number, number, number];
  const msIntoDay = asUtc.getTime() - Date.UTC(year, month - 1, day);
  const minutes = Math.floor(msIntoDay / 60_000);
  return new Date(instantOf(zone, { year, month, day }, minutes) + (msIntoDay - minutes * 60_000));
}
