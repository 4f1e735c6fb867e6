import { sql } from "kysely";
import type { Caller } from "../core/access.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import { checkWatchlistName, listsOverLimit, membersOverLimit } from "../core/watchlists.js";
import { uniqueViolation } from "../store/constraint.js";
import { backendOf, type Tx, withTransaction } from "../store/transaction.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { visibleStrategies } from "./strategy-search.js";
import { availableList, type WatchlistView, watchlistView } from "./watchlist-reads.js";

/**
 * ManageWatchList (docs/decisions.md "Watchlists (issue 14)"): a person
 * creates and renames their own lists, adds strategies they may see, and
 * deletes members or whole lists. The limits hold under concurrent requests
 * on both backends: each change holds its list (a new list, its person)
 * locked while it counts (PostgreSQL row locks; SQLite's one writer).
 */
export interface WatchlistEdit {
  /** Absent: a new list. */
  readonly watchListId?: number | undefined;
  readonly name?: string | undefined;
  readonly strategyIds?: readonly number[] | undefined;
}

/** Waits for the row's lock on PostgreSQL (SQLite's write transactions hold the one write lock already). */
async function lockRow(tx: Tx, table: "persons" | "watchlists", id: number): Promise<void> {
  if (backendOf(tx) === "postgres")
    await sql`select id from ${sql.table(table)} where id = ${id} for update`.execute(tx);
}

/** The caller's own list, locked; the built-in list is not the caller's to change. */
async function ownList(tx: Tx, caller: Caller, id: number) {
  await lockRow(tx, "watchlists", id);
  const list = await availableList(tx, caller, id);
  if (list.kind !== "custom") {
    throw refuse("Forbidden", {
      field: "WatchListId",
      message: `Watchlist ${id} is the service's ${list.name}: it is read, not edited`,
    });
  }
  return list;
}

/** Refuses a name another of the person's lists has (without regard to case). */
async function checkNameFree(tx: Tx, personId: number, key: string, except: number | null): Promise<void> {
  let query = tx.selectFrom("watchlists").select("id").where("person_id", "=", personId).where("name_key", "=", key);
  if (except !== null) query = query.where("id", "!=", except);
  const taken = await query.executeTakeFirst();
  if (taken) {
    throw refuse("AlreadyExists", {
      field: "Name",
      message: "You have a watchlist of that name",
      meta: { WatchListId: taken.id },
    });
  }
}

/** ManageWatchList POST: creates a list or renames one, and adds members; answers the list as it is now. */
export async function editWatchlist(ctx: RequestContext, edit: WatchlistEdit): Promise<WatchlistView> {
  const name = edit.name === undefined ? undefined : checkWatchlistName(edit.name);
  if (name && !name.ok) throw new Refusal([name.error]);
  if (edit.watchListId === undefined && name === undefined) {
    throw refuse("MissingValue", { field: "Name", message: "Name is required to make a watchlist" });
  }
  if (edit.watchListId !== undefined && name === undefined && edit.strategyIds === undefined) {
    throw refuse("MissingValue", {
      field: "Name",
      message: "Send Name to rename the watchlist, or StrategyIds to add",
    });
  }
  const personId = Number(ctx.caller.personId);
  const now = ctx.clock.nowMs();
  try {
    return await withTransaction(ctx, async ({ tx }) => {
      let id = edit.watchListId;
      if (id === undefined) {
        const fresh = name as { name: string; key: string };
        await lockRow(tx, "persons", personId);
        const held = await tx
          .selectFrom("watchlists")
          .select((eb) => eb.fn.countAll<string | number>().as("n"))
          .where("person_id", "=", personId)
          .executeTakeFirstOrThrow();
        const over = listsOverLimit(Number(held.n));
        if (over) throw new Refusal([over]);
        await checkNameFree(tx, personId, fresh.key, null);
        const made = await tx
          .insertInto("watchlists")
          .values({
            kind: "custom",
            person_id: personId,
            name: fresh.name,
            name_key: fresh.key,
            created_at: now,
            updated_at: now,
          })
          .returning("id")
          .executeTakeFirstOrThrow();
        id = made.id;
      } else {
        await ownList(tx, ctx.caller, id);
        if (name?.ok) {
          await checkNameFree(tx, personId, name.key, id);
          await tx
            .updateTable("watchlists")
            .set({ name: name.name, name_key: name.key, updated_at: now })
            .where("id", "=", id)
            .execute();
        }
      }
      if (edit.strategyIds !== undefined) await addMembers(tx, ctx.caller, id, edit.strategyIds, now);
      return watchlistView(tx, ctx.caller, await availableList(tx, ctx.caller, id));
    });
  } catch (error) {
    // Only a concurrent duplicate name gets here: a rename locks its own list, not its person, so
    // two renames (or a rename and a new list) may pass the check above together on PostgreSQL.
    if (uniqueViolation(error) !== null) {
      // Answered as the check answers, naming the list that has the name (docs/errors.md, 1201).
      const taken =
        name?.ok && ctx.tx === undefined
          ? await dbOf(ctx)
              .selectFrom("watchlists")
              .select("id")
              .where("person_id", "=", personId)
              .where("name_key", "=", name.key)
              .executeTakeFirst()
          : undefined;
      throw refuse("AlreadyExists", {
        field: "Name",
        message: "You have a watchlist of that name",
        ...(taken ? { meta: { WatchListId: taken.id } } : {}),
      });
    }
    throw error;
  }
}

