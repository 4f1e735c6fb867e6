import type { Logger } from "pino";
import { type SnapshotPass, takeSnapshots } from "../services/autotrade-snapshots.js";
import type { Runtime } from "../services/runtime.js";
import { PassScheduler } from "./pass-scheduler.js";

/**
 * The daily autotrade snapshots' scheduler (GetAutotradeStats): a pass every
 * minute of real time and on the sandbox's clock moves takes the snapshot of
 * the day of every account that has none yet. Passes are idempotent by
 * (account, day), so several processes may run them at once.
 */
export class SnapshotScheduler extends PassScheduler<SnapshotPass> {
  constructor(runtime: Runtime, logger: Logger, options: { readonly intervalMs: number }) {
    super("autotrade snapshots", () => takeSnapshots(runtime), { day: new Date(0), taken: 0 }, logger, {
      intervalMs: options.intervalMs,
      worthLogging: (pass) => pass.taken > 0,
    });
  }
}
