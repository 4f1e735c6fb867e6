/**
 * Stability events of a brokerage account (the instrumentation export's
 * AutotradeAccountStability), stored as they happen: the account linked at
 * the service or delinked by its broker, a broker's restriction, autotrade
 * and AutoSync disabled or enabled (with the reason), and a geo-site's
 * approval granted or deleted. An event is recorded when it changes
 * something, so a report the broker repeats (after a restart) is not counted
 * twice.
 */
export const ACCOUNT_EVENT_KINDS = [
  "Linked",
  "Delinked",
  "Restricted",
  "AutotradeDisabled",
  "AutotradeEnabled",
  "AutoSyncDisabled",
  "AutoSyncEnabled",
  "ApprovalGranted",
  "ApprovalDeleted",
] as const;
export type AccountEventKind = (typeof ACCOUNT_EVENT_KINDS)[number];

export interface AccountEvent {
  readonly accountId: number;
  readonly personId: number;
  readonly kind: AccountEventKind;
  readonly reason: string | null;
  readonly atMs: number;
}

/** A setup's enablement flags as they stood before a change. */
export interface Enablement {
  readonly enabled: boolean;
  readonly syncEnabled: boolean;
}

/**
 * The events a change of the enablement flags makes on one account's setups:
 * enabling what some setup had off, disabling what some setup had on
 * (SetAutotradeSettings applies the flags to every setup of the account).
 */
export function enablementEvents(
  before: readonly Enablement[],
  change: { readonly autotradeEnabled?: boolean | undefined; readonly syncEnabled?: boolean | undefined },
): readonly AccountEventKind[] {
  const kinds: AccountEventKind[] = [];
  if (change.autotradeEnabled === true && before.some((s) => !s.enabled)) kinds.push("AutotradeEnabled");
  if (change.autotradeEnabled === false && before.some((s) => s.enabled)) kinds.push("AutotradeDisabled");
  if (change.syncEnabled === true && before.some((s) => !s.syncEnabled)) kinds.push("AutoSyncEnabled");
  if (change.syncEnabled === false && before.some((s) => s.syncEnabled)) kinds.push("AutoSyncDisabled");
  return kinds;
}
