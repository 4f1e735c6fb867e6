import { sql } from "kysely";
import type { Logger } from "pino";
import type { FillLoopStatus } from "../engine/fill-loop.js";
import { appliedMigrations, migrationNames } from "../store/migrate.js";
import type { Storage } from "../store/storage.js";
import { errorCode } from "../store/unavailable.js";

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

/** The trading frame's journal, as readiness asks it. */
export interface JournalProbe {
  /** Why it can write nothing more (its thread stopped), or null while it can. */
  readonly failure: () => string | null;
  /** Writes a little, durably, now; fails as a batch would fail. */
  readonly probe: (atMs: number) => Promise<void>;
}

export interface ReadinessSources {
  readonly storage: Storage;
  readonly journal: JournalProbe;
  readonly fillLoop: () => FillLoopStatus;
  /** The machine's time: the fill loop's catch-ups are told in it. */
  readonly systemNow: () => number;
  /** Where a failed check's error is told in full. */
  readonly logger: Logger;
}

/**
 * Whether this process can serve: storage answers a trivial query, every
 * migration this version knows is applied, the trading frame's journal can
 * still write (its thread runs, and a small durable write of its own goes
 * through: a full disk or another writer's lock fails every order while
 * reads still answer), and the fill loop runs and has caught up recently
 * (machine time, since the sandbox clock may stand still).
 *
 * A check storage failed names the error's code, not storage's own words (a
 * host and port, a file's path): the probe answers anyone on the public
 * ports. The log has the words.
 */
export async function readiness(sources: ReadinessSources): Promise<Readiness> {
  const storage = await answerWithin(sources, "storage", "no answer", () =>
    sql`select 1`.execute(sources.storage.db).then(() => undefined),
  );
  const migrations = storage === "ok" ? await migrationsCheck(sources) : "not checked: storage does not answer";
  const journal = await journalCheck(sources, storage === "ok");
  const fillLoop = fillLoopCheck(sources.fillLoop(), sources.systemNow());
  return {
    ready: storage === "ok" && migrations === "ok" && journal === "ok" && fillLoop === "ok",
    checks: { storage, migrations, journal, fillLoop },
  };
}

/**
 * "ok" once `work` is done; otherwise `failed` with the error's code (the
 * error logged), or that it did not answer in time.
 */
async function answerWithin(
  sources: ReadinessSources,
  check: string,
  failed: string,
  work: () => Promise<void>,
): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`${failed}: no answer within ${STORAGE_ANSWER_MS} ms`), STORAGE_ANSWER_MS);
  });
  const answered = work().then(
    () => "ok",
    (error: unknown) => failedCheck(sources, check, failed, error),
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}

function failedCheck(sources: ReadinessSources, check: string, failed: string, error: unknown): string {
  sources.logger.warn({ err: error, check }, `readiness: ${failed}`);
  const code = errorCode(error);
  return code === undefined ? failed : `${failed} (${code})`;
}

async function journalCheck(sources: ReadinessSources, storageAnswers: boolean): Promise<string> {
  const failure = sources.journal.failure();
  if (failure !== null) return `stopped: ${failure}`;
  if (!storageAnswers) return "not checked: storage does not answer";
  return answerWithin(sources, "journal", "cannot write", () => sources.journal.probe(sources.systemNow()));
}

async function migrationsCheck(sources: ReadinessSources): Promise<string> {
  try {
    const applied = new Set(await appliedMigrations(sources.storage));
    const pending = migrationNames(sources.storage).filter((name) => !applied.has(name));
    return pending.length === 0 ? "ok" : `pending: ${pending.join(", ")}`;
  } catch (error) {
    return failedCheck(sources, "migrations", "not applied", error);
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
