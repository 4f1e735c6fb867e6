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
 * Where a run of the operator CLI reads its settings and writes its answer:
 * the process's own environment and streams (src/cli/main.ts), or those a
 * caller in the same process gives it.
 */
export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/**
 * The operator CLI: `npm run cli -- <noun> <verb> [options] [--json]`. It works
 * on the same storage as the server, also while the server runs. Answers the
 * exit code: 0 done, 1 refused or failed, 2 a usage error.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const json = argv.includes("--json");
  const args = argv.filter((a) => a !== "--json");
  const [noun] = args;
  const command: CliCommand | undefined = COMMANDS.find((c) => wordsOf(c).every((word, i) => args[i] === word));
  const rest = command ? args.slice(wordsOf(command).length) : [];
  if (noun === undefined || noun === "help" || noun === "--help") {
    io.stdout(json ? `${JSON.stringify({ Usage: usage() })}\n` : `${usage()}\n`);
    return 0;
  }
  if (!command) {
    fail(io, json, `Unknown command: ${args.slice(0, 2).join(" ")}\n\n${usage()}`);
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
    fail(io, json, `${(error as Error).message}\n\n${usage()}`);
    return 2;
  }
  let storage: Storage | undefined;
  try {
    const config = readConfig(io.env);
    storage = await openCheckedStorage({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      pgOptions: io.env.PGOPTIONS,
    });
    await migrateToLatest(storage);
    const runtime: Runtime = { storage, clock: new ControllableClock(Date.now, await loadClockSetting(storage)) };
    const result = await command.run(runtime, options, (line) => io.stderr(`${line}\n`));
    io.stdout(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      fail(io, json, error.message);
      return 2;
    }
    if (error instanceof ConfigError) {
      fail(io, json, error.message);
      return 1;
    }
    if (error instanceof Refusal) {
      fail(io, json, error.message, error.entries[0]?.field);
      return 1;
    }
    // Storage unreachable and the like: still one JSON object under --json.
    fail(io, json, `Internal error: ${(error as Error).message}`);
    return 1;
  } finally {
    await storage?.close();
  }
}

/** The words naming a command: its noun, then its verb's words (a verb may be two words: account create). */
const wordsOf = (command: CliCommand): string[] => [command.noun, ...(command.verb?.split(" ") ?? [])];

function fail(io: CliIo, json: boolean, message: string, field?: string): void {
  if (json) {
    io.stdout(`${JSON.stringify({ Error: { Message: message, ...(field ? { Field: field } : {}) } })}\n`);
  } else {
    io.stderr(`${message}\n`);
  }
}
