import { readConfig } from "./config.js";
import { ConfigError } from "./config-error.js";
import { checkPortsFree } from "./http/ports.js";

/**
 * `npm start`: the four servers on embedded storage (or PostgreSQL with
 * DATABASE_URL). A setting the service cannot start with stops it with one
 * line on stderr naming the variable, before anything is stored where it can.
 */
async function start(): Promise<void> {
  const config = readConfig(process.env);
  await checkPortsFree(config.host, config.ports);
  // The service's modules load once its settings are known to be good: a bad one stops the start in a
  // tenth of a second, not after the whole service has loaded.
  const { serve } = await import("./serve.js");
  await serve(config);
}

try {
  await start();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`strategy-hub: ${error.message}\n`);
  process.exit(1);
}
