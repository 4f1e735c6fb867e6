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

/**
 * A partial-match pattern where the term's own `%` (any run) and `_` (any one
 * character) are wildcards; a backslash before `%`, `_` or another backslash
 * makes that character literal, and elsewhere is a backslash itself.
 */
export function wildcardPattern(term: string): string {
  const text = fold(term);
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === "\\" && next !== undefined && "%_\\".includes(next)) {
      out += `${LIKE_ESCAPE}${next}`;
      i += 1;
    } else {
      out += c === "\\" ? `${LIKE_ESCAPE}\\` : c;
    }
  }
  return `%${out}%`;
}
