import type { Caller } from "../core/access.js";
import type { RequestOutcome } from "../core/autotrade/sync-outcome.js";
import type { ControllableClock } from "../core/clock.js";
import type { Storage } from "../store/storage.js";
import type { Tx } from "../store/transaction.js";
import type { IdempotencyMark } from "./idempotency.js";

/** What every service call needs from the running service. */
export interface Runtime {
  readonly storage: Storage;
  readonly clock: ControllableClock;
  /** The transaction the call runs in when a caller opened one (withTransaction): services join it. */
  readonly tx?: Tx;
  /** The autotrade copier, told when setups change so it reads them again (absent where nothing copies). */
  readonly autotrade?: SetupListener;
  /** AutoSync, asked by SyncPositionsToOpen to sync setups now (absent where nothing syncs). */
  readonly autoSync?: SyncRequests;
}

/** What SyncPositionsToOpen asks of AutoSync (src/engine/autotrade/auto-sync.ts), by setup id. */
export interface SyncRequests {
  request(
    targets: readonly { readonly accountId: number; readonly setupId: number }[],
  ): Promise<Map<number, RequestOutcome>>;
}

/** What the copier is told when setups change (src/engine/autotrade). */
export interface SetupListener {
  /**
   * Resolves once the copier holds the setups as stored (never rejects), so a
   * call that changed them answers only when the next strategy order is copied
   * by their new state.
   */
  setupsChanged(setupIds: readonly number[]): Promise<void>;
}

/** A service call on behalf of a caller: who, on what storage, at what time, in which transaction. */
export interface RequestContext extends Runtime {
  /** Whom the rules are applied to: the key's holder, or the person a platform key or an administrator acts for. */
  readonly caller: Caller;
  /** Who acts when it is not the caller themself (audit records both). */
  readonly actor?: Caller;
  /** The Idempotency-Key claimed for the request: its trading operation marks it carried out as it commits. */
  readonly idempotency?: IdempotencyMark;
}

/** The context of a call made for someone else: the rules see `person`, audit sees who acted. */
export const actingFor = <C extends RequestContext>(ctx: C, person: Caller): C => ({
  ...ctx,
  caller: person,
  actor: ctx.actor ?? ctx.caller,
});

/** The database handle a service runs its statements on: the caller's transaction, or the storage. */
export const dbOf = (ctx: Pick<Runtime, "storage" | "tx">): Tx => ctx.tx ?? ctx.storage.db;
