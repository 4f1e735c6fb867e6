import type { Logger } from "pino";
import { type ApprovalPass, advanceApprovals } from "../services/autotrade-approval-switch.js";
import type { Runtime } from "../services/runtime.js";
import { PassScheduler } from "./pass-scheduler.js";

const NOTHING: ApprovalPass = { expired: 0, switched: 0, timedOut: 0 };

/**
 * The approvals scheduler: a pass over white-label autotrade approval
 * requests every `intervalMs` of real time, one at a time, and on demand (the
 * sandbox runs one after moving the clock). Each move is a conditional
 * update in its own transaction, so several processes may run passes at
 * once; a pass that fails is logged and the next tick takes up what it left.
 */
export class ApprovalScheduler extends PassScheduler<ApprovalPass> {
  constructor(runtime: Runtime, logger: Logger, options: { readonly intervalMs: number }) {
    super("approvals", () => advanceApprovals(runtime), NOTHING, logger, {
      intervalMs: options.intervalMs,
      worthLogging: (pass) => pass.expired + pass.switched + pass.timedOut > 0,
    });
  }
}
