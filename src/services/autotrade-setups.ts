import type { Selectable } from "kysely";
import { APPROVAL_DETAILS, PENDING_APPROVAL_STATUSES } from "../core/autotrade/approvals.js";
import {
  restartedSettings,
  type StartAutotradeFields,
  SYNC_MARKETS,
  settingsOfStart,
  settingsOfText,
  settingsText,
  syncToOpenOfStart,
} from "../core/autotrade/settings.js";
import { settingsRefusal } from "../core/autotrade/settings-change.js";
import { type Decimal, formatDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { AutotradeSetupsTable, BrokerAccountsTable } from "../store/schema.js";
import { afterCommit, type Tx, withTransaction } from "../store/transaction.js";
import { recordAccountEvents } from "./account-events.js";
import { owesCompletion } from "./autotrade-approval-events.js";
import { refuseFormChangeWhileHolding } from "./autotrade-settings.js";
import type { Runtime } from "./runtime.js";

/**
 * Autotrade setups: a brokerage account following a strategy at a scaling
 * percentage, with its settings. One live setup per account and strategy
 * (its live key is unique): a start on a live setup modifies it. A stop is
 * only requested here; the copier applies it when it next works the account
 * (API.md States, enablement flags: "stop requested" until then).
 */

export type SetupRow = Selectable<AutotradeSetupsTable>;
export type BrokerAccountRow = Selectable<BrokerAccountsTable>;

export const liveKeyOf = (accountId: number, strategyId: number) => `${accountId}:${strategyId}`;

export interface StartSetup extends StartAutotradeFields {
  readonly personId: number;
  readonly account: string;
  readonly brokerId: number;
  readonly strategyId: number;
  readonly scalingPercentage: Decimal;
  readonly doNotJoinOpenPositions?: boolean | undefined;
  /** The white-label site the start came through (its approval), if any. */
  readonly siteId: number | null;
}

/** The person's account at the broker, or a refusal naming the field at fault. */
export async function brokerAccountOf(
  db: Tx,
  personId: number,
  brokerId: number,
  account: string,
): Promise<BrokerAccountRow> {
  const broker = await db.selectFrom("brokers").selectAll().where("id", "=", brokerId).executeTakeFirst();
  if (!broker) throw refuse("NotFound", { field: "BrokerId", message: `No broker ${brokerId}` });
  if (broker.is_enabled !== 1)
    throw refuse("WrongState", { field: "BrokerId", message: `Broker ${brokerId} is not enabled` });
  const row = await db
    .selectFrom("broker_accounts")
    .selectAll()
    .where("broker_id", "=", brokerId)
    .where("account_number", "=", account)
    .executeTakeFirst();
  if (!row || row.person_id !== personId)
    throw refuse("NotFound", {
      field: "Account",
      message: `Person ${personId} has no account ${account} at broker ${brokerId}`,
    });
  return row;
}

/** A start's maximum a follower's minimum must not exceed, by the minimum's name. */
const MAXIMUM_OF_MINIMUM: Readonly<Record<string, string>> = {
  MinFutures: "MaxFuturesContracts",
  MinForex: "MaxForexUnits",
  MinOptions: "MaxOptionsContracts",
};

/** The live (not stopped) setup of an account for a strategy. */
export async function liveSetupOf(db: Tx, accountId: number, strategyId: number): Promise<SetupRow | undefined> {
  return db
    .selectFrom("autotrade_setups")
    .selectAll()
    .where("live_key", "=", liveKeyOf(accountId, strategyId))
    .executeTakeFirst();
}

/**
 * Starts a setup, or modifies the live one (its settings and scaling). Any
 * successful start enables autotrade (API.md States). DoNotJoinOpenPositions
 * applies to new setups only: sent on a modification it is refused (4.3).
 */
export async function startSetup(
  ctx: Runtime,
  input: StartSetup,
): Promise<{ readonly setupId: number; readonly created: boolean }> {
  const now = ctx.clock.nowMs();
  const done = await withTransaction(ctx, async (c) => {
    const db = c.tx;
    const account = await brokerAccountOf(db, input.personId, input.brokerId, input.account);
    if (account.is_linked !== 1)
      throw refuse("WrongState", { field: "Account", message: `Account ${input.account} is delinked by its broker` });
    const strategy = await db
      .selectFrom("strategies")
      .select(["id", "is_alive"])
      .where("id", "=", input.strategyId)
      .executeTakeFirst();
    if (!strategy) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${input.strategyId}` });
    if (strategy.is_alive !== 1)
      throw refuse("WrongState", { field: "StrategyId", message: `Strategy ${input.strategyId} is not alive` });
    const started = settingsOfStart(input);
    const scaling = formatDecimal(input.scalingPercentage);
    const live = await liveSetupOf(db, account.account_id, input.strategyId);
    if (live) {
      // Any successful start enables autotrade (API.md States): a disabled setup's re-enabling is an event.
      if (live.is_autotrade_enabled !== 1)
        await recordAccountEvents(db, [
          {
            accountId: account.account_id,
            personId: input.personId,
            kind: "AutotradeEnabled",
            reason: "Enabled by StartAutotrade",
            atMs: now,
          },
        ]);
      if (input.doNotJoinOpenPositions !== undefined)
        throw refuse("InvalidValue", {
          field: "DoNotJoinOpenPositions",
          message: "DoNotJoinOpenPositions applies to new setups only: it must not be sent when modifying one",
        });
      const before = settingsOfText(live.settings);
      const modified = restartedSettings(before, input);
      const refusal = settingsRefusal(modified);
      if (refusal)
        throw refuse("InvalidValue", {
          field: MAXIMUM_OF_MINIMUM[refusal.field] ?? refusal.field,
          message: refusal.message,
        });
      if (before.stocks.asCfd !== modified.stocks.asCfd)
        await refuseFormChangeWhileHolding(db, { ...live, account_number: input.account });
      const settings = settingsText(modified);
      await db
        .updateTable("autotrade_setups")
        .set({
          settings,
          scaling_percentage: scaling,
          status: "active",
          is_autotrade_enabled: 1,
          autotrade_disabled_reason: null,
          stop_requested_at: null,
          stop_leave_positions_open: null,
          stop_terminate_subscription: null,
          site_id: input.siteId ?? live.site_id,
          updated_at: now,
        })
        .where("id", "=", live.id)
        .execute();
      return { setupId: live.id, created: false };
    }
    const made = await db
      .insertInto("autotrade_setups")
      .values({
        account_id: account.account_id,
        person_id: input.personId,
        broker_id: input.brokerId,
        strategy_id: input.strategyId,
        site_id: input.siteId,
        status: "active",
        live_key: liveKeyOf(account.account_id, input.strategyId),
        scaling_percentage: scaling,
        is_autotrade_enabled: 1,
        autotrade_disabled_reason: null,
        is_sync_enabled: 1,
        sync_disabled_reason: null,
        is_confirmation_needed: 0,
        approved: 1,
        settings: settingsText(started),
        sync_to_open: JSON.stringify(syncToOpenOfStart()),
        last_sync: JSON.stringify(Object.fromEntries(SYNC_MARKETS.map((m) => [m, null]))),
        do_not_join_open_positions: input.doNotJoinOpenPositions === true ? 1 : 0,
        stop_requested_at: null,
        stop_leave_positions_open: null,
        stop_terminate_subscription: null,
        started_at: now,
        updated_at: now,
        stopped_at: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    if (account.first_activation_at === null)
      await db
        .updateTable("broker_accounts")
        .set({ first_activation_at: now })
        .where("account_id", "=", account.account_id)
        .execute();
    return { setupId: made.id, created: true };
  });
  afterCommit(ctx, () => ctx.autotrade?.setupsChanged([done.setupId]));
  return done;
}

export interface StopSetup {
  readonly personId: number;
  readonly account: string;
  readonly brokerId: number | null;
  readonly strategyId: number;
  readonly leavePositionsOpen: boolean;
  readonly terminateSubscription: boolean;
}

/**
 * Requests a stop of the live setup: answered at once, applied by the copier
 * when it next works the account. Repeating it is safe (the first request's
 * options stand); a setup already stopped answers as stopped.
 */
export async function requestStop(
  ctx: Runtime,
  input: StopSetup,
): Promise<{ readonly setupId: number; readonly alreadyStopped: boolean }> {
  const now = ctx.clock.nowMs();
  const done = await withTransaction(ctx, async (c) => {
    const db = c.tx;
    let query = db
      .selectFrom("autotrade_setups as s")
      .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
      .selectAll("s")
      .where("s.person_id", "=", input.personId)
      .where("s.strategy_id", "=", input.strategyId)
      .where("b.account_number", "=", input.account);
    if (input.brokerId !== null) query = query.where("s.broker_id", "=", input.brokerId);
    const rows = await query.orderBy("s.id", "desc").execute();
    const live = rows.find((row) => row.status !== "stopped");
    if (!live) {
      const last = rows[0];
      if (!last)
        throw refuse("NotFound", {
          field: "StrategyId",
          message: `Account ${input.account} does not autotrade strategy ${input.strategyId}`,
        });
      return { setupId: last.id, alreadyStopped: true };
    }
    if (live.status === "active")
      await db
        .updateTable("autotrade_setups")
        .set({
          status: "stop_requested",
          stop_requested_at: now,
          stop_leave_positions_open: input.leavePositionsOpen ? 1 : 0,
          stop_terminate_subscription: input.terminateSubscription ? 1 : 0,
          updated_at: now,
        })
        .where("id", "=", live.id)
        .execute();
    return { setupId: live.id, alreadyStopped: false };
  });
  afterCommit(ctx, () => ctx.autotrade?.setupsChanged([done.setupId]));
  return done;
}

/**
 * Retires the pending approval requests of a customer's setup (a newer start,
 * or a stop, supersedes them: API.md States), each owing its site the
 * completion webhook. Answers the ids retired.
 */
export async function supersedePendingApprovals(
  db: Tx,
  target: { readonly personId: number; readonly strategyId: number; readonly account: string },
  nowMs: number,
  byApprovalId: number | null,
): Promise<number[]> {
  const rows = await db
    .updateTable("autotrade_approvals")
    .set({
      status: "Superseded",
      status_detail: APPROVAL_DETAILS.Superseded,
      superseded_by: byApprovalId,
      updated_at: nowMs,
    })
    .where("person_id", "=", target.personId)
    .where("strategy_id", "=", target.strategyId)
    .where("account_number", "=", target.account)
    .where("status", "in", PENDING_APPROVAL_STATUSES)
    .returningAll()
    .execute();
  for (const row of rows) await owesCompletion(db, row, nowMs);
  return rows.map((row) => row.id);
}
