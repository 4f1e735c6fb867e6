import { type SelectQueryBuilder, sql } from "kysely";

/** A key value of one row: the values of the ordering columns, last one unique. */
export type KeysetKey = readonly (string | number)[];

/** Where a page starts: after a key (walking forward) or before one (walking back). */
export type PagePosition = { readonly direction: "after" | "before"; readonly key: KeysetKey };

export interface PageRequest {
  readonly limit: number;
  /** true = oldest first. */
  readonly ascending: boolean;
  readonly position: PagePosition | null;
}

export interface Page<T> {
  readonly items: T[];
  /** Key to continue after the last item, or null when nothing follows. */
  readonly nextKey: KeysetKey | null;
  /** Key to go back before the first item, or null on the first page. */
  readonly prevKey: KeysetKey | null;
}

export const MAX_PAGE_SIZE = 1000;

/**
 * Keyset pagination: pages are delimited by the ordering key of their edge
 * rows, never by OFFSET, so rows inserted between calls neither repeat nor
 * shift a page. `columns` must end with a unique column (the id).
 */
export async function fetchPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: readonly string[],
  keyOf: (row: O) => KeysetKey,
  request: PageRequest,
): Promise<Page<O>> {
  const backward = request.position?.direction === "before";
  // Walking back reads the rows before the cursor in reverse, then flips them.
  const scanAscending = request.ascending !== backward;
  let scan = query;
  if (request.position) {
    const comparison = scanAscending ? sql.raw(">") : sql.raw("<");
    const left = sql.join(columns.map((c) => sql.ref(c)));
    const right = sql.join(request.position.key.map((v) => sql`${v}`));
    scan = scan.where(sql<boolean>`(${left}) ${comparison} (${right})`);
  }
  for (const column of columns) {
    scan = scan.orderBy(sql.ref(column), scanAscending ? "asc" : "desc");
  }
  const rows = await scan.limit(request.limit + 1).execute();
  const more = rows.length > request.limit;
  const items = rows.slice(0, request.limit);
  if (backward) items.reverse();
  const first = items[0];
  const last = items[items.length - 1];
  const cursorKey = request.position?.key ?? null;
  if (backward) {
    return {
      items,
      prevKey: more && first ? keyOf(first) : null,
      nextKey: last ? keyOf(last) : cursorKey,
    };
  }
  return {
    items,
    nextKey: more && last ? keyOf(last) : null,
    prevKey: request.position === null ? null : first ? keyOf(first) : cursorKey,
  };
}
