import { TransientMap } from "../transient.js";

/**
 * When orders expire, by order id, knowing a time no expiry comes before: a
 * step asks whether anything may expire now, and answering by a pass over
 * every DAY order (the default TIF) made each operation dearer the more an
 * account rested. Like IndexedBook it is the transient map of an account held
 * in memory. The bound only falls as times are set; a delete leaves it (still
 * a bound), an undo forgets it, and a pass that finds nothing due raises it
 * to the earliest time held. Any other map is asked by a pass.
 */
export class ExpiryTimes extends TransientMap<number, number> {
  #noneBefore = Number.POSITIVE_INFINITY;

  static holding(entries: Iterable<readonly [number, number]>): ExpiryTimes {
    const times = new ExpiryTimes();
    for (const [id, at] of entries) times.set(id, at);
    return times;
  }

  override set(id: number, at: number): this {
    if (at < this.#noneBefore) this.#noneBefore = at;
    return super.set(id, at);
  }

  override undo(): void {
    super.undo();
    this.#noneBefore = Number.NEGATIVE_INFINITY;
  }

  /** Whether an order may expire at or before the instant (false: none does). */
  mayExpireBy(nowMs: number): boolean {
    if (this.#noneBefore > nowMs) return false;
    let earliest = Number.POSITIVE_INFINITY;
    for (const at of this.values()) if (at < earliest) earliest = at;
    this.#noneBefore = earliest;
    return earliest <= nowMs;
  }
}

/** Whether an order of the map may expire at or before the instant. */
export function mayExpireBy(times: ReadonlyMap<number, number>, nowMs: number): boolean {
  if (times instanceof ExpiryTimes) return times.mayExpireBy(nowMs);
  for (const at of times.values()) if (at <= nowMs) return true;
  return false;
}
