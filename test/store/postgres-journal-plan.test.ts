import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import type { JournalBatch } from "../../src/store/journal/batch.js";
import { fullWriteOf, SESSION_SETTINGS } from "../../src/store/journal/postgres-journal-statements.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { BACKENDS, freshStorage, type TestStorage } from "../helpers/service.js";
import { accountCommit, journalBatch, modelAccounts, restingOrder } from "../helpers/store-rows.js";

const ORDERS = 20_000;
const CHANGED = 500;
const NOW_MS = Date.parse("2026-03-10T14:00:00Z");

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly Plans?: readonly PlanNode[];
}

/** The tables the plan reads whole. */
function scannedTables(node: PlanNode): string[] {
  const own = node["Node Type"] === "Seq Scan" ? [node["Relation Name"] ?? "?"] : [];
  return [...own, ...(node.Plans ?? []).flatMap(scannedTables)];
}

/**
 * The PostgreSQL journal's write (its statement writing every table, of which
 * each batch's statement is a part) finds every row it changes by key, whatever
 * the planner believes of the table: here 20,000 orders whose statistics were
 * never gathered (autovacuum is off for the table, as it would not have run
 * yet after a bulk load), and a batch that changes 500 of them.
 */
describe("the PostgreSQL journal's write plan", { skip: !BACKENDS.includes("postgres") }, () => {
  let fresh: TestStorage;
  let schema: string;
  let batch: JournalBatch;

  const explain = async (settings: string | null): Promise<string[]> => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      if (settings) await client.query(settings);
      const write = fullWriteOf(batch, "plan-test");
      const result = await client.query({ text: `explain (format json) ${write.text}`, values: write.values });
      const [{ Plan: plan }] = result.rows[0]["QUERY PLAN"] as [{ Plan: PlanNode }];
      return scannedTables(plan);
    } finally {
      await client.end();
    }
  };

  before(async () => {
    fresh = await freshStorage("postgres");
    const { storage } = fresh;
    await migrateToLatest(storage);
    schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db)).rows[0]
      ?.schema as string;
    await sql`alter table orders set (autovacuum_enabled = false)`.execute(storage.db);
    const [account] = await modelAccounts(storage, 1, NOW_MS);
    if (!account) throw new Error("no model account");
    for (let first = 0; first < ORDERS; first += 1_000) {
      await storage.db
        .insertInto("orders")
        .values(Array.from({ length: 1_000 }, () => restingOrder(account, NOW_MS)))
        .execute();
    }
    const changed = await storage.db.selectFrom("orders").selectAll().orderBy("id").limit(CHANGED).execute();
    batch = journalBatch({
      accounts: [accountCommit(account, 0, 0)],
      changedOrders: changed.map((order) => ({ ...order, status: "Canceled", closed_at: NOW_MS })),
    });
  });
  after(async () => {
    await fresh?.dispose();
  });

  test("left to its estimates the planner reads all the orders to change 500 of them", async () => {
    assert.ok((await explain(null)).includes("orders"));
  });

  test("the journal's session finds each row by key: no table is read whole", async () => {
    assert.deepEqual(await explain(SESSION_SETTINGS), []);
  });

  test("the journal's session plans the write once, generically, and that plan also reads no table whole", async () => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      await client.query(SESSION_SETTINGS);
      const write = fullWriteOf(batch, "plan-test");
      await client.query(`prepare journal_write as ${write.text}`);
      // A prepared statement's plan is explained by EXECUTE, whose arguments are literals.
      const values = write.values.map((value) => client.escapeLiteral(literalOf(value)));
      const result = await client.query(`explain (format json) execute journal_write(${values.join(", ")})`);
      const [{ Plan: plan }] = result.rows[0]["QUERY PLAN"] as [{ Plan: PlanNode }];
      assert.deepEqual(scannedTables(plan), []);
      const planned = await client.query<{ generic_plans: number; custom_plans: number }>(
        "select generic_plans, custom_plans from pg_prepared_statements where name = 'journal_write'",
      );
      assert.deepEqual(planned.rows, [{ generic_plans: 1, custom_plans: 0 }]);
    } finally {
      await client.end();
    }
  });
});

/** A parameter as PostgreSQL reads it in text: an array literal for arrays. */
function literalOf(value: unknown): string {
  if (!Array.isArray(value)) return String(value);
  const element = (item: unknown) =>
    item === null || item === undefined ? "NULL" : `"${String(item).replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  return `{${value.map(element).join(",")}}`;
}
