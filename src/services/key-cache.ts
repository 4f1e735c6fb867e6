import { randomUUID } from "node:crypto";
import { bumpKeyEpoch, KEYS_CHANNEL, keyEpochAtOnce, readKeyEpoch } from "../store/key-epoch.js";
import { currentSchema } from "../store/migrate.js";
import type { Storage } from "../store/storage.js";
import { afterCommit, type Tx, withTransaction } from "../store/transaction.js";

/** Keys with a record kept per process; beyond it the oldest is dropped (and read again when used). */
export const KNOWN_KEYS_KEPT = 10_000;
/** Hashes that named no key, kept so a client retrying a wrong key does not cost a query each time. */
export const UNKNOWN_KEYS_KEPT = 1_000;

/**
 * What authenticating needs to know about each key, kept in memory per
 * storage so a request costs no query. What is kept is what storage said;
 * judging it (revoked? expired by the service clock?) is done on each use.
 *
 * A change to what a key authenticates as (services changing keys, people or
 * sites go through `changingKeys`) moves the key epoch in its transaction and
 * empties this process's cache once it commits. Other processes learn of it:
 * - SQLite: a lookup first reads the connection's `data_version`, which
 *   moves when another connection commits; only then is the epoch read, and
 *   the cache emptied if it moved. Reading it takes locks (microseconds), so
 *   one reading serves the rest of its turn of the event loop: a request read
 *   from a socket after another process committed comes in a later turn than
 *   any reading that missed the commit, and sees the change. (libuv polls
 *   twice in one turn only when over 1,024 sockets are ready at once: then a
 *   request of the second poll may still be judged by the turn's reading.)
 *   A key change committed by this process on another connection (a second
 *   storage, as tests make) ends the reading's turn at once.
 * - PostgreSQL: the change's transaction notifies KEYS_CHANNEL, delivered at
 *   commit to every process listening; each empties its cache when it hears.
 *   A change reaches another process after that delivery (the notification
 *   delay). While the listening connection is down, and until it listens
 *   again, nothing is kept: every lookup reads storage.
 * A lookup that started before the cache was emptied answers its own request
 * but is not kept, so nothing read before a change outlives it.
 */
export class KeyCache<Found> {
  /** Names this cache in the key-change notifications its storage's commits send. */
  readonly origin = randomUUID();
  readonly #known = new Map<string, Found>();
  readonly #unknown = new Set<string>();
  /** Moves each time the cache is emptied. */
  #generation = 0;
  /** SQLite: the data_version and key epoch last seen, and a check of the epoch under way. */
  #dataVersion: number | null = null;
  #epoch: string | null = null;
  #checking: Promise<void> | null = null;
  /** SQLite: data_version has been read in this turn of the event loop, after this process's last key change. */
  #readThisTurn = false;
  #keyChangesSeen = 0;
  /** Whether records may be kept and used: always on SQLite; on PostgreSQL while notifications are heard. */
  #keeping: boolean;
  /** PostgreSQL: whether a listener is being started or runs (it then comes back by itself when lost). */
  #listener: "none" | "starting" | "started" = "none";
  #changed: (() => void)[] = [];

  constructor(private readonly storage: Storage) {
    this.#keeping = storage.listen === undefined;
  }

