import { type AccountEvent, type Enablement, enablementEvents } from "../core/autotrade/account-events.js";
import { MAX_SCALING_PERCENTAGE } from "../core/autotrade/settings.js";
import { compare, type Decimal, fromInteger, sign } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { afterCommit, type Tx, withTransaction } from "../store/transaction.js";
import { recordAccountEvents } from "./account-events.js";
import { LIVE_SETUP_STATUSES, personActedOn } from "./autotrade-reads.js";
import { requestStop, type StartSetup, startSetup, supersedePendingApprovals } from "./autotrade-setups.js";
import type { RequestContext, Runtime } from "./runtime.js";
import { follows } from "./subscriptions.js";

/**
 * What the v4 autotrade operations do to setups on a person's behalf: the
 * person themself, their site's administrators or a service admin act
 * (personActedOn). The rules on who may follow a strategy into a brokerage
 * account are here; the setups' own rules are in autotrade-setups.ts.
 */

/** The reason a setup shows while SetAutotradeSettings has it disabled. */
export const DISABLED_BY_SETTINGS = "Disabled with SetAutotradeSettings";

export interface EnablementChange {
  readonly personId: number;
  readonly account: string | undefined;
  readonly brokerId: number | undefined;
  readonly autotradeEnabled: boolean | undefined;
  readonly syncEnabled: boolean | undefined;
  /** Copies held until the customer confirms them (an addition to the spec's body, docs/decisions.md). */
  readonly confirmationNeeded?: boolean | undefined;
}

/**
 * SetAutotradeSettings: sets the enablement flags (and whether copies wait
 * for the customer's confirmation) of the live setups of the person's account
 * (every strategy it follows; every account when none is named). Enabling clears the disabled reason; enabling autotrade on an
 * account its broker delinked is refused (the copier could not trade it).
 */
export async function setEnablement(ctx: RequestContext, change: EnablementChange): Promise<readonly number[]> {
  if (
    change.autotradeEnabled === undefined &&
    change.syncEnabled === undefined &&
    change.confirmationNeeded === undefined
  ) {
    throw refuse("MissingValue", {
      field: "IsAutotradeEnabled",
      message: "IsAutotradeEnabled, IsAutoSyncEnabled or IsConfirmationNeeded is required",
    });
  }
  const now = ctx.clock.nowMs();
  const ids = await withTransaction(ctx, async ({ tx }) => {
    await personActedOn(tx, ctx.caller, change.personId);
    let query = tx
      .selectFrom("autotrade_setups as s")
      .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
      .select([
        "s.id",
        "s.account_id",
        "s.is_autotrade_enabled",
        "s.is_sync_enabled",
        "b.is_linked",
        "b.account_number",
      ])
      .where("s.person_id", "=", change.personId)
      .where("s.status", "in", LIVE_SETUP_STATUSES);
    if (change.account !== undefined) query = query.where("b.account_number", "=", change.account);
    if (change.brokerId !== undefined) query = query.where("s.broker_id", "=", change.brokerId);
    const setups = await query.orderBy("s.id").execute();
    if (setups.length === 0) {
      throw refuse("NotFound", {
        field: "Account",
        message: `Person ${change.personId} autotrades no strategy${change.account === undefined ? "" : ` in account ${change.account}`}`,
      });
    }
    const delinked = setups.find((setup) => setup.is_linked !== 1);
    if (change.autotradeEnabled === true && delinked) {
      throw refuse("WrongState", {
        field: "IsAutotradeEnabled",
        message: `Account ${delinked.account_number} is delinked by its broker: link it again first`,
      });
    }
    const setupIds = setups.map((setup) => setup.id);
    const autotrade =
      change.autotradeEnabled === undefined
        ? {}
        : {
            is_autotrade_enabled: change.autotradeEnabled ? 1 : 0,
            autotrade_disabled_reason: change.autotradeEnabled ? null : DISABLED_BY_SETTINGS,
          };
    const sync =
      change.syncEnabled === undefined
        ? {}
        : {
            is_sync_enabled: change.syncEnabled ? 1 : 0,
            sync_disabled_reason: change.syncEnabled ? null : DISABLED_BY_SETTINGS,
          };
    const confirmation =
      change.confirmationNeeded === undefined ? {} : { is_confirmation_needed: change.confirmationNeeded ? 1 : 0 };
    await tx
      .updateTable("autotrade_setups")
      .set({ ...autotrade, ...sync, ...confirmation, updated_at: now })
      .where("id", "in", setupIds)
      .execute();
    await recordAccountEvents(tx, enablementEventsOf(setups, change, now));
    return setupIds;
  });
  afterCommit(ctx, () => ctx.autotrade?.setupsChanged(ids));
  return ids;
}

