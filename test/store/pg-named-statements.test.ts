import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { namedStatementPool } from "../../src/store/pg-named-statements.js";
import { BACKENDS, dropTestSchema } from "../helpers/service.js";

interface Items {
  items: { id: number; label: string; note?: string | null };
}

/**
 * The PostgreSQL pool that names Kysely's statements (src/store/pg-named-statements.ts),
 * over one connection so that what it prepared can be read off pg_prepared_statements.
 */
describe("named statements on PostgreSQL", { skip: !BACKENDS.includes("postgres") }, () => {
  const url = process.env.DATABASE_URL as string;
  const schema = `t_named_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let db: Kysely<Items>;

  const open = (perConnection?: number) =>
    new Kysely<Items>({
      dialect: new PostgresDialect({
        pool: namedStatementPool(
          new pg.Pool({ connectionString: url, max: 1, options: `-c search_path=${schema}` }),
          perConnection,
        ),
      }),
    });
  const prepared = async (on: Kysely<Items>) =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(on)).rows.map(
      (row) => row.statement,
    );

  before(async () => {
    const admin = new pg.Client(url);
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    db = open();
    await sql`create table items (id integer primary key, label text not null)`.execute(db);
    await db
      .insertInto("items")
      .values([
        { id: 1, label: "one" },
        { id: 2, label: "two" },
      ])
      .execute();
  });
  after(async () => {
    await dropTestSchema(db, schema);
    await db.destroy();
  });

  test("a read is prepared once under its name and answers each run; begin, commit and schema changes are not", async () => {
    const read = (id: number) => db.selectFrom("items").select("label").where("id", "=", id).executeTakeFirst();
    assert.deepEqual([await read(1), await read(2), await read(3)], [{ label: "one" }, { label: "two" }, undefined]);
    await db.transaction().execute((tx) => tx.selectFrom("items").select("id").where("id", "=", 1).execute());
    const statements = await prepared(db);
    assert.equal(statements.filter((s) => s.includes(`select "label" from "items" where "id" = $1`)).length, 1);
    assert.ok(
      statements.every((s) => /^(select|insert|update|delete|with)\b/i.test(s)),
      statements.join("\n"),
    );
  });

  test("after a schema change, a statement prepared before it reads the table's new shape", async () => {
    const all = () => db.selectFrom("items").selectAll().where("id", "=", 1).executeTakeFirst();
    assert.deepEqual(await all(), { id: 1, label: "one" });
    await sql`alter table items add column note text`.execute(db);
    // Run under its old name, the statement would fail: cached plan must not change result type.
    assert.deepEqual(await all(), { id: 1, label: "one", note: null });
  });

  test("a schema change made elsewhere fails a statement prepared before it once; it reads the new shape after", async () => {
    const all = () => db.selectFrom("items").selectAll().where("id", "=", 2).executeTakeFirst();
    assert.deepEqual(await all(), { id: 2, label: "two", note: null });
    const elsewhere = open();
    try {
      await sql`alter table items drop column note`.execute(elsewhere);
    } finally {
      await elsewhere.destroy();
    }
    await assert.rejects(all(), /cached plan must not change result type/);
    assert.deepEqual(await all(), { id: 2, label: "two" });
  });

  test("statements of more than 100 parameters, and past the connection's limit, run unnamed", async () => {
    const limited = open(2);
    try {
      const ids = Array.from({ length: 101 }, (_, i) => i + 1);
      const long = await limited.selectFrom("items").select("id").where("id", "in", ids).orderBy("id").execute();
      assert.deepEqual(long, [{ id: 1 }, { id: 2 }]);
      for (const column of ["id", "label", "id as again"] as const)
        assert.equal((await limited.selectFrom("items").select(column).where("id", "=", 2).execute()).length, 1);
      const statements = await prepared(limited);
      assert.equal(statements.length, 2, statements.join("\n"));
      assert.ok(statements.every((s) => !s.includes("in (")));
    } finally {
      await limited.destroy();
    }
  });
});
