import type { Logger } from "pino";
import type { Runtime } from "../../services/runtime.js";
import { PassScheduler } from "../pass-scheduler.js";
import { type DeliveryOptions, type DeliveryPass, deliverDue } from "./pass.js";

/**
 * The webhook deliverer: a delivery pass every `intervalMs` of real time, one
 * at a time, and on demand (the sandbox runs one after moving the clock).
 * Stopping cuts the requests in flight short and hands their claims back, so
 * another process (or this one, started again) sends them at once.
 */
export class WebhookDeliverer extends PassScheduler<DeliveryPass> {
  constructor(runtime: Runtime, logger: Logger, options: DeliveryOptions & { readonly intervalMs: number }) {
    super(
      "webhook delivery",
      (stopping) => deliverDue(runtime, logger, stopping, options),
      { delivered: 0, retrying: 0, failed: 0 },
      logger,
      { intervalMs: options.intervalMs },
    );
  }
}