/** The stability events of a change of the flags, account by account (what it changed). */
function enablementEventsOf(
  setups: readonly {
    readonly account_id: number;
    readonly is_autotrade_enabled: number;
    readonly is_sync_enabled: number;
  }[],
  change: EnablementChange,
  atMs: number,
): AccountEvent[] {
  const byAccount = new Map<number, Enablement[]>();
  for (const setup of setups) {
    byAccount.set(setup.account_id, [
      ...(byAccount.get(setup.account_id) ?? []),
      { enabled: setup.is_autotrade_enabled === 1, syncEnabled: setup.is_sync_enabled === 1 },
    ]);
  }
  return [...byAccount].flatMap(([accountId, before]) =>
    enablementEvents(before, { autotradeEnabled: change.autotradeEnabled, syncEnabled: change.syncEnabled }).map(
      (kind) => ({
        accountId,
        personId: change.personId,
        kind,
        reason: kind.endsWith("Disabled") ? DISABLED_BY_SETTINGS : "Enabled with SetAutotradeSettings",
        atMs,
      }),
    ),
  );
}

/**
 * StartAutotrade on GEN and GEO: starts (or modifies) the person's setup at
 * once, with no approval step. The person must be able to follow the
 * strategy for real: a live subscription giving access to its signals, or
 * owning it (IsTradeOwnSystem). The scaling is a positive percentage, at
 * most MAX_SCALING_PERCENTAGE.
 */
