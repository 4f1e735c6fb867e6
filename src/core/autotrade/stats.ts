import type { SetupSettings } from "./settings.js";

/**
 * One account's daily autotrade snapshot (GetAutotradeStats), pure. The
 * strategies an account autotrades are its active setups (one live setup per
 * account and strategy, so Unique counts them); each counts in every asset
 * class its setup enables. Crypto is always 0: the service lists no crypto
 * instrument. The account-wide flags read "some active setup": the service
 * sets the flags account by account (SetAutotradeSettings, the broker's
 * disables), so they agree unless a narrower change split them.
 */
export interface SnapshotSetup {
  readonly strategyId: number;
  /** Active (not stopped, no stop requested). */
  readonly active: boolean;
  readonly enabled: boolean;
  readonly syncEnabled: boolean;
  readonly confirmationNeeded: boolean;
  readonly settings: SetupSettings;
}

export interface SnapshotCounts {
  readonly stocks: number;
  readonly futures: number;
  readonly options: number;
  readonly forex: number;
  readonly crypto: number;
  readonly unique: number;
  readonly syncEnabled: boolean;
  readonly manualConfirmation: boolean;
  /** No active setup of the account has autotrade enabled. */
  readonly disabled: boolean;
}

export function snapshotCounts(setups: readonly SnapshotSetup[]): SnapshotCounts {
  const active = setups.filter((setup) => setup.active);
  const enabling = (cls: "stocks" | "futures" | "options" | "forex") =>
    active.filter((setup) => setup.settings[cls].enabled).length;
  return {
    stocks: enabling("stocks"),
    futures: enabling("futures"),
    options: enabling("options"),
    forex: enabling("forex"),
    crypto: 0,
    unique: new Set(active.map((setup) => setup.strategyId)).size,
    syncEnabled: active.some((setup) => setup.syncEnabled),
    manualConfirmation: active.some((setup) => setup.confirmationNeeded),
    disabled: !active.some((setup) => setup.enabled),
  };
}

/** The SecurityType filter's values (API.md 4.2) and the asset class each names. */
export const SECURITY_TYPE_CLASSES = { CS: "stocks", FUT: "futures", OPT: "options", FOR: "forex" } as const;
export type SecurityTypeCode = keyof typeof SECURITY_TYPE_CLASSES;
export const SECURITY_TYPE_CODES = Object.keys(SECURITY_TYPE_CLASSES) as SecurityTypeCode[];

const DAY_MS = 86_400_000;

/** The UTC midnight starting the day `atMs` falls in: a snapshot's DateUtc. */
export const utcDayStart = (atMs: number): number => atMs - (((atMs % DAY_MS) + DAY_MS) % DAY_MS);
