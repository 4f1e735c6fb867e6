import { sql } from "kysely";
import { ConfigError } from "../config-error.js";
import { openStorage, type Storage, type StorageConfig } from "./storage.js";

/**
 * Opens storage for a start and asks it a trivial query, so what stops the
 * service from reaching it is told as a setting to fix (a ConfigError naming
 * DATABASE_URL or DATA_DIR), never with the URL's password.
 */
export async function openCheckedStorage(config: StorageConfig): Promise<Storage> {
  let storage: Storage | undefined;
  try {
    storage = await openStorage(config);
    await sql`select 1`.execute(storage.db);
    return storage;
  } catch (error) {
    await storage?.close().catch(() => undefined);
    throw explained(error, config) ?? error;
  }
}

function explained(error: unknown, config: StorageConfig): ConfigError | null {
  const code = (error as { code?: unknown }).code;
  if (!config.databaseUrl) {
    if (typeof code === "string" && code.startsWith("E")) {
      return new ConfigError("DATA_DIR", `cannot hold the database in ${config.dataDir} (${code})`);
    }
    return null;
  }
  const url = new URL(config.databaseUrl);
  const server = `${url.hostname || "localhost"}:${url.port || "5432"}`;
  const database = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || "postgres";
  switch (code) {
    case "3D000":
      return new ConfigError(
        "DATABASE_URL",
        `names database "${database}", which does not exist on ${server}: create it first (createdb -h ${url.hostname || "localhost"} -p ${url.port || "5432"} ${database}, or in psql: create database "${database}";)`,
      );
    case "28P01":
    case "28000":
      return new ConfigError("DATABASE_URL", `is refused by ${server}: ${(error as Error).message}`);
    case "ECONNREFUSED":
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
      return new ConfigError("DATABASE_URL", `points at ${server}, where no PostgreSQL server answers (${code})`);
  }
  return null;
}
