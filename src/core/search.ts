/**
 * Case-insensitive partial matching that behaves the same on SQLite and
 * PostgreSQL: values are folded to lower case when written, terms when asked,
 * and LIKE wildcards in a term are escaped so they match themselves.
 */
export const fold = (value: string): string => value.toLocaleLowerCase("en-US");

export const LIKE_ESCAPE = "\\";

export function containsPattern(term: string): string {
  const escaped = fold(term).replace(/[\\%_]/g, (c) => `${LIKE_ESCAPE}${c}`);
  return `%${escaped}%`;
}
