import type { Storage } from "../store/storage.js";
import { inTransaction, type Tx } from "../store/transaction.js";

/**
 * What reading strategies' records computes (parsed marks, closed trades,
 * statistics, monthly and daily results), kept per storage. An entry is kept
 * under a key naming what it is and whose ("daily:12:Default") with the tag of
 * the version it was computed at (src/services/record-version.ts); asked at
 * another tag it is computed anew and replaces the old one, so each key holds
 * one entry. Callers asking at once share one computation.
 *
 * Memory is bounded: an entry weighs the rows it holds (marks, trades), and
 * once the weights pass ROWS_KEPT the least recently used entries go. A row
 * weighs about a kilobyte with everything made from it (parsed, derived, and
 * serialized by the HTTP layer, which keeps its bytes only as long as the
 * entry lives): five years of marks under the three plans, with their daily
 * and monthly results, take 7.5 MB.
 */
export const ROWS_KEPT = 100_000;

interface Entry {
  readonly tag: string;
  readonly value: Promise<unknown>;
  weight: number;
}

interface Cache {
  readonly entries: Map<string, Entry>;
  weight: number;
}

const caches = new WeakMap<Storage, Cache>();

function cacheOf(storage: Storage): Cache {
  let cache = caches.get(storage);
  if (!cache) {
    cache = { entries: new Map(), weight: 0 };
    caches.set(storage, cache);
  }
  return cache;
}

function drop(cache: Cache, key: string, entry: Entry): void {
  if (cache.entries.get(key) !== entry) return;
  cache.entries.delete(key);
  cache.weight -= entry.weight;
}

/**
 * The value kept under `key` at `tag`, or what `compute` answers (kept, with
 * the weight `weigh` gives it, unless computed in a transaction). A failed
 * computation is not kept.
 */
export function cachedRecord<T>(
  ctx: { readonly storage: Storage; readonly tx?: Tx },
  key: string,
  tag: string,
  compute: () => Promise<T>,
  weigh: (value: T) => number,
): Promise<T> {
  const cache = cacheOf(ctx.storage);
  const kept = cache.entries.get(key);
  if (kept?.tag === tag) {
    // Most recently used last: the map's order is the eviction order.
    cache.entries.delete(key);
    cache.entries.set(key, kept);
    return kept.value as Promise<T>;
  }
  if (inTransaction(ctx)) return compute();
  if (kept) drop(cache, key, kept);
  const value = compute();
  const entry: Entry = { tag, value, weight: 0 };
  cache.entries.set(key, entry);
  value.then(
    (computed) => {
      if (cache.entries.get(key) !== entry) return;
      entry.weight = weigh(computed);
      cache.weight += entry.weight;
      for (const [oldKey, old] of cache.entries) {
        if (cache.weight <= ROWS_KEPT) break;
        if (old !== entry) drop(cache, oldKey, old);
      }
    },
    () => drop(cache, key, entry),
  );
  return value;
}
