import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import type { Storage } from "../../src/store/storage.js";
import { transaction } from "../../src/store/transaction.js";
import { isStorageUnavailable } from "../../src/store/unavailable.js";
import { freshStorage } from "../helpers/service.js";
import { holdWriteLock } from "../helpers/sqlite-lock.js";

/**
 * A transaction or a write of the service's connection waiting for SQLite's
 * write lock while another connection holds it (the CLI, an operator's shell,
 * a backup writing): the wait is tried again off the event loop
 * (src/store/sqlite-lock-wait.ts),
 * so timers fire, reads answer and requests are served meanwhile; it goes
 * through once the lock is let go, and after 5 s fails as unavailable (503).
 */

/** How often a 5 ms timer fires while `work` runs: a blocked event loop fires none. */
async function timerTicksDuring(work: () => Promise<void>): Promise<number> {
  let ticks = 0;
  const ticking = setInterval(() => {
    ticks += 1;
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(ticking);
  }
  return ticks;
}

const count = async (storage: Storage) =>
  (await sql<{ n: number }>`select count(*) as n from t`.execute(storage.db)).rows[0]?.n;

describe("waiting for SQLite's write lock", () => {
  test("the event loop runs and reads answer while a transaction waits; it goes through once the lock is let go", async () => {
    const fresh = await freshStorage("sqlite");
    try {
      const { storage } = fresh;
      const { file } = storage.location as { file: string };
      await sql`create table t (id integer primary key)`.execute(storage.db);
      const letGo = holdWriteLock(file);
      let written = false;
      const writing = transaction(storage, async (tx) => {
        await sql`insert into t values (1)`.execute(tx);
        written = true;
      });
      try {
        const ticks = await timerTicksDuring(async () => {
          await sleep(300);
          assert.equal(await count(storage), 0, "a read answers while the write waits");
        });
        assert.equal(written, false);
        assert.ok(ticks >= 10, `timers fired ${ticks} times in 300 ms`);
      } finally {
        letGo();
      }
      await writing;
      assert.equal(await count(storage), 1);
    } finally {
      await fresh.dispose();
    }
  });

  test("a statement writing outside a transaction waits the same way; reads and transactions after it still run", async () => {
    const fresh = await freshStorage("sqlite");
    try {
      const { storage } = fresh;
      await sql`create table t (id integer primary key)`.execute(storage.db);
      const letGo = holdWriteLock((storage.location as { file: string }).file);
      const writing = sql`insert into t values (1)`.execute(storage.db);
      try {
        const ticks = await timerTicksDuring(() => sleep(300));
        assert.ok(ticks >= 10, `timers fired ${ticks} times in 300 ms`);
      } finally {
        letGo();
      }
      await writing;
      await transaction(storage, (tx) => sql`insert into t values (2)`.execute(tx));
      assert.equal(await count(storage), 2);
    } finally {
      await fresh.dispose();
    }
  });

  test("a lock held past 5 s fails the transaction SQLITE_BUSY, unavailable, having run none of its work", async () => {
    const fresh = await freshStorage("sqlite");
    try {
      const { storage } = fresh;
      const letGo = holdWriteLock((storage.location as { file: string }).file);
      let ran = false;
      const failed = await transaction(storage, async () => {
        ran = true;
      }).then(
        () => null,
        (error: unknown) => error,
      );
      letGo();
      assert.equal((failed as { code?: string }).code, "SQLITE_BUSY");
      assert.ok(isStorageUnavailable(failed));
      assert.equal(ran, false);
      await transaction(storage, async (tx) => {
        const [row] = (await sql<{ timeout: number }>`pragma busy_timeout`.execute(tx)).rows;
        assert.equal(row?.timeout, 5_000, "the connection's own wait is back for its other statements");
      });
    } finally {
      await fresh.dispose();
    }
  });
});
