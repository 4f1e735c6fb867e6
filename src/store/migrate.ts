import { type Kysely, type Migration, Migrator, sql } from "kysely";
import { platformMigration } from "./migrations/0001_platform.js";
import { peopleMigration } from "./migrations/0002_people.js";
import { strategiesMigration } from "./migrations/0003_strategies.js";
import { ordersMigration } from "./migrations/0004_orders.js";
import { tradesMigration } from "./migrations/0005_trades.js";
import { equityMigration } from "./migrations/0006_equity.js";
import { discoveryMigration } from "./migrations/0007_discovery.js";
import { planCommissionsMigration } from "./migrations/0008_plan_commissions.js";
import { localIdsMigration } from "./migrations/0009_local_ids.js";
import { systemSettingsMigration } from "./migrations/0010_system_settings.js";
import { desiredPositionsModeMigration } from "./migrations/0011_desired_positions_mode.js";
import { subscriptionsMigration } from "./migrations/0012_subscriptions.js";
import { accountsMigration } from "./migrations/0013_accounts.js";
import { strategyRecordsMigration } from "./migrations/0014_strategy_records.js";
import { sentSymbolsMigration } from "./migrations/0015_sent_symbols.js";
import { idempotencyKeysMigration } from "./migrations/0016_idempotency_keys.js";
import { commerceMigration } from "./migrations/0017_commerce.js";
import { plansMigration } from "./migrations/0018_plans.js";
import { whiteLabelMigration } from "./migrations/0020_whitelabel.js";
import { checkoutMigration } from "./migrations/0021_checkout.js";
import { autotradeMigration } from "./migrations/0022_autotrade.js";
import { simulatedBrokerMigration } from "./migrations/0023_simulated_broker.js";
import { confirmationsMigration } from "./migrations/0024_confirmations.js";
import { copyFormsMigration } from "./migrations/0025_copy_forms.js";
import { autotradeAdminMigration } from "./migrations/0026_autotrade_admin.js";
import { rule575Migration } from "./migrations/0027_rule575.js";
import { strategyMuxMigration } from "./migrations/0027_strategy_mux.js";
import { watchlistsMigration } from "./migrations/0027_watchlists.js";
import { accountOrdersMigration } from "./migrations/0028_account_orders.js";
import { autotradeSyncMigration } from "./migrations/0029_autotrade_sync.js";
import { liveOrdersMigration } from "./migrations/0030_live_orders.js";
import { journalForeignKeysMigration } from "./migrations/0031_journal_foreign_keys.js";
import type { Database } from "./schema.js";
import type { Storage } from "./storage.js";

/** Every migration, in order. Names sort in the order they apply. */
function migrations(storage: Storage): Record<string, Migration> {
  return {
    "0001_platform": platformMigration(storage.backend),
    "0002_people": peopleMigration(storage.backend),
    "0003_strategies": strategiesMigration(storage.backend),
    "0004_orders": ordersMigration(storage.backend),
    "0005_trades": tradesMigration(storage.backend),
    "0006_equity": equityMigration(),
    "0007_discovery": discoveryMigration(),
    "0008_plan_commissions": planCommissionsMigration(),
    "0009_local_ids": localIdsMigration(),
    "0010_system_settings": systemSettingsMigration(),
    "0011_desired_positions_mode": desiredPositionsModeMigration(),
    "0012_subscriptions": subscriptionsMigration(storage.backend),
    "0013_accounts": accountsMigration(storage.backend),
    "0014_strategy_records": strategyRecordsMigration(),
    "0015_sent_symbols": sentSymbolsMigration(),
    "0016_idempotency_keys": idempotencyKeysMigration(),
    "0017_commerce": commerceMigration(storage.backend),
    "0018_plans": plansMigration(storage.backend),
    "0020_whitelabel": whiteLabelMigration(storage.backend),
    "0021_checkout": checkoutMigration(storage.backend),
    "0022_autotrade": autotradeMigration(storage.backend),
    "0023_simulated_broker": simulatedBrokerMigration(),
    "0024_confirmations": confirmationsMigration(),
    "0025_copy_forms": copyFormsMigration(),
    "0026_autotrade_admin": autotradeAdminMigration(storage.backend),
    "0027_rule575": rule575Migration(),
    "0027_strategy_mux": strategyMuxMigration(storage.backend),
    "0027_watchlists": watchlistsMigration(storage.backend),
    "0028_account_orders": accountOrdersMigration(),
    "0029_autotrade_sync": autotradeSyncMigration(),
    "0030_live_orders": liveOrdersMigration(),
    "0031_journal_foreign_keys": journalForeignKeysMigration(storage.backend),
  };
}

/** Brings the schema up to date; safe to run from several processes at once. */
export function migrateToLatest(storage: Storage): Promise<string[]> {
  return migrateTo(storage, "latest");
}

/**
 * A PostgreSQL advisory lock held while schemas change shape: migrations hold
 * it, and so must anything that drops a schema in the same database. Kysely's
 * migrator reads the catalog of every schema, and a schema dropped in the
 * middle of that read makes it fail.
 */
export const SCHEMA_CHANGE_LOCK = 0x5348_4d47;

/**
 * Runs `work` on one PostgreSQL connection holding SCHEMA_CHANGE_LOCK. It
 * waits for the lock, and `work` for the locks its changes need, without the
 * pool's limit (pg-connect.ts): another process's migrations, or queries
 * running on a table being altered, may take longer than that.
 */
export function withSchemaChangeLock<DB, T>(db: Kysely<DB>, work: (connection: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`set lock_timeout = 0`.execute(connection);
    await sql`select pg_advisory_lock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    try {
      return await work(connection);
    } finally {
      await sql`select pg_advisory_unlock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
      // Back to the connection's own limit, for whoever the pool lends it to next.
      await sql`reset lock_timeout`.execute(connection);
    }
  });
}

/** Applies the migrations up to and including `target` (tests of a migration start below it). */
export async function migrateTo(storage: Storage, target: string): Promise<string[]> {
  if (storage.backend === "sqlite") return runMigrator(storage.db, storage, target, {});
  const migrationTableSchema = await currentSchema(storage);
  // Kysely looks for its bookkeeping tables in every schema unless told which;
  // another schema's tables (another deployment, a parallel test) would fool it.
  return withSchemaChangeLock(storage.db, (db) => runMigrator(db, storage, target, { migrationTableSchema }));
}

async function runMigrator(
  db: Kysely<Database>,
  storage: Storage,
  target: string,
  options: { migrationTableSchema?: string },
): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations(storage) }, ...options });
  const { error, results } = target === "latest" ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
  if (error) {
    throw error instanceof Error ? error : new Error(String(error));
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** The names of every migration, in the order they apply. */
export function migrationNames(storage: Storage): string[] {
  return Object.keys(migrations(storage));
}

/** The migrations storage holds as applied, in order; throws when it was never migrated. */
export async function appliedMigrations(storage: Storage): Promise<string[]> {
  // Kysely's bookkeeping table, found through the search path on PostgreSQL (the current schema's).
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(storage.db);
  return applied.rows.map((row) => row.name);
}

/** The PostgreSQL schema the storage works in. */
export async function currentSchema(storage: Storage): Promise<string> {
  const result = await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db);
  const schema = result.rows[0]?.schema;
  if (!schema) throw new Error("PostgreSQL has no current schema: check search_path");
  return schema;
}
