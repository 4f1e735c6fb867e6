/**
 * The trading state is immutable: a change makes new maps and leaves the old
 * ones as they were, which keeps the rules simple to test and reason about.
 * Copying a book of thousands of orders to change one of them, though, costs
 * more than the change. A holder that owns a state for the length of one
 * operation (the trading frame, src/engine/frame) lets the operation change
 * its maps in place instead: it opens them, the rules change them through
 * `editable`, and the holder keeps what each changed key held before, to tell
 * what changed and to undo it all when the operation is refused. Maps that
 * are not open are copied as always.
 */
export class TransientMap<K, V> extends Map<K, V> {
  /** What each key changed since `open` held before: undefined when it was absent. */
  readonly #before = new Map<K, V | undefined>();
  #open = false;

  get isOpen(): boolean {
    return this.#open;
  }

  /** The keys changed since `open`, with what each held before. */
  get before(): ReadonlyMap<K, V | undefined> {
    return this.#before;
  }

  override set(key: K, value: V): this {
    if (this.#open && !this.#before.has(key)) this.#before.set(key, super.get(key));
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    if (this.#open && !this.#before.has(key)) this.#before.set(key, super.get(key));
    return super.delete(key);
  }

  override clear(): void {
    for (const key of this.keys()) this.delete(key);
  }

  /** Lets `editable` hand out this map itself until `close` or `undo`. */
  open(): void {
    if (this.#before.size > 0) this.#before.clear();
    this.#open = true;
  }

  /** Keeps the changes made since `open`. */
  close(): void {
    this.#open = false;
    if (this.#before.size > 0) this.#before.clear();
  }

  /** Puts back what the changed keys held at `open`. */
  undo(): void {
    this.#open = false;
    for (const [key, value] of this.#before) {
      if (value === undefined) super.delete(key);
      else super.set(key, value);
    }
    this.#before.clear();
  }

  /** A transient map holding the entries. */
  static of<K, V>(entries: Iterable<readonly [K, V]>): TransientMap<K, V> {
    const map = new TransientMap<K, V>();
    for (const [key, value] of entries) map.set(key, value);
    return map;
  }
}

/** The map to change: the map itself while its holder keeps it open, else a copy (the original stays as it was). */
export function editable<K, V>(map: ReadonlyMap<K, V>): Map<K, V> {
  return map instanceof TransientMap && map.isOpen ? map : new Map(map);
}
