import { parseArgs } from "node:util";
import { readConfig } from "../config.js";
import { ControllableClock } from "../core/clock.js";
import { Refusal } from "../core/errors.js";
import { loadClockSetting } from "../services/clock.js";
import type { Runtime } from "../services/runtime.js";
import { migrateToLatest } from "../store/migrate.js";
import { openStorage } from "../store/storage.js";
import { type CliCommand, COMMANDS, usage } from "./commands.js";

/**
 * The operator CLI: `npm run cli -- <noun> <verb> [options] [--json]`. It works
 * on the same storage as the server, also while the server runs.
 */
async function main(argv: readonly string[]): Promise<number> {
  const json = argv.includes("--json");
  const args = argv.filter((a) => a !== "--json");
  const [noun, verb, ...rest] = args;
  const command: CliCommand | undefined = COMMANDS.find((c) => c.noun === noun && c.verb === verb);
  if (!command) {
    fail(
      json,
      noun === undefined || noun === "help" ? usage() : `Unknown command: ${args.slice(0, 2).join(" ")}\n\n${usage()}`,
    );
    return noun === undefined || noun === "help" ? 0 : 2;
  }
  let options: Record<string, string | undefined>;
  try {
    options = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false })
      .values as Record<string, string | undefined>;
  } catch (error) {
    fail(json, `${(error as Error).message}\n\n${usage()}`);
    return 2;
  }
  const config = readConfig(process.env);
  const storage = await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(storage);
    const runtime: Runtime = { storage, clock: new ControllableClock(Date.now, await loadClockSetting(storage)) };
    const result = await command.run(runtime, options);
    process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof Refusal || error instanceof UsageError) {
      const field = error instanceof Refusal ? error.entries[0]?.field : undefined;
      fail(json, error.message, field);
      return error instanceof UsageError ? 2 : 1;
    }
    throw error;
  } finally {
    await storage.close();
  }
}

/** A wrong or missing option. */
export class UsageError extends Error {}

function fail(json: boolean, message: string, field?: string): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ Error: { Message: message, ...(field ? { Field: field } : {}) } })}\n`);
  } else {
    process.stderr.write(`${message}\n`);
  }
}

process.exitCode = await main(process.argv.slice(2));
