import type { Logger } from "pino";
import { type BillingOptions, type BillingPass, type BillingRuntime, billDue } from "../services/billing.js";

/**
 * The recurring biller: a billing pass every `intervalMs` of real time, one at
 * a time, and on demand (the sandbox runs one after moving the clock). A pass
 * that fails is logged and retried at the next tick: charges are written
 * whole or not at all, so nothing is left half done.
 */
export class Biller {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<BillingPass> | undefined;
  #stopped = false;

  constructor(
    private readonly runtime: BillingRuntime,
    private readonly logger: Logger,
    private readonly options: BillingOptions & { readonly intervalMs: number },
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.#timer = setInterval(() => {
      this.run().catch(() => undefined);
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  /** One pass now, after the one running (if any) ends. */
  async run(): Promise<BillingPass> {
    while (this.#running) await this.#running.catch(() => undefined);
    if (this.#stopped) return { charged: 0, settled: 0, failed: 0, givenUp: 0 };
    const pass = billDue(this.runtime, this.options);
    this.#running = pass;
    try {
      const result = await pass;
      if (result.charged > 0) this.logger.info(result, "billing pass");
      return result;
    } catch (error) {
      this.logger.error({ err: error }, "billing pass failed; retried at the next tick");
      throw error;
    } finally {
      this.#running = undefined;
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }
}
