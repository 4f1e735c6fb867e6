import { readConfig } from "../config.js";
import { ConfigError } from "../config-error.js";
import { openCheckedStorage } from "./checked-open.js";
import { migrateToLatest } from "./migrate.js";

/** `npm run migrate`: applies pending migrations to the configured storage. */
try {
  const config = readConfig(process.env);
  const storage = await openCheckedStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const applied = await migrateToLatest(storage);
    process.stdout.write(`${JSON.stringify({ storage: storage.backend, applied })}\n`);
  } finally {
    await storage.close();
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`strategy-hub: ${error.message}\n`);
  process.exitCode = 1;
}
