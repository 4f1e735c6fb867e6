import { type Migration, Migrator } from "kysely";
import { platformMigration } from "./migrations/0001_platform.js";
import type { Storage } from "./storage.js";

/** Every migration, in order. Names sort in the order they apply. */
function migrations(storage: Storage): Record<string, Migration> {
  return {
    "0001_platform": platformMigration(storage.backend),
  };
}

/** Brings the schema up to date; safe to run from several processes at once. */
export async function migrateToLatest(storage: Storage): Promise<string[]> {
  const migrator = new Migrator({
    db: storage.db,
    provider: { getMigrations: async () => migrations(storage) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    throw error instanceof Error ? error : new Error(String(error));
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
