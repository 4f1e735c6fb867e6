import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { withSchemaChangeLock } from "../../src/store/migrate.js";
import { isStorageUnavailable } from "../../src/store/unavailable.js";
import { BACKENDS, freshStorage } from "../helpers/service.js";

/**
 * How long PostgreSQL connections wait for a lock another session holds
 * (src/store/pg-connect.ts): the pool's statements 5 s, then they fail as
 * unavailable (55P03, answered 503: test/http/storage-unavailable.test.ts);
 * schema changes under the migrations' lock without a limit, the connection
 * given back to the pool with its limit again.
 */

if (BACKENDS.includes("postgres")) {
  describe("PostgreSQL lock waits", () => {
    test("the pool's statements wait at most 5 s for a lock; schema changes wait without a limit, and give the limit back", async () => {
      const fresh = await freshStorage("postgres");
      try {
        const { db } = fresh.storage;
        const limit = async () =>
          (await sql<{ lock_timeout: string }>`show lock_timeout`.execute(db)).rows[0]?.lock_timeout;
        assert.equal(await limit(), "5s");
        const inside = await withSchemaChangeLock(
          db,
          async (connection) => (await sql<{ lock_timeout: string }>`show lock_timeout`.execute(connection)).rows[0],
        );
        assert.deepEqual(inside, { lock_timeout: "0" });
        // The pool's one idle connection is the one lent to the schema change: it has its limit again.
        const lent = await Promise.all(Array.from({ length: 8 }, () => limit()));
        assert.deepEqual(new Set(lent), new Set(["5s"]));

        await sql`create table held (id int)`.execute(db);
        const timedOut = await db.connection().execute(async (holder) => {
          await sql`begin`.execute(holder);
          await sql`lock table held in exclusive mode`.execute(holder);
          try {
            return await sql`insert into held values (1)`.execute(db).then(
              () => null,
              (error: unknown) => error,
            );
          } finally {
            await sql`rollback`.execute(holder);
          }
        });
        assert.equal((timedOut as { code?: string }).code, "55P03");
        assert.ok(isStorageUnavailable(timedOut));
      } finally {
        await fresh.dispose();
      }
    });
  });
}
