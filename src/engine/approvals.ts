import type { Logger } from "pino";
import { type ApprovalPass, advanceApprovals } from "../services/autotrade-approval-switch.js";
import type { Runtime } from "../services/runtime.js";

const NOTHING: ApprovalPass = { expired: 0, switched: 0, timedOut: 0 };

/**
 * The approvals scheduler: a pass over white-label autotrade approval
 * requests every `intervalMs` of real time, one at a time, and on demand (the
 * sandbox runs one after moving the clock). Each move is a conditional
 * update in its own transaction, so several processes may run passes at
 * once; a pass that fails is logged and the next tick takes up what it left.
 */
export class ApprovalScheduler {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<ApprovalPass> | undefined;
  #stopped = false;

  constructor(
    private readonly runtime: Runtime,
    private readonly logger: Logger,
    private readonly options: { readonly intervalMs: number },
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.#timer = setInterval(() => {
      this.run().catch(() => undefined);
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  /** One pass now, after the one running (if any) ends. */
  async run(): Promise<ApprovalPass> {
    while (this.#running) await this.#running.catch(() => undefined);
    if (this.#stopped) return NOTHING;
    const pass = advanceApprovals(this.runtime);
    this.#running = pass;
    try {
      const result = await pass;
      if (result.expired + result.switched + result.timedOut > 0) this.logger.info(result, "approvals pass");
      return result;
    } catch (error) {
      this.logger.error({ err: error }, "approvals pass failed; taken up at the next tick");
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
