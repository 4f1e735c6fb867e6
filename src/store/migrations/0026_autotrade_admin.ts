import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Autotrade administration (issue 14): whether a geo-site requires its
 * members' live accounts to be approved before they autotrade there; the
 * geo-sites' approvals of brokerage accounts (autotrade and broker transmit,
 * deleted ones kept); the stability events of brokerage accounts as they
 * happen (links, delinks, restrictions, disables and enables, approvals);
 * the daily autotrade snapshot of each account, one per UTC day (the unique
 * key makes the scheduled job idempotent across passes and processes); and an
 * index reading an account's fills by time (the instrumentation export).
 */
export function autotradeAdminMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("sites")
        .addColumn("requires_account_approval", "integer", (c) => c.notNull().defaultTo(0))
        .execute();

      await withId(backend, db.schema.createTable("approved_accounts"))
        .addColumn("connection_type", "integer", (c) => c.notNull())
        .addColumn("geo_site_id", "bigint", (c) => c.notNull().references("sites.id"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("account_id", "bigint", (c) => c.notNull().references("broker_accounts.account_id"))
        .addColumn("broker_id", "bigint", (c) => c.notNull().references("brokers.id"))
        .addColumn("account_number", "text", (c) => c.notNull())
        .addColumn("white_label_site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("is_cfd", "integer", (c) => c.notNull())
        .addColumn("added_at", "bigint", (c) => c.notNull())
        .addColumn("added_by_person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("deleted_at", "bigint")
        .addColumn("deleted_by_person_id", "bigint", (c) => c.references("persons.id"))
        .addColumn("live_key", "text", (c) => c.unique())
        .execute();
      await db.schema
        .createIndex("approved_accounts_person_idx")
        .on("approved_accounts")
        .columns(["person_id", "id"])
        .execute();
      await db.schema
        .createIndex("approved_accounts_account_idx")
        .on("approved_accounts")
        .columns(["account_id", "connection_type", "geo_site_id"])
        .execute();

      await withId(backend, db.schema.createTable("account_events"))
        .addColumn("account_id", "bigint", (c) => c.notNull().references("broker_accounts.account_id"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .addColumn("at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("account_events_at_idx").on("account_events").columns(["at", "id"]).execute();
      await db.schema
        .createIndex("account_events_account_idx")
        .on("account_events")
        .columns(["account_id", "at"])
        .execute();

      await withId(backend, db.schema.createTable("autotrade_stats"))
        .addColumn("account_id", "bigint", (c) => c.notNull().references("broker_accounts.account_id"))
        .addColumn("day_at", "bigint", (c) => c.notNull())
        .addColumn("taken_at", "bigint", (c) => c.notNull())
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("broker_id", "bigint", (c) => c.notNull().references("brokers.id"))
        .addColumn("white_label_site_id", "bigint")
        .addColumn("geo_site_id", "bigint")
        .addColumn("net_liquidation", "text")
        .addColumn("net_liquidation_at", "bigint")
        .addColumn("first_activation_at", "bigint")
        .addColumn("currency", "text", (c) => c.notNull())
        .addColumn("autotraded_stocks", "integer", (c) => c.notNull())
        .addColumn("autotraded_futures", "integer", (c) => c.notNull())
        .addColumn("autotraded_options", "integer", (c) => c.notNull())
        .addColumn("autotraded_forex", "integer", (c) => c.notNull())
        .addColumn("autotraded_crypto", "integer", (c) => c.notNull())
        .addColumn("autotraded_unique", "integer", (c) => c.notNull())
        .addColumn("is_sync_enabled", "integer", (c) => c.notNull())
        .addColumn("is_manual_confirmation", "integer", (c) => c.notNull())
        .addColumn("is_disabled", "integer", (c) => c.notNull())
        .addColumn("is_broker_enabled", "integer", (c) => c.notNull())
        .addUniqueConstraint("autotrade_stats_day_key", ["account_id", "day_at"])
        .execute();
      // GetAutotradeStats reads a window of days: every account's (service admins), a site's or a geo-site's.
      await db.schema.createIndex("autotrade_stats_day_idx").on("autotrade_stats").columns(["day_at", "id"]).execute();
      await db.schema
        .createIndex("autotrade_stats_site_idx")
        .on("autotrade_stats")
        .columns(["white_label_site_id", "day_at", "id"])
        .execute();
      await db.schema
        .createIndex("autotrade_stats_geo_idx")
        .on("autotrade_stats")
        .columns(["geo_site_id", "day_at", "id"])
        .execute();

      await db.schema
        .createIndex("account_fills_account_time_idx")
        .on("account_fills")
        .columns(["account_id", "filled_at"])
        .execute();
    },
  };
}
