import { readConfig } from "../config.js";
import { migrateToLatest } from "./migrate.js";
import { openStorage } from "./storage.js";

/** `npm run migrate`: applies pending migrations to the configured storage. */
const config = readConfig(process.env);
const storage = await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
try {
  const applied = await migrateToLatest(storage);
  process.stdout.write(`${JSON.stringify({ storage: storage.backend, applied })}\n`);
} finally {
  await storage.close();
}
