import type { RateLimitConfig } from "../config.js";

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window resets. */
  readonly resetSeconds: number;
}

/**
 * Fixed-window request counting per bucket (a key, or an address without a
 * key), shared by the three v4 servers of a process. Limits are per process;
 * several processes each apply their own. Runs on the machine's monotonic time,
 * not the service clock, so the sandbox clock cannot freeze a window.
 */
export class RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  #lastSweep = 0;

  constructor(
    private readonly config: RateLimitConfig,
    private readonly nowMs: () => number,
  ) {}

  /** Counts a request against the bucket. */
  consume(bucket: string): RateDecision {
    const now = this.nowMs();
    const windowMs = this.config.windowSeconds * 1000;
    this.#sweep(now, windowMs);
    let window = this.#windows.get(bucket);
    if (!window || now - window.start >= windowMs) {
      window = { start: now, count: 0 };
      this.#windows.set(bucket, window);
    }
    window.count += 1;
    return this.#decision(window.count <= this.config.max, window, now, windowMs);
  }

  /** What the bucket would answer a request now, without counting one (and without making a window for it). */
  peek(bucket: string): RateDecision {
    const now = this.nowMs();
    const windowMs = this.config.windowSeconds * 1000;
    const found = this.#windows.get(bucket);
    const window = found && now - found.start < windowMs ? found : { start: now, count: 0 };
    return this.#decision(window.count < this.config.max, window, now, windowMs);
  }

  #decision(allowed: boolean, window: { start: number; count: number }, now: number, windowMs: number): RateDecision {
    return {
      allowed,
      limit: this.config.max,
      remaining: Math.max(0, this.config.max - window.count),
      resetSeconds: Math.max(1, Math.ceil((window.start + windowMs - now) / 1000)),
    };
  }

  /** Drops finished windows now and then so idle buckets do not accumulate. */
  #sweep(now: number, windowMs: number): void {
    if (now - this.#lastSweep < windowMs) return;
    this.#lastSweep = now;
    for (const [bucket, window] of this.#windows) {
      if (now - window.start >= windowMs) this.#windows.delete(bucket);
    }
  }
}
