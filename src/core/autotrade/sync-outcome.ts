import type { SyncMarket } from "./settings.js";
import type { SyncBlock } from "./sync-plan.js";

/** What a requested sync (SyncPositionsToOpen) did for one setup, as AutoSync reports it. */
export type RequestOutcome =
  | {
      readonly kind: "synced";
      /** Markets synced now, with the number of orders made in each. */
      readonly now: readonly { readonly market: SyncMarket; readonly orders: number }[];
      /** Markets closed now, synced at their next open. */
      readonly later: readonly { readonly market: SyncMarket; readonly opensAtMs: number }[];
      /** Symbols left as they are, and why. */
      readonly left: readonly { readonly symbol: string; readonly block: SyncBlock }[];
    }
  /** AutoSync is off in the desk's memory (an external execution has just turned it off). */
  | { readonly kind: "sync_disabled" }
  /** The desk does not hold the setup as copying now (it is reading it, or it has just changed). */
  | { readonly kind: "unavailable" }
  /** The copier has not yet copied the strategy's latest orders: a sync now could double them. */
  | { readonly kind: "busy" };
