import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { KeyedReads } from "../../src/store/keyed-reads.js";
import type { Storage } from "../../src/store/storage.js";
import { transaction } from "../../src/store/transaction.js";
import { BACKENDS, freshStorage, type TestStorage } from "../helpers/service.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Keyed reads (src/store/keyed-reads.ts): one statement per turn, and on SQLite none while nothing is written. */
for (const backend of BACKENDS) {
  describe(`keyed reads (${backend})`, () => {
    let fresh: TestStorage;
    let other: Storage;
    let statements = 0;
    let reads: KeyedReads<number, string>;

    before(async () => {
      fresh = await freshStorage(backend);
      other = await fresh.openAnother();
      await sql`create table items (id integer primary key, label text not null)`.execute(fresh.storage.db);
      await sql`insert into items (id, label) values (1, 'one'), (2, 'two'), (3, 'three')`.execute(fresh.storage.db);
      reads = new KeyedReads(fresh.storage, async (db, keys) => {
        statements++;
        const rows = await sql<{ id: number; label: string }>`select id, label from items where id in (${sql.join(
          keys,
        )})`.execute(db);
        return new Map(rows.rows.map((row) => [Number(row.id), row.label]));
      });
    });
    after(async () => {
      await other.close();
      await fresh.dispose();
    });

    const counted = async <T>(work: () => Promise<T>): Promise<{ value: T; statements: number }> => {
      const before = statements;
      const value = await work();
      return { value, statements: statements - before };
    };

    test("the keys asked in one turn are read with one statement, a missing one answered undefined", async () => {
      const { value, statements: used } = await counted(() =>
        Promise.all([1, 2, 2, 3, 4].map((id) => Promise.resolve(reads.get(id)))),
      );
      assert.deepEqual(value, ["one", "two", "two", "three", undefined]);
      assert.equal(used, 1);
    });

    test("a read sees what was committed before it was asked, through this connection or another", async () => {
      await sql`update items set label = 'uno' where id = 1`.execute(fresh.storage.db);
      assert.equal(await reads.get(1), "uno");
      await sql`update items set label = 'eins' where id = 1`.execute(other.db);
      // Another connection's commit is seen from the next turn of the event loop (as a request's arrival is).
      await nextTurn();
      assert.equal(await reads.get(1), "eins");
      await transaction(fresh.storage, async (tx) => {
        await sql`update items set label = 'un' where id = 1`.execute(tx);
      });
      assert.equal(await reads.get(1), "un");
    });

    test("a read in a caller's transaction sees its writes; the others do not until it commits", async () => {
      await transaction(fresh.storage, async (tx) => {
        await sql`update items set label = 'deux' where id = 2`.execute(tx);
        assert.equal(await reads.read(tx, 2), "deux");
      });
      assert.equal(await reads.get(2), "deux");
      await assert.rejects(
        transaction(fresh.storage, async (tx) => {
          await sql`update items set label = 'dos' where id = 2`.execute(tx);
          throw new Error("rolled back");
        }),
      );
      assert.equal(await reads.get(2), "deux");
    });

    test("a failed read fails each request that asked, and the next turn reads again", async () => {
      const failing = new KeyedReads<number, string>(fresh.storage, async () => {
        throw new Error("storage is away");
      });
      const asked = [failing.get(1), failing.get(2)];
      for (const answer of asked) await assert.rejects(Promise.resolve(answer), /storage is away/);
    });

    if (backend === "sqlite") {
      test("on SQLite, answers are kept while nothing is written by anyone", async () => {
        await reads.get(3);
        const kept = await counted(async () => [await reads.get(3), await reads.get(3)]);
        assert.deepEqual(kept, { value: ["three", "three"], statements: 0 });
        await sql`update items set label = 'drei' where id = 3`.execute(other.db);
        await nextTurn();
        assert.deepEqual(await counted(async () => reads.get(3)), { value: "drei", statements: 1 });
        await sql`update items set label = 'tres' where id = 3`.execute(fresh.storage.db);
        assert.deepEqual(await counted(async () => reads.get(3)), { value: "tres", statements: 1 });
      });
    }
  });
}
