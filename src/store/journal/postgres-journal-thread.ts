import { parentPort, workerData } from "node:worker_threads";
import pg from "pg";
import { PG_CONNECT_TIMEOUT_MS } from "../pg-connect.js";
import { readInt8AsNumber } from "../pg-types.js";
import {
  type AllocatedTable,
  type CommitOutcome,
  type IdRanges,
  type Journal,
  type JournalBatch,
  PROBED_AT_SETTING,
} from "./batch.js";
import { failureReply, type JournalReply, type JournalRequest } from "./journal-thread.js";
import { firstPositionsText, RESERVE_SQL, SESSION_SETTINGS, writeOf } from "./postgres-journal-statements.js";

/**
 * The PostgreSQL journal's own thread (postgres-journal.ts starts it): one
 * connection of its own, sending what postgres-journal-statements.ts writes,
 * one batch at a time.
 */
function connectionJournal(url: string, options: string | undefined, origin: string): Omit<Journal, "failure"> {
  let client: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  const connection = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const fresh = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
        keepAlive: true,
        // Operators find the journal's connection in pg_stat_activity by this name.
        application_name: "strategy-hub journal",
        ...(options ? { options } : {}),
      });
      // A lost connection is made again for the next batch.
      fresh.on("error", () => {
        if (client === fresh) client = null;
      });
      try {
        await fresh.connect();
        await fresh.query(SESSION_SETTINGS);
        client = fresh;
        return fresh;
      } finally {
        connecting = null;
      }
    })();
    return connecting;
  };

  /**
   * One round trip, the write committing by itself, unless the batch starts a
   * consumer's position: then three (open and lock, write, commit or roll back).
   */
  async function commit(db: pg.Client, batch: JournalBatch): Promise<CommitOutcome> {
    const opening = firstPositionsText(batch);
    if (opening) await db.query(opening);
    // Named: each shape of write is prepared once on the connection.
    const result = await db.query(writeOf(batch, origin));
    const guard = result.rows[0] as { conflicts: string[] | null; consumer_conflicts: string[] | null };
    const outcome: CommitOutcome =
      guard.conflicts || guard.consumer_conflicts
        ? {
            ok: false,
            conflicts: (guard.conflicts ?? []).map(Number),
            consumerConflicts: guard.consumer_conflicts ?? [],
          }
        : { ok: true };
    if (opening) await db.query(outcome.ok ? "commit" : "rollback");
    return outcome;
  }

  // One thing at a time on the connection: a reservation must not land inside a batch's transaction.
  let tail: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const next = tail.then(work, work);
    tail = next.catch(() => undefined);
    return next;
  };

  return {
    commit: (batch) =>
      serially(async () => {
        const db = await connection();
        try {
          return await commit(db, batch);
        } catch (error) {
          await db.query("rollback").catch(() => undefined);
          throw error;
        }
      }),
    async reserveIds(table: AllocatedTable, count: number): Promise<IdRanges> {
      const result = await serially(async () =>
        (await connection()).query({ name: "journal_reserve", text: RESERVE_SQL, values: [table, count] }),
      );
      const ids = result.rows.map((row: { id: number }) => Number(row.id)).sort((a, b) => a - b);
      const ranges: [number, number][] = [];
      for (const id of ids) {
        const last = ranges.at(-1);
        if (last && last[1] + 1 === id) last[1] = id;
        else ranges.push([id, id]);
      }
      return ranges;
    },
    async probe(atIso: string): Promise<void> {
      await serially(async () =>
        (await connection()).query({ name: "journal_probe", text: PROBE_SQL, values: [atIso] }),
      );
    },
    async close() {
      await connecting?.catch(() => undefined);
      await client?.end();
      client = null;
    },
  };
}

const PROBE_SQL = `insert into service_settings (name, value) values ('${PROBED_AT_SETTING}', $1)
  on conflict (name) do update set value = excluded.value`;

readInt8AsNumber();
const { url, options, origin } = workerData as { url: string; options: string | undefined; origin: string };
const journal = connectionJournal(url, options, origin);

parentPort?.on("message", (request: JournalRequest) => {
  const { id, command } = request;
  const work: Promise<CommitOutcome | IdRanges | null> =
    command.kind === "commit"
      ? journal.commit(command.batch)
      : command.kind === "reserve"
        ? journal.reserveIds(command.table, command.count)
        : command.kind === "probe"
          ? journal.probe(command.atIso).then(() => null)
          : journal.close().then(() => null);
  work.then(
    (value) => {
      parentPort?.postMessage({ id, ok: true, value } satisfies JournalReply);
      if (command.kind === "close") parentPort?.close();
    },
    (error: unknown) => parentPort?.postMessage(failureReply(id, error)),
  );
});
