import type { Storage } from "./storage.js";
import type { Tx } from "./transaction.js";

/** Keys one statement asks for at most (both engines take far more parameters; the statement stays small). */
const KEYS_PER_READ = 500;
/** Answers kept on SQLite while nothing is written; past this many the oldest go. */
const ANSWERS_KEPT = 10_000;

/** Reads the rows of the keys, by key; a key without a row is left out. */
export type KeyedLoad<K, V> = (db: Tx, keys: readonly K[]) => Promise<ReadonlyMap<K, V>>;

interface Waiting<V> {
  readonly resolve: (value: V | undefined) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Reads of small rows by key (a strategy, an account's version) that many
 * requests make at once. The keys asked for in one turn of the event loop are
 * read with one statement, issued after every request that asked arrived, so
 * each sees what was committed before it: under load a request's reads cost a
 * share of a statement, not a statement each (on PostgreSQL a round trip).
 *
 * On SQLite the answers are also kept while nothing is written by anyone
 * (storage.writeMark: another connection's commit or this connection's
 * changes move it), so a read after an unchanged database costs no statement.
 *
 * Reads inside a caller's transaction must see its writes: they go to `read`
 * with that transaction, never here.
 */
export class KeyedReads<K, V> {
  #asked: Map<K, Waiting<V>[]> | null = null;
  readonly #kept = new Map<K, V | undefined>();
  #keptAt: string | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly load: KeyedLoad<K, V>,
  ) {}

  /** The row of the key as committed now (undefined when there is none). */
  get(key: K): V | undefined | Promise<V | undefined> {
    const mark = this.storage.writeMark?.();
    if (mark !== undefined && mark === this.#keptAt && this.#kept.has(key)) return this.#kept.get(key);
    return new Promise((resolve, reject) => {
      if (this.#asked === null) {
        this.#asked = new Map();
        setImmediate(() => void this.#read());
      }
      const waiting = this.#asked.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.#asked.set(key, [{ resolve, reject }]);
    });
  }

  /** The row of the key, read in the caller's transaction when there is one. */
  read(db: Tx, key: K): V | undefined | Promise<V | undefined> {
    if (db !== this.storage.db) return this.load(db, [key]).then((found) => found.get(key));
    return this.get(key);
  }

  async #read(): Promise<void> {
    const asked = this.#asked;
    this.#asked = null;
    if (asked === null) return;
    const keys = [...asked.keys()];
    // Read before the statement: a write after it moves the mark, and what is kept then goes.
    const mark = this.storage.writeMark?.();
    for (let at = 0; at < keys.length; at += KEYS_PER_READ) {
      const part = keys.slice(at, at + KEYS_PER_READ);
      let found: ReadonlyMap<K, V>;
      try {
        found = await this.load(this.storage.db, part);
      } catch (error) {
        for (const key of part) for (const waiting of asked.get(key) ?? []) waiting.reject(error);
        continue;
      }
      if (mark !== undefined) this.#keep(mark, part, found);
      for (const key of part) for (const waiting of asked.get(key) ?? []) waiting.resolve(found.get(key));
    }
  }

  #keep(mark: string, keys: readonly K[], found: ReadonlyMap<K, V>): void {
    if (mark !== this.#keptAt || this.#kept.size + keys.length > ANSWERS_KEPT) {
      this.#kept.clear();
      this.#keptAt = mark;
    }
    for (const key of keys) this.#kept.set(key, found.get(key));
  }
}

const readsOfStorage = new WeakMap<Storage, Map<KeyedLoad<unknown, unknown>, KeyedReads<unknown, unknown>>>();

/** The storage's keyed reads of one kind (one per load function). */
export function keyedReads<K, V>(storage: Storage, load: KeyedLoad<K, V>): KeyedReads<K, V> {
  let kinds = readsOfStorage.get(storage);
  if (!kinds) {
    kinds = new Map();
    readsOfStorage.set(storage, kinds);
  }
  let reads = kinds.get(load as KeyedLoad<unknown, unknown>);
  if (!reads) {
    reads = new KeyedReads(storage, load as KeyedLoad<unknown, unknown>);
    kinds.set(load as KeyedLoad<unknown, unknown>, reads);
  }
  return reads as KeyedReads<K, V>;
}
