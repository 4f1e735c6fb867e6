import type pino from "pino";
import { type App, createApp, type ServerName } from "./app.js";
import type { Config } from "./config.js";
import { batchedStdout, serviceLogger } from "./log.js";
import { type DemoOutcome, describeDemo, seedDemo } from "./services/demo.js";
import { startupFacts } from "./startup-facts.js";
import { openCheckedStorage } from "./store/checked-open.js";
import type { Storage } from "./store/storage.js";

/**
 * Runs the service on settings `readConfig` took and whose ports were found
 * free (src/main.ts): opens storage (a database that cannot be used is a
 * ConfigError too), makes the app, listens, and stops on SIGTERM or SIGINT.
 */
export async function serve(config: Config): Promise<void> {
  const logLines = batchedStdout();
  const logger = serviceLogger(config.logLevel, logLines);
  const storage = await openCheckedStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const seeded: { demo?: DemoOutcome } = {};
  const app = await createApp({
    storage,
    logger,
    systemNow: Date.now,
    sandbox: config.sandbox,
    rateLimit: config.rateLimit,
    legacyRateLimit: config.legacyRateLimit,
    bootstrapAdminKey: config.bootstrapAdminKey,
    marketFeed: config.marketFeed,
    // Demo data (with a year of trading history) goes in before the fill loop starts.
    prepare: config.demo
      ? async (runtime) => {
          seeded.demo = await seedDemo(runtime, (line) => logger.info(line));
        }
      : undefined,
  });

  // Keys go to stderr, never into the JSON log on stdout.
  if (app.bootstrap.kind === "created" && config.bootstrapAdminKey === undefined) {
    process.stderr.write(adminKeyBanner(app.bootstrap.personId, app.bootstrap.accessKey));
  }
  if (seeded.demo) {
    if (seeded.demo.kind === "created") process.stderr.write(`\n${describeDemo(seeded.demo)}\n`);
    else logger.info({ reason: seeded.demo.reason }, "demo data skipped");
  }

  const ports: Record<ServerName, number> = config.ports;
  for (const [name, server] of Object.entries(app.servers) as [ServerName, (typeof app.servers)[ServerName]][]) {
    await server.listen({ host: config.host, port: ports[name] });
  }
  logger.info(await startupFacts(config, storage, app), "strategy-hub started");
  stopOnSignals(app, storage, logger, logLines.flush);
}

/** Printed once: only the key's hash is stored, so it cannot be shown again. */
function adminKeyBanner(personId: number, accessKey: string): string {
  const rule = "=".repeat(72);
  return [
    "",
    rule,
    `  A service administrator was created (person ${personId}).`,
    "  Its access key, shown only now:",
    "",
    `    ${accessKey}`,
    "",
    "  Only its hash is stored: keep it now, it cannot be shown again.",
    rule,
    "",
    "",
  ].join("\n");
}

function stopOnSignals(app: App, storage: Storage, logger: pino.Logger, flushLog: () => void): void {
  let stopping = false;
  async function shutdown(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    try {
      await app.close();
      await storage.close();
      // A server counts as closed once its last connection ends, which can come before that
      // response's onResponse hook has written its log line: let those run first.
      await new Promise((resolve) => setImmediate(resolve));
      logger.info("stopped");
      flushLog();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, "shutdown failed");
      process.exit(1);
    }
  }
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
