import type { Logger } from "pino";
import type { Runtime } from "../../services/runtime.js";
import { type DeliveryOptions, type DeliveryPass, deliverDue } from "./pass.js";

const NOTHING: DeliveryPass = { delivered: 0, retrying: 0, failed: 0 };

/**
 * The webhook deliverer: a delivery pass every `intervalMs` of real time, one
 * at a time, and on demand (the sandbox runs one after moving the clock).
 * Stopping cuts the requests in flight short and hands their claims back, so
 * another process (or this one, started again) sends them at once.
 */
export class WebhookDeliverer {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<DeliveryPass> | undefined;
  readonly #stop = new AbortController();

  constructor(
    private readonly runtime: Runtime,
    private readonly logger: Logger,
    private readonly options: DeliveryOptions & { readonly intervalMs: number },
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.#timer = setInterval(() => {
      this.run().catch(() => undefined);
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  /** One pass now, after the one running (if any) ends. */
  async run(): Promise<DeliveryPass> {
    while (this.#running) await this.#running.catch(() => undefined);
    if (this.#stop.signal.aborted) return NOTHING;
    const pass = deliverDue(this.runtime, this.logger, this.#stop.signal, this.options);
    this.#running = pass;
    try {
      return await pass;
    } catch (error) {
      this.logger.error({ err: error }, "webhook delivery pass failed; retried at the next tick");
      throw error;
    } finally {
      this.#running = undefined;
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    if (this.#timer) clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }
}
