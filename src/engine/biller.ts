import type { Logger } from "pino";
import { type BillingOptions, type BillingPass, type BillingRuntime, billDue } from "../services/billing.js";
import { PassScheduler } from "./pass-scheduler.js";

/**
 * The recurring biller: a billing pass every `intervalMs` of real time, one at
 * a time, and on demand (the sandbox runs one after moving the clock). A pass
 * that fails is logged and retried at the next tick: charges are written
 * whole or not at all, so nothing is left half done.
 */
export class Biller extends PassScheduler<BillingPass> {
  constructor(runtime: BillingRuntime, logger: Logger, options: BillingOptions & { readonly intervalMs: number }) {
    super("billing", () => billDue(runtime, options), { charged: 0, settled: 0, failed: 0, givenUp: 0 }, logger, {
      intervalMs: options.intervalMs,
      worthLogging: (pass) => pass.charged > 0,
    });
  }
}