/** Adds the strategies not in the list yet; each must be one the caller may see, and the list must hold them. */
async function addMembers(
  tx: Tx,
  caller: Caller,
  watchlistId: number,
  strategyIds: readonly number[],
  now: number,
): Promise<void> {
  const wanted = [...new Set(strategyIds)];
  if (wanted.length === 0) return;
  const visible = new Set(
    (await visibleStrategies(tx, caller).clearSelect().select("st.id").where("st.id", "in", wanted).execute()).map(
      (row) => row.id,
    ),
  );
  const errors: ErrorEntry[] = [];
  strategyIds.forEach((id, index) => {
    if (!visible.has(id))
      errors.push({ name: "NotFound", field: `StrategyIds[${index}]`, message: `No strategy ${id}` });
  });
  if (errors.length > 0) throw new Refusal(errors);
  const present = new Set(
    (
      await tx
        .selectFrom("watchlist_members")
        .select("strategy_id")
        .where("watchlist_id", "=", watchlistId)
        .where("strategy_id", "in", wanted)
        .execute()
    ).map((row) => row.strategy_id),
  );
  const adding = wanted.filter((id) => !present.has(id));
  if (adding.length === 0) return;
  const held = await tx
    .selectFrom("watchlist_members")
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .where("watchlist_id", "=", watchlistId)
    .executeTakeFirstOrThrow();
  const over = membersOverLimit(Number(held.n), adding.length);
  if (over) throw new Refusal([over]);
  await tx
    .insertInto("watchlist_members")
    .values(adding.map((strategy_id) => ({ watchlist_id: watchlistId, strategy_id, added_at: now })))
    .execute();
  await tx.updateTable("watchlists").set({ updated_at: now }).where("id", "=", watchlistId).execute();
}

/**
 * ManageWatchList DELETE: with StrategyIds, takes those strategies out of
 * the list (ones not in it change nothing) and answers the list; without,
 * deletes the whole list and answers it as it was, with when it was deleted.
 */
export async function deleteFromWatchlist(
  ctx: RequestContext,
  watchlistId: number,
  strategyIds: readonly number[] | undefined,
): Promise<WatchlistView> {
  const now = ctx.clock.nowMs();
  return withTransaction(ctx, async ({ tx }) => {
    const list = await ownList(tx, ctx.caller, watchlistId);
    if (strategyIds !== undefined) {
      const removed = await tx
        .deleteFrom("watchlist_members")
        .where("watchlist_id", "=", watchlistId)
        .where("strategy_id", "in", strategyIds.length > 0 ? [...strategyIds] : [0])
        .executeTakeFirst();
      if (Number(removed.numDeletedRows) > 0) {
        await tx.updateTable("watchlists").set({ updated_at: now }).where("id", "=", watchlistId).execute();
      }
      return watchlistView(tx, ctx.caller, await availableList(tx, ctx.caller, watchlistId));
    }
    const view = await watchlistView(tx, ctx.caller, list, now);
    await tx.deleteFrom("watchlist_members").where("watchlist_id", "=", watchlistId).execute();
    await tx.deleteFrom("watchlists").where("id", "=", watchlistId).execute();
    return view;
  });
}
