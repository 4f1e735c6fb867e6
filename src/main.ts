import { createApp, type ServerName } from "./app.js";
import { readConfig } from "./config.js";
import { batchedStdout, serviceLogger } from "./log.js";
import { type DemoOutcome, describeDemo, seedDemo } from "./services/demo.js";
import { openStorage } from "./store/storage.js";

/** `npm start`: the four servers on embedded storage (or PostgreSQL with DATABASE_URL). */
const config = readConfig(process.env);
const logLines = batchedStdout();
const logger = serviceLogger(config.logLevel, logLines);
const storage = await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
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
        seeded.demo = await seedDemo(runtime);
      }
    : undefined,
});

if (app.bootstrap.kind === "created" && config.bootstrapAdminKey === undefined) {
  // Printed once: only the key's hash is stored, so it cannot be shown again.
  process.stdout.write(
    `\nA service administrator was created (person ${app.bootstrap.personId}). Its access key, shown only now:\n\n  ${app.bootstrap.accessKey}\n\n`,
  );
}

if (seeded.demo) {
  if (seeded.demo.kind === "created") process.stdout.write(`\n${describeDemo(seeded.demo)}\n`);
  else logger.info({ reason: seeded.demo.reason }, "demo data skipped");
}

const ports: Record<ServerName, number> = config.ports;
for (const [name, server] of Object.entries(app.servers) as [ServerName, (typeof app.servers)[ServerName]][]) {
  await server.listen({ host: config.host, port: ports[name] });
}
logger.info(
  { storage: storage.backend, sandbox: config.sandbox, host: config.host, ports: config.ports },
  "strategy-hub started",
);

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
    logLines.flush();
    process.exit(0);
  } catch (error) {
    logger.error({ err: error }, "shutdown failed");
    process.exit(1);
  }
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
