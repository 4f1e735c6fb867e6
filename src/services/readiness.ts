import { sql } from "kysely";
import type { FillLoopStatus } from "../engine/fill-loop.js";
import { appliedMigrations, migrationNames } from "../store/migrate.js";
import type { Storage } from "../store/storage.js";

/** How long storage may take to answer the readiness query before it counts as not answering. */
const STORAGE_ANSWER_MS = 2_000;

/** The fill loop counts as stuck when it has not caught up for this many ticks, and at least this long. */
const STALE_TICKS = 10;
const STALE_AT_LEAST_MS = 10_000;

export interface Readiness {
  readonly ready: boolean;
  /** Each check: "ok", or what is wrong. */
  readonly checks: {
    readonly storage: string;
    readonly migrations: string;
    readonly journal: string;
    readonly fillLoop: string;
  };
}

export interface ReadinessSources {
  readonly storage: Storage;
  /** Why the trading frame's journal can write nothing more, or null while it can. */
  readonly journalFailure: () => string | null;
  readonly fillLoop: () => FillLoopStatus;
  /** The machine's time: the fill loop's catch-ups are told in it. */
  readonly systemNow: () => number;
}

/**
 * Whether this process can serve: storage answers a trivial query, every
 * migration this version knows is applied, the trading frame's journal can
 * still write (its thread runs: a stopped one would fail every order), and
 * the fill loop runs and has caught up recently (machine time, since the
 * sandbox clock may stand still).
 */
export async function readiness(sources: ReadinessSources): Promise<Readiness> {
  const storage = await storageCheck(sources.storage);
  const migrations = storage === "ok" ? await migrationsCheck(sources.storage) : "not checked: storage does not answer";
  const journalFailure = sources.journalFailure();
  const journal = journalFailure === null ? "ok" : `stopped: ${journalFailure}`;
  const fillLoop = fillLoopCheck(sources.fillLoop(), sources.systemNow());
  return {
    ready: storage === "ok" && migrations === "ok" && journal === "ok" && fillLoop === "ok",
    checks: { storage, migrations, journal, fillLoop },
  };
}

async function storageCheck(storage: Storage): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${STORAGE_ANSWER_MS} ms`), STORAGE_ANSWER_MS);
  });
  const answered = sql`select 1`.execute(storage.db).then(
    () => "ok",
    (error: unknown) => `no answer: ${(error as Error).message}`,
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function migrationsCheck(storage: Storage): Promise<string> {
  try {
    const applied = new Set(await appliedMigrations(storage));
    const pending = migrationNames(storage).filter((name) => !applied.has(name));
    return pending.length === 0 ? "ok" : `pending: ${pending.join(", ")}`;
  } catch (error) {
    return `not applied: ${(error as Error).message}`;
  }
}

function fillLoopCheck(status: FillLoopStatus, nowMs: number): string {
  if (!status.running || status.caughtUpAtMs === null) return "not running";
  // Driven only (no timer): running is all there is to know.
  if (status.tickMs <= 0) return "ok";
  const lagMs = nowMs - status.caughtUpAtMs;
  const limitMs = Math.max(STALE_TICKS * status.tickMs, STALE_AT_LEAST_MS);
  return lagMs <= limitMs ? "ok" : `last caught up ${Math.round(lagMs / 1000)} s ago (limit ${limitMs / 1000} s)`;
}
