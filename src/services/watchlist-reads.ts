import type { Caller } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { fetchPage, type Page, type PageRequest } from "../store/page.js";
import type { WatchlistKind } from "../store/schema.js";
import type { Tx } from "../store/transaction.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { type StrategyListing, visibleStrategies, withOwnTrading } from "./strategy-search.js";

/**
 * Reading watchlists (docs/decisions.md "Watchlists (issue 14)"): the lists
 * available to a caller are its own and the service's leaderboard list; a
 * list's members are the strategies in it the caller may see (those
 * SearchStrategies shows it), and only those are counted.
 */
export interface WatchlistView {
  readonly id: number;
  readonly kind: WatchlistKind;
  readonly personId: number | null;
  readonly name: string;
  readonly memberCount: number;
  readonly createdAt: number | null;
  readonly updatedAt: number | null;
  /** Set on the answer of a list just deleted. */
  readonly deletedAt: number | null;
}

export interface WatchlistMember extends StrategyListing {
  readonly watchlistId: number;
  /** When it was added (null on the leaderboard list, whose order is its rank). */
  readonly addedAt: number | null;
}

/** The watchlists available to the caller: its own and the built-in ones. */
function availableLists(db: Tx, caller: Caller) {
  return db
    .selectFrom("watchlists as w")
    .selectAll("w")
    .where((eb) => eb.or([eb("w.kind", "=", "leaderboard"), eb("w.person_id", "=", caller.personId)]));
}

type ListRow = Awaited<ReturnType<ReturnType<typeof availableLists>["executeTakeFirstOrThrow"]>>;

/** The list, when available to the caller; another person's list is, to the caller, no list. */
export async function availableList(db: Tx, caller: Caller, id: number): Promise<ListRow> {
  const row = await availableLists(db, caller).where("w.id", "=", id).executeTakeFirst();
  if (!row) throw refuse("NotFound", { field: "WatchListId", message: `No watchlist ${id}` });
  return row;
}

/** The ids of the strategies the caller may see, as a subquery. */
const visibleIds = (db: Tx, caller: Caller) => visibleStrategies(db, caller).clearSelect().select("st.id");

/** How many members of each list the caller may see. */
async function memberCounts(db: Tx, caller: Caller, lists: readonly ListRow[]): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  const custom = lists.filter((list) => list.kind === "custom").map((list) => list.id);
  if (custom.length > 0) {
    const rows = await db
      .selectFrom("watchlist_members as m")
      .select((eb) => ["m.watchlist_id", eb.fn.countAll<string | number>().as("n")])
      .where("m.watchlist_id", "in", custom)
      .where("m.strategy_id", "in", visibleIds(db, caller))
      .groupBy("m.watchlist_id")
      .execute();
    for (const row of rows) counts.set(row.watchlist_id, Number(row.n));
  }
  const leaderboard = lists.find((list) => list.kind === "leaderboard");
  if (leaderboard) {
    const row = await visibleStrategies(db, caller)
      .innerJoin("leaderboard as lb", "lb.strategy_id", "st.id")
      .where("st.is_alive", "=", 1)
      .clearSelect()
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .executeTakeFirstOrThrow();
    counts.set(leaderboard.id, Number(row.n));
  }
  return counts;
}

const viewOf = (row: ListRow, memberCount: number, deletedAt: number | null = null): WatchlistView => ({
  id: row.id,
  kind: row.kind,
  personId: row.person_id,
  name: row.name,
  memberCount,
  // The built-in list has no history of its own.
  createdAt: row.kind === "custom" ? row.created_at : null,
  updatedAt: row.kind === "custom" ? row.updated_at : null,
  deletedAt,
});

/** One list as the caller sees it (its members counted now); `deletedAt` for the answer of a deletion. */
export async function watchlistView(
  db: Tx,
  caller: Caller,
  row: ListRow,
  deletedAt: number | null = null,
): Promise<WatchlistView> {
  const counts = await memberCounts(db, caller, [row]);
  return viewOf(row, counts.get(row.id) ?? 0, deletedAt);
}

/** GetWatchLists: every list available to the caller, by id (the built-in list first: it was made first). */
export async function watchlistsOf(ctx: RequestContext, page: PageRequest): Promise<Page<WatchlistView>> {
  const db = dbOf(ctx);
  const found = await fetchPage(availableLists(db, ctx.caller), ["w.id"], (row) => [row.id], page);
  const counts = await memberCounts(db, ctx.caller, found.items);
  return { ...found, items: found.items.map((row) => viewOf(row, counts.get(row.id) ?? 0)) };
}

/**
 * GetWatchListMembers: the strategies of a list the caller may see; a
 * person's list in the order they were added, the leaderboard's in rank
 * order (live strategies only, as GetLeaderBoard shows them).
 */
export async function watchlistMembers(
  ctx: RequestContext,
  watchlistId: number,
  page: PageRequest,
): Promise<Page<WatchlistMember>> {
  const db = dbOf(ctx);
  const list = await availableList(db, ctx.caller, watchlistId);
  if (list.kind === "leaderboard") {
    const query = visibleStrategies(db, ctx.caller)
      .innerJoin("leaderboard as lb", "lb.strategy_id", "st.id")
      .where("st.is_alive", "=", 1)
      .select("lb.rank");
    const found = await fetchPage(query, ["lb.rank"], (row) => [row.rank], page);
    const listed = await withOwnTrading(db, found.items);
    return { ...found, items: listed.map((row) => ({ ...row, watchlistId, addedAt: null })) };
  }
  const query = visibleStrategies(db, ctx.caller)
    .innerJoin("watchlist_members as m", "m.strategy_id", "st.id")
    .where("m.watchlist_id", "=", watchlistId)
    .select("m.added_at");
  const found = await fetchPage(query, ["m.added_at", "m.strategy_id"], (row) => [row.added_at, row.id], page);
  const listed = await withOwnTrading(db, found.items);
  return {
    ...found,
    items: listed.map((row, i) => ({ ...row, watchlistId, addedAt: found.items[i]?.added_at ?? null })),
  };
}
