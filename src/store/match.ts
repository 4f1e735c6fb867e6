import { type Expression, type SqlBool, sql } from "kysely";
import { containsPattern, LIKE_ESCAPE, wildcardPattern } from "../core/search.js";

/** `column` (holding folded text) contains `term`, wildcards in the term matching themselves. */
export function contains(column: string, term: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${containsPattern(term)} escape ${LIKE_ESCAPE}`;
}

/** Like `contains`, folding the column in SQL: for columns of ASCII codes (country, IP, phone). */
export function containsIgnoringCase(column: string, term: string): Expression<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${containsPattern(term)} escape ${LIKE_ESCAPE}`;
}

/** `column` (holding folded text) matches `term` anywhere, the term's `%` and `_` being wildcards (see wildcardPattern). */
export function matchesWildcards(column: string, term: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${wildcardPattern(term)} escape ${LIKE_ESCAPE}`;
}
