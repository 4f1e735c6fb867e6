import { type CompiledQuery, sql } from "kysely";
import type { Backend, Storage } from "./storage.js";
import type { Tx } from "./transaction.js";

/**
 * The key epoch: a counter moved in the same transaction as every change to
 * what a key authenticates as, so a process caching keys can tell, with one
 * small read, whether anything it holds may have changed. On PostgreSQL the
 * same transaction also notifies KEYS_CHANNEL, delivered at commit.
 */
const KEY_EPOCH = "key_epoch";

export const KEYS_CHANNEL = "strategy_hub_keys";

/**
 * Moves the epoch; on PostgreSQL also notifies `<schema>|<origin>`, `origin`
 * naming the cache of the storage that commits (it forgets its keys at
 * commit, so its own notification, arriving later, is no news to it).
 */
export async function bumpKeyEpoch(tx: Tx, backend: Backend, origin: string): Promise<void> {
  // One statement: concurrent bumps serialize on the row instead of losing one.
  await tx
    .insertInto("service_settings")
    .values({ name: KEY_EPOCH, value: "1" })
    .onConflict((oc) =>
      oc.column("name").doUpdateSet({ value: sql<string>`cast(cast(service_settings.value as bigint) + 1 as text)` }),
    )
    .execute();
  // Schemas sharing one database (parallel test runs, several deployments) share channels too.
  if (backend === "postgres") {
    await sql`select pg_notify(${KEYS_CHANNEL}, current_schema() || ${`|${origin}`})`.execute(tx);
  }
}

/** The read of the epoch's row. */
const epochRow = (tx: Tx) => tx.selectFrom("service_settings").select("value").where("name", "=", KEY_EPOCH);

/** The epoch a row holds; "0" before the first change (no row). */
const epochOf = (row: { readonly value: string } | undefined): string => row?.value ?? "0";

/** The epoch's read as SQLite text, compiled once per storage. */
const compiledEpochRow = new WeakMap<Storage, CompiledQuery>();

/**
 * The epoch read at once (SQLite, while no transaction of this process is
 * open on the query connection); null when it must be read through the query
 * path instead (readKeyEpoch), after that transaction.
 */
export function keyEpochAtOnce(storage: Storage): string | null {
  if (!storage.readAtOnce) return null;
  let query = compiledEpochRow.get(storage);
  if (!query) {
    query = epochRow(storage.db).compile();
    compiledEpochRow.set(storage, query);
  }
  const read = storage.readAtOnce(query.sql, query.parameters);
  return read && epochOf(read.row as { value: string } | undefined);
}

/** The epoch as stored; "0" before the first change. */
export async function readKeyEpoch(tx: Tx): Promise<string> {
  return epochOf(await epochRow(tx).executeTakeFirst());
}
