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