  /**
   * The record of a key hash: from memory when it may be trusted, else read by
   * `load` (null: no such key). Synchronous in the common case.
   */
  find(hash: string, load: (hash: string) => Promise<Found | null>): Found | null | Promise<Found | null> {
    const checking = this.#check();
    if (checking) return checking.then(() => this.#find(hash, load));
    return this.#find(hash, load);
  }

  /** Empties the cache: after a change this process committed, or heard of. */
  forget(): void {
    this.#generation += 1;
    this.#known.clear();
    this.#unknown.clear();
    const waiting = this.#changed;
    this.#changed = [];
    for (const resolve of waiting) resolve();
  }

  /** Resolves when the cache is next emptied (tests wait on it for another process's change). */
  nextChange(): Promise<void> {
    return new Promise((resolve) => this.#changed.push(resolve));
  }

  /** Whether records are kept: always on SQLite; on PostgreSQL while notifications are heard. */
  get keeping(): boolean {
    return this.#keeping;
  }

  get size(): { readonly known: number; readonly unknown: number } {
    return { known: this.#known.size, unknown: this.#unknown.size };
  }

  #find(hash: string, load: (hash: string) => Promise<Found | null>): Found | null | Promise<Found | null> {
    if (this.#keeping) {
      const known = this.#known.get(hash);
      if (known !== undefined) return known;
      if (this.#unknown.has(hash)) return null;
    }
    return this.#load(hash, load);
  }

  async #load(hash: string, load: (hash: string) => Promise<Found | null>): Promise<Found | null> {
    const generation = this.#generation;
    const keep = this.#keeping;
    const found = await load(hash);
    if (keep && generation === this.#generation) {
      if (found === null) remember(this.#unknown, hash, UNKNOWN_KEYS_KEPT);
      else {
        if (this.#known.size >= KNOWN_KEYS_KEPT) this.#known.delete(this.#known.keys().next().value as string);
        this.#known.set(hash, found);
      }
    }
    return found;
  }

  /** Brings the cache up to what other processes committed; a promise only when that takes a read. */
  #check(): Promise<void> | undefined {
    const { storage } = this;
    if (storage.dataVersion) {
      if (this.#checking) return this.#checking;
      if (this.#readThisTurn && this.#keyChangesSeen === keyChangesCommitted) return undefined;
      const version = storage.dataVersion();
      if (version !== this.#dataVersion) {
        // Our own journal's commits move data_version too (every batch): the epoch is read at once when it can be.
        const epoch = keyEpochAtOnce(storage);
        if (epoch === null) {
          this.#checking = this.#checkEpoch(version).finally(() => {
            this.#checking = null;
          });
          return this.#checking;
        }
        this.#saw(epoch, version);
      }
      this.#keyChangesSeen = keyChangesCommitted;
      if (!this.#readThisTurn) {
        this.#readThisTurn = true;
        setImmediate(() => {
          this.#readThisTurn = false;
        });
      }
      return undefined;
    }
    if (this.#listener === "none") void this.#listen();
    return undefined;
  }

  async #checkEpoch(version: number): Promise<void> {
    // Read through the query path, which waits for this process's open transaction to end: an epoch
    // moved by a transaction of ours that then rolls back must never be taken as seen.
    this.#saw(await readKeyEpoch(this.storage.db), version);
  }

  /** The epoch read at data_version `version`: the cache is emptied when it moved. */
  #saw(epoch: string, version: number): void {
    if (epoch !== this.#epoch) this.forget();
    this.#epoch = epoch;
    this.#dataVersion = version;
  }

  async #listen(): Promise<void> {
    const { storage } = this;
    if (!storage.listen) return;
    this.#listener = "starting";
    try {
      const schema = await currentSchema(storage);
      await storage.listen(
        KEYS_CHANNEL,
        (payload) => {
          const [from, origin] = payload.split("|");
          if (from === schema && origin !== this.origin) this.forget();
        },
        (listening) => this.#heard(listening),
      );
      this.#listener = "started";
      this.#heard(true);
    } catch {
      // Not listening: lookups keep reading storage, and the next one tries again.
      this.#listener = "none";
    }
  }

  #heard(listening: boolean): void {
    // What was kept before, or changed while nobody listened, is not to be trusted either way.
    this.forget();
    this.#keeping = listening;
  }
}

function remember(set: Set<string>, value: string, capacity: number): void {
  if (set.size >= capacity) set.delete(set.values().next().value as string);
  set.add(value);
}

const caches = new WeakMap<Storage, KeyCache<unknown>>();
/** Key changes this process has committed, on any storage. */
let keyChangesCommitted = 0;

/** The process's cache of keys on this storage. */
export function keyCacheOf<Found>(storage: Storage): KeyCache<Found> {
  let cache = caches.get(storage);
  if (!cache) {
    cache = new KeyCache(storage);
    caches.set(storage, cache);
  }
  return cache as KeyCache<Found>;
}

/**
 * Runs `work` in a transaction that moves the key epoch (telling other
 * processes): the caller's, when the context carries one, else one of its
 * own. Once that transaction has committed (the outermost one, when it was
 * the caller's), this process's cache is emptied; rolled back, the cache is
 * left as it was, still right. Every change to what a key authenticates as
 * goes through here: keys created or revoked, a person's role, site or name,
 * a site moved into a geo-site.
 */
export async function changingKeys<C extends { readonly storage: Storage; readonly tx?: Tx }, T>(
  ctx: C,
  work: (ctx: C & { readonly tx: Tx }) => Promise<T>,
): Promise<T> {
  return withTransaction(ctx, async (inner) => {
    const done = await work(inner);
    await bumpKeyEpoch(inner.tx, inner.storage.backend, keyCacheOf(inner.storage).origin);
    afterCommit(inner, () => {
      keyChangesCommitted += 1;
      caches.get(inner.storage)?.forget();
    });
    return done;
  });
}
