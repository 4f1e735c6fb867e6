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

/**
 * The same paging over a list held in memory (static catalogues), ordered by
 * `keyOf`, which must be unique: walking forward and back behaves exactly as
 * fetchPage does on a table.
 */
export function pageOfList<T>(items: readonly T[], keyOf: (item: T) => KeysetKey, request: PageRequest): Page<T> {
  const compareKeys = (a: KeysetKey, b: KeysetKey): number => {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const x = a[i];
      const y = b[i];
      if (x === y) continue;
      if (x === undefined) return -1;
      if (y === undefined) return 1;
      return x < y ? -1 : 1;
    }
    return 0;
  };
  const sorted = [...items].sort((a, b) => compareKeys(keyOf(a), keyOf(b)) * (request.ascending ? 1 : -1));
  const position = request.position;
  const after = (item: T) => {
    if (!position) return true;
    const c = compareKeys(keyOf(item), position.key) * (request.ascending ? 1 : -1);
    return position.direction === "after" ? c > 0 : c < 0;
  };
  const backward = position?.direction === "before";
  const candidates = sorted.filter(after);
  const window = backward ? candidates.slice(-request.limit - 1).reverse() : candidates.slice(0, request.limit + 1);
  const more = window.length > request.limit;
  const pageItems = window.slice(0, request.limit);
  if (backward) pageItems.reverse();
  const first = pageItems[0];
  const last = pageItems[pageItems.length - 1];
  const cursorKey = position?.key ?? null;
  if (backward) {
    return { items: pageItems, prevKey: more && first ? keyOf(first) : null, nextKey: last ? keyOf(last) : cursorKey };
  }
  return {
    items: pageItems,
    nextKey: more && last ? keyOf(last) : null,
    prevKey: position === null ? null : first ? keyOf(first) : cursorKey,
  };
}