export async function startAutotrade(ctx: RequestContext, input: StartSetup): Promise<number> {
  if (sign(input.scalingPercentage) <= 0 || compare(input.scalingPercentage, scalingLimit) > 0) {
    throw refuse("InvalidValue", {
      field: "ScalingPercentage",
      message: `ScalingPercentage must be above 0 and at most ${MAX_SCALING_PERCENTAGE}`,
    });
  }
  return withTransaction(ctx, async (c) => {
    await personActedOn(c.tx, ctx.caller, input.personId);
    const strategy = await c.tx
      .selectFrom("strategies")
      .select("owner_person_id")
      .where("id", "=", input.strategyId)
      .executeTakeFirst();
    if (!strategy) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${input.strategyId}` });
    if (strategy.owner_person_id !== input.personId && !(await follows(c, input.strategyId, input.personId))) {
      throw refuse("WrongState", {
        field: "StrategyId",
        message: `Person ${input.personId} does not follow strategy ${input.strategyId}: a live subscription is needed to autotrade it`,
      });
    }
    return (await startSetup(c, input)).setupId;
  });
}

const scalingLimit: Decimal = fromInteger(MAX_SCALING_PERCENTAGE);

export interface StopAutotrade {
  readonly personId: number;
  readonly account: string;
  readonly strategyId: number;
  readonly brokerId: number | null;
  readonly leavePositionsOpen: boolean;
  readonly terminateSubscription: boolean;
}

/**
 * StopAutotrade on GEN and GEO: requests the stop, applied by the copier
 * when it next works the account; repeating it is safe.
 */
export async function stopAutotrade(ctx: RequestContext, input: StopAutotrade): Promise<void> {
  await withTransaction(ctx, async (c) => {
    await personActedOn(c.tx, ctx.caller, input.personId);
    await requestStop(c, input);
  });
}

/** The kind of the customer notice a white-label stop leaves (a mail adapter delivers notices). */
export const AUTOTRADE_STOPPED_NOTICE = "autotrade_stopped";

/**
 * StopAutotrade on WL (4.3 rule 2): positions are always left open whatever
 * the request says, the setup's pending approval requests are retired, and
 * the customer is notified. A customer with only pending approvals (no
 * setup yet) is stopped all the same; with neither ever, 404. The customer
 * is notified only when the call changed something, so a repeat is silent.
 */
export async function stopWhiteLabelAutotrade(ctx: RequestContext, input: StopAutotrade): Promise<void> {
  await withTransaction(ctx, async (c) => {
    const tx = c.tx;
    await personActedOn(tx, ctx.caller, input.personId);
    const now = ctx.clock.nowMs();
    const retired = await supersedePendingApprovals(tx, input, now, null);
    let setupQuery = tx
      .selectFrom("autotrade_setups as s")
      .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
      .select("s.status")
      .where("s.person_id", "=", input.personId)
      .where("s.strategy_id", "=", input.strategyId)
      .where("b.account_number", "=", input.account);
    if (input.brokerId !== null) setupQuery = setupQuery.where("s.broker_id", "=", input.brokerId);
    const setups = await setupQuery.execute();
    if (setups.length === 0 && retired.length === 0 && !(await approvalRequested(tx, input))) {
      throw refuse("NotFound", {
        field: "StrategyId",
        message: `Account ${input.account} does not autotrade strategy ${input.strategyId}`,
      });
    }
    const stopping = setups.some((setup) => setup.status === "active");
    if (setups.length > 0) await requestStop(c, { ...input, leavePositionsOpen: true });
    if (!stopping && retired.length === 0) return;
    const person = await tx
      .selectFrom("persons")
      .select("white_label_site_id")
      .where("id", "=", input.personId)
      .executeTakeFirstOrThrow();
    await tx
      .insertInto("customer_notices")
      .values({
        person_id: input.personId,
        site_id: person.white_label_site_id,
        kind: AUTOTRADE_STOPPED_NOTICE,
        message: `Autotrading of strategy ${input.strategyId} in account ${input.account} is stopping; its open positions are left in place.`,
        created_at: now,
      })
      .execute();
  });
}

/** Whether an approval request was ever made for the customer's account and strategy. */
async function approvalRequested(tx: Tx, target: StopAutotrade): Promise<boolean> {
  const row = await tx
    .selectFrom("autotrade_approvals")
    .select("id")
    .where("person_id", "=", target.personId)
    .where("strategy_id", "=", target.strategyId)
    .where("account_number", "=", target.account)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * When a subscription has ended and the person no longer follows the
 * strategy, their setups on it stop with it (their owner's own setups stay:
 * an owner needs no subscription). A person whose setups would stop must say
 * what becomes of the positions (API.md 4.6 rule 3): `leavePositionsOpen`
 * undefined is refused on `field`, and the caller's transaction rolls back.
 * A subscription whose access runs on (end of term) leaves them running.
 */
export async function stopAutotradingUnfollowed(
  ctx: Runtime & { readonly tx: Tx },
  target: { readonly personId: number; readonly strategyId: number },
  leavePositionsOpen: boolean | undefined,
  field: string,
): Promise<number> {
  if (await follows(ctx, target.strategyId, target.personId)) return 0;
  const setups = await ctx.tx
    .selectFrom("autotrade_setups as s")
    .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
    .innerJoin("strategies as st", "st.id", "s.strategy_id")
    .select(["b.account_number", "s.broker_id"])
    .where("s.person_id", "=", target.personId)
    .where("s.strategy_id", "=", target.strategyId)
    .where("s.status", "=", "active")
    .whereRef("st.owner_person_id", "!=", "s.person_id")
    .orderBy("s.id")
    .execute();
  if (setups.length === 0) return 0;
  if (leavePositionsOpen === undefined) {
    throw refuse("MissingValue", {
      field,
      message: `Person ${target.personId} autotrades strategy ${target.strategyId}: say whether its positions are left in place or closed`,
    });
  }
  for (const setup of setups) {
    await requestStop(ctx, {
      personId: target.personId,
      account: setup.account_number,
      brokerId: setup.broker_id,
      strategyId: target.strategyId,
      leavePositionsOpen,
      terminateSubscription: false,
    });
  }
  return setups.length;
}
