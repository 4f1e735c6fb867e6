/**
 * Admits one poll per interval for each caller of each object, in this
 * process (a client polling two processes may poll each at the interval).
 * Runs on the machine's time: the sandbox clock may stand still.
 */
export class PollGate {
  readonly #last = new Map<string, number>();
  #lastSweep = 0;

  constructor(
    readonly intervalMs: number,
    private readonly realNowMs: () => number,
  ) {}

  /** Counts a poll; answers null when admitted, else how many milliseconds until the next one is. */
  admit(key: string): number | null {
    const now = this.realNowMs();
    this.#sweep(now);
    const last = this.#last.get(key);
    if (last !== undefined && now - last < this.intervalMs) return last + this.intervalMs - now;
    this.#last.set(key, now);
    return null;
  }

  /** Forgets polls older than the interval now and then, so the map does not grow with idle keys. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < this.intervalMs) return;
    this.#lastSweep = now;
    for (const [key, at] of this.#last) {
      if (now - at >= this.intervalMs) this.#last.delete(key);
    }
  }
}
