import { type Kysely, type Migration, sql } from "kysely";

/**
 * AutoSync (issue 14). `autotrade_syncs` holds, per setup and venue (a
 * market at one schedule's open: src/core/autotrade/sync-markets.ts), the
 * latest open synced there: claiming an open moves it forward only, in one
 * conditional statement, so however many passes and processes try, each
 * setup is synced once per venue and open. `requested_for` is an open a
 * SyncPositionsToOpen asked to be synced at (the market was closed then).
 *
 * Orders marked DoNotSyncToOpen are few: a partial index finds a strategy's
 * (the sync and its report read them) without weighing on every order
 * written. The report reads an account's setups and its copies (and skips)
 * of working signals, and finds a person's account by its number. Setups started with DoNotJoinOpenPositions had every
 * WillSyncToOpen flag off; AutoSync now skips only the positions open at
 * their start, so their flags are turned on.
 */
const ALL_OFF = JSON.stringify(
  Object.fromEntries(
    [
      "StocksUSA",
      "StocksEurope",
      "OptionsUSA",
      "OptionsEurope",
      "FuturesUSA",
      "FuturesEurope",
      "FuturesAsia",
      "Forex",
    ].map((market) => [market, false]),
  ),
);
const ALL_ON = ALL_OFF.replaceAll("false", "true");

export function autotradeSyncMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("autotrade_syncs")
        .addColumn("setup_id", "bigint", (c) => c.notNull().references("autotrade_setups.id"))
        .addColumn("venue", "text", (c) => c.notNull())
        .addColumn("market", "text", (c) => c.notNull())
        .addColumn("opens_at", "bigint", (c) => c.notNull())
        .addColumn("synced_at", "bigint")
        .addColumn("requested_for", "bigint")
        .addPrimaryKeyConstraint("autotrade_syncs_pk", ["setup_id", "venue"])
        .execute();
      await db.schema
        .createIndex("orders_do_not_sync_idx")
        .on("orders")
        .column("strategy_id")
        .where(sql.ref("do_not_sync_to_open"), "=", sql.lit(1))
        .execute();
      // The sync and its report read an account's setups (an account may follow thousands of strategies).
      await db.schema
        .createIndex("autotrade_setups_account_idx")
        .on("autotrade_setups")
        .columns(["account_id", "status"])
        .execute();
      // The report reads an account's copies (and copies skipped) of the strategies' working signals:
      // by signal alone it would read every follower's.
      await db.schema
        .createIndex("account_orders_account_source_idx")
        .on("account_orders")
        .columns(["account_id", "source_order_id"])
        .execute();
      await db.schema
        .createIndex("copy_skips_account_source_idx")
        .on("copy_skips")
        .columns(["account_id", "source_order_id"])
        .execute();
      // The sync report names a person's account by its number: a person may hold thousands.
      await db.schema
        .createIndex("broker_accounts_person_number_idx")
        .on("broker_accounts")
        .columns(["person_id", "account_number"])
        .execute();
      await sql`update autotrade_setups set sync_to_open = ${ALL_ON}
        where do_not_join_open_positions = 1 and sync_to_open = ${ALL_OFF}`.execute(db);
    },
  };
}
