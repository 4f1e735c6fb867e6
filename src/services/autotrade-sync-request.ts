import type { RequestOutcome } from "../core/autotrade/sync-outcome.js";
import { SYNC_BLOCK_TEXT, SYNC_REASON_CODES, type SyncReasonName } from "../core/autotrade/sync-reasons.js";
import { refuse } from "../core/errors.js";
import { personActedOn } from "./autotrade-reads.js";
import { brokerAccountOf } from "./autotrade-setups.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * SyncPositionsToOpen (GEN): for each strategy the account autotrades, the
 * account is synced now in the markets open now, and at the next open of
 * each market closed now (docs/decisions.md, issue 14). Each strategy gets
 * its own answer; a strategy that cannot be synced says why with a
 * ReasonCode, and the request itself is refused only when it names no
 * account of the person's (or the caller may not act for the person).
 */
export interface SyncRequest {
  readonly personId: number;
  readonly account: string;
  readonly brokerId: number;
  readonly strategyIds: readonly number[];
}

export interface SyncResult {
  readonly strategyId: number;
  readonly success: boolean;
  readonly reason: string;
  readonly reasonCode: number;
}

const result = (strategyId: number, name: SyncReasonName, reason: string): SyncResult => ({
  strategyId,
  success: SYNC_REASON_CODES[name] < 10,
  reason,
  reasonCode: SYNC_REASON_CODES[name],
});

export async function syncPositionsToOpen(ctx: RequestContext, request: SyncRequest): Promise<SyncResult[]> {
  request.strategyIds.forEach((id, i) => {
    if (request.strategyIds.indexOf(id) !== i)
      throw refuse("InvalidValue", { field: `StrategyIds[${i}]`, message: `Strategy ${id} is named twice` });
  });
  const db = dbOf(ctx);
  await personActedOn(db, ctx.caller, request.personId);
  const account = await brokerAccountOf(db, request.personId, request.brokerId, request.account);
  const setups = await db
    .selectFrom("autotrade_setups")
    .select([
      "id",
      "strategy_id",
      "status",
      "is_autotrade_enabled",
      "autotrade_disabled_reason",
      "is_sync_enabled",
      "sync_disabled_reason",
    ])
    .where("account_id", "=", account.account_id)
    .where("status", "!=", "stopped")
    .where("strategy_id", "in", request.strategyIds)
    .execute();
  const byStrategy = new Map(setups.map((setup) => [setup.strategy_id, setup]));
  const refused = new Map<number, SyncResult>();
  const targets: { accountId: number; setupId: number; strategyId: number }[] = [];
  for (const strategyId of request.strategyIds) {
    const setup = byStrategy.get(strategyId);
    const refusal = refusalOf(strategyId, setup, account.is_linked === 1, request.account);
    if (refusal) refused.set(strategyId, refusal);
    else if (setup) targets.push({ accountId: account.account_id, setupId: setup.id, strategyId });
  }
  const outcomes = targets.length > 0 && ctx.autoSync ? await ctx.autoSync.request(targets) : new Map();
  const setupOf = new Map(targets.map((t) => [t.strategyId, t.setupId]));
  return request.strategyIds.map((strategyId) => {
    const known = refused.get(strategyId);
    if (known) return known;
    return resultOf(strategyId, outcomes.get(setupOf.get(strategyId) ?? -1));
  });
}

interface SetupState {
  readonly status: string;
  readonly is_autotrade_enabled: number;
  readonly autotrade_disabled_reason: string | null;
  readonly is_sync_enabled: number;
  readonly sync_disabled_reason: string | null;
}

/** Why the strategy's setup cannot be synced, if it cannot (in this order: the first that holds is said). */
function refusalOf(
  strategyId: number,
  setup: SetupState | undefined,
  linked: boolean,
  account: string,
): SyncResult | null {
  if (!setup)
    return result(strategyId, "NotAutotraded", `Account ${account} does not autotrade strategy ${strategyId}`);
  if (setup.status === "stop_requested") return result(strategyId, "StopRequested", "A stop of the setup is requested");
  // A delink disables autotrade too: the delink is the reason to say.
  if (!linked) return result(strategyId, "AccountDelinked", `The broker delinked account ${account}`);
  if (setup.is_autotrade_enabled !== 1)
    return result(
      strategyId,
      "AutotradeDisabled",
      `Autotrade is disabled: ${setup.autotrade_disabled_reason ?? "no reason given"}`,
    );
  if (setup.is_sync_enabled !== 1)
    return result(
      strategyId,
      "AutoSyncDisabled",
      `AutoSync is disabled: ${setup.sync_disabled_reason ?? "no reason given"}`,
    );
  return null;
}

const iso = (ms: number) => new Date(ms).toISOString();

function resultOf(strategyId: number, outcome: RequestOutcome | undefined): SyncResult {
  if (!outcome || outcome.kind === "unavailable")
    return result(strategyId, "Busy", "The setup has just changed and is being read again: try again shortly");
  if (outcome.kind === "busy")
    return result(strategyId, "Busy", "The strategy's latest orders are still being copied: try again shortly");
  if (outcome.kind === "sync_disabled")
    return result(
      strategyId,
      "AutoSyncDisabled",
      "AutoSync is disabled: an order the service did not send executed in the account",
    );
  const parts: string[] = [];
  if (outcome.now.length > 0)
    parts.push(
      `Synced now: ${outcome.now.map((m) => `${m.market} (${m.orders} order${m.orders === 1 ? "" : "s"})`).join(", ")}`,
    );
  if (outcome.later.length > 0)
    parts.push(`at the next open: ${outcome.later.map((m) => `${m.market} (${iso(m.opensAtMs)})`).join(", ")}`);
  if (outcome.left.length > 0)
    parts.push(`left as they are: ${outcome.left.map((l) => `${l.symbol} (${SYNC_BLOCK_TEXT[l.block]})`).join("; ")}`);
  if (parts.length === 0)
    return result(strategyId, "Synced", "Neither the strategy nor the account holds a position: nothing to sync");
  const name: SyncReasonName =
    outcome.left.length > 0 ? "SymbolsLeft" : outcome.later.length > 0 ? "ScheduledAtOpen" : "Synced";
  const text = parts.join("; ");
  return result(strategyId, name, text.charAt(0).toUpperCase() + text.slice(1));
}
