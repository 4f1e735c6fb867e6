import { parseArgs } from "node:util";
import { readConfig } from "../config.js";
import { ConfigError } from "../config-error.js";
import { ControllableClock } from "../core/clock.js";
import { Refusal } from "../core/errors.js";
import { loadClockSetting } from "../services/clock.js";
import type { Runtime } from "../services/runtime.js";
import { openCheckedStorage } from "../store/checked-open.js";
import { migrateToLatest } from "../store/migrate.js";
import type { Storage } from "../store/storage.js";
import { type CliCommand, COMMANDS, usage } from "./commands.js";
import { UsageError } from "./usage-error.js";

/**
 * The operator CLI: `npm run cli -- <noun> <verb> [options] [--json]`. It works
 * on the same storage as the server, also while the server runs.
 */
async function main(argv: readonly string[]): Promise<number> {
  const json = argv.includes("--json");
  const args = argv.filter((a) => a !== "--json");
  const [noun] = args;
  const command: CliCommand | undefined = COMMANDS.find((c) => wordsOf(c).every((word, i) => args[i] === word));
  const rest = command ? args.slice(wordsOf(command).length) : [];
  if (noun === undefined || noun === "help" || noun === "--help") {
    process.stdout.write(json ? `${JSON.stringify({ Usage: usage() })}\n` : `${usage()}\n`);
    return 0;
  }
  if (!command) {
    fail(json, `Unknown command: ${args.slice(0, 2).join(" ")}\n\n${usage()}`);
    return 2;
  }
  let options: Record<string, string | undefined>;
  try {
    const values = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }).values;
    // A flag given reads as "true", as if spelled out.
    options = Object.fromEntries(
      Object.entries(values).map(([name, value]) => [name, value === true ? "true" : (value as string | undefined)]),
    );
  } catch (error) {
    fail(json, `${(error as Error).message}\n\n${usage()}`);
    return 2;
  }
  let storage: Storage | undefined;
  try {
    const config = readConfig(process.env);
    storage = await openCheckedStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    await migrateToLatest(storage);
    const runtime: Runtime = { storage, clock: new ControllableClock(Date.now, await loadClockSetting(storage)) };
    const result = await command.run(runtime, options);
    process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      fail(json, error.message);
      return 2;
    }
    if (error instanceof ConfigError) {
      fail(json, error.message);
      return 1;
    }
    if (error instanceof Refusal) {
      fail(json, error.message, error.entries[0]?.field);
      return 1;
    }
    // Storage unreachable and the like: still one JSON object under --json.
    fail(json, `Internal error: ${(error as Error).message}`);
    return 1;
  } finally {
    await storage?.close();
  }
}

/** The words naming a command: its noun, then its verb's words (a verb may be two words: account create). */
const wordsOf = (command: CliCommand): string[] => [command.noun, ...(command.verb?.split(" ") ?? [])];

function fail(json: boolean, message: string, field?: string): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ Error: { Message: message, ...(field ? { Field: field } : {}) } })}\n`);
  } else {
    process.stderr.write(`${message}\n`);
  }
}

process.exitCode = await main(process.argv.slice(2));
