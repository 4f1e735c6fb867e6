import type { Caller } from "../core/access.js";
import type { ControllableClock } from "../core/clock.js";
import type { Storage } from "../store/storage.js";

/** What every service call needs from the running service. */
export interface Runtime {
  readonly storage: Storage;
  readonly clock: ControllableClock;
}

/** A service call on behalf of a caller: who, on what storage, at what time. */
export interface RequestContext extends Runtime {
  readonly caller: Caller;
}
