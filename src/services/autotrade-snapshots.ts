import { sql } from "kysely";
import { settingsOfText } from "../core/autotrade/settings.js";
import { type SnapshotSetup, snapshotCounts, utcDayStart } from "../core/autotrade/stats.js";
import type { AutotradeStatsTable } from "../store/schema.js";
import { transaction } from "../store/transaction.js";
import { LIVE_SETUP_STATUSES } from "./autotrade-reads.js";
import type { Runtime } from "./runtime.js";

/**
 * The daily autotrade snapshot of each brokerage account with a live setup
 * (GetAutotradeStats reads them): taken by the scheduled job's first pass of
 * each UTC day on the service clock, of the account as it stands then. The
 * unique (account, day) key makes a pass idempotent: a second pass, a second
 * process or a restart takes no second snapshot of a day. A day the service
 * did not run has none (what the accounts were then is not known).
 */
export interface SnapshotPass {
  readonly day: Date;
  readonly taken: number;
}

/** Accounts snapshotted per transaction. */
const BATCH = 500;

type NewSnapshot = Omit<AutotradeStatsTable, "id">;

export async function takeSnapshots(runtime: Runtime): Promise<SnapshotPass> {
  const now = runtime.clock.nowMs();
  const day = utcDayStart(now);
  const db = runtime.storage.db;
  let taken = 0;
  let after = 0;
  for (;;) {
    // Accounts with a live setup and no snapshot of the day yet, a batch at a time in account order.
    const due = await db
      .selectFrom("autotrade_setups as s")
      .select("s.account_id")
      .distinct()
      .where("s.status", "in", LIVE_SETUP_STATUSES)
      .where("s.account_id", ">", after)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("autotrade_stats as t")
              .select("t.id")
              .whereRef("t.account_id", "=", "s.account_id")
              .where("t.day_at", "=", day),
          ),
        ),
      )
      .orderBy("s.account_id")
      .limit(BATCH)
      .execute();
    const ids = due.map((row) => row.account_id);
    const last = ids[ids.length - 1];
    if (last === undefined) break;
    after = last;
    const rows = await snapshotsOf(runtime, ids, day, now);
    const inserted = await transaction(runtime.storage, (tx) =>
      tx
        .insertInto("autotrade_stats")
        .values(rows)
        .onConflict((oc) => oc.columns(["account_id", "day_at"]).doNothing())
        .returning("id")
        .execute(),
    );
    taken += inserted.length;
    if (ids.length < BATCH) break;
  }
  return { day: new Date(day), taken };
}

/** The snapshots of the accounts as they stand now. */
async function snapshotsOf(
  runtime: Runtime,
  accountIds: readonly number[],
  day: number,
  now: number,
): Promise<NewSnapshot[]> {
  const db = runtime.storage.db;
  const [accounts, setups] = await Promise.all([
    db
      .selectFrom("broker_accounts as b")
      .innerJoin("brokers as br", "br.id", "b.broker_id")
      .innerJoin("persons as p", "p.id", "b.person_id")
      .leftJoin("sites as ws", "ws.id", "p.white_label_site_id")
      .select([
        "b.account_id",
        "b.person_id",
        "b.broker_id",
        "b.currency",
        "b.net_liquidation",
        "b.net_liquidation_at",
        "b.first_activation_at",
        "b.is_linked",
        "br.is_enabled as broker_is_enabled",
        "p.white_label_site_id",
        sql<number | null>`coalesce(p.geo_site_id, ws.geo_site_id)`.as("geo_site_id"),
      ])
      .where("b.account_id", "in", accountIds)
      // In account order, so a day's snapshots are numbered in it.
      .orderBy("b.account_id")
      .execute(),
    db
      .selectFrom("autotrade_setups")
      .select([
        "account_id",
        "strategy_id",
        "status",
        "is_autotrade_enabled",
        "is_sync_enabled",
        "is_confirmation_needed",
        "settings",
      ])
      .where("account_id", "in", accountIds)
      .where("status", "in", LIVE_SETUP_STATUSES)
      .execute(),
  ]);
  const byAccount = new Map<number, SnapshotSetup[]>();
  for (const setup of setups) {
    const list = byAccount.get(setup.account_id) ?? [];
    list.push({
      strategyId: setup.strategy_id,
      active: setup.status === "active",
      enabled: setup.is_autotrade_enabled === 1,
      syncEnabled: setup.is_sync_enabled === 1,
      confirmationNeeded: setup.is_confirmation_needed === 1,
      settings: settingsOfText(setup.settings),
    });
    byAccount.set(setup.account_id, list);
  }
  return accounts.map((account) => {
    const counts = snapshotCounts(byAccount.get(account.account_id) ?? []);
    return {
      account_id: account.account_id,
      day_at: day,
      taken_at: now,
      person_id: account.person_id,
      broker_id: account.broker_id,
      white_label_site_id: account.white_label_site_id,
      geo_site_id: account.geo_site_id,
      net_liquidation: account.net_liquidation,
      net_liquidation_at: account.net_liquidation_at,
      first_activation_at: account.first_activation_at,
      currency: account.currency,
      autotraded_stocks: counts.stocks,
      autotraded_futures: counts.futures,
      autotraded_options: counts.options,
      autotraded_forex: counts.forex,
      autotraded_crypto: counts.crypto,
      autotraded_unique: counts.unique,
      is_sync_enabled: counts.syncEnabled ? 1 : 0,
      is_manual_confirmation: counts.manualConfirmation ? 1 : 0,
      is_disabled: counts.disabled ? 1 : 0,
      is_broker_enabled: account.is_linked === 1 && account.broker_is_enabled === 1 ? 1 : 0,
    };
  });
}
