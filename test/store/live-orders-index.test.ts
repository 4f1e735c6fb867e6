import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CompiledQuery } from "kysely";
import { ACTIVE } from "../../src/core/orders/status.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { LIVE_ORDERS_INDEX_STATUSES } from "../../src/store/migrations/0030_live_orders.js";
import { everyLiveOrder, liveOrdersOf } from "../../src/store/trading-state.js";
import { BACKENDS, freshStorage, type TestStorage } from "../helpers/service.js";
import { type ModelAccount, modelAccounts, restingOrder } from "../helpers/store-rows.js";

const NOW_MS = Date.parse("2026-03-10T14:00:00Z");
const ACCOUNTS = 20;
const ENDED_PER_ACCOUNT = 200;
const LIVE_PER_ACCOUNT = 5;

test("the live orders' index holds the statuses the order path calls live", () => {
  assert.deepEqual([...LIVE_ORDERS_INDEX_STATUSES].sort(), [...ACTIVE].sort());
});

/**
 * The two reads of live orders (every one at start, an account's when it is
 * loaded) find them through the partial index of live orders: only it still
 * indexes orders by account or status, so a read it did not fit would read
 * every order ever placed.
 */
for (const backend of BACKENDS) {
  describe(`the reads of live orders (${backend})`, () => {
    let fresh: TestStorage;
    let accounts: ModelAccount[];

    /** The query plan's text; on PostgreSQL with sequential scans priced out, so a usable index is used. */
    const plan = async (query: { compile(): CompiledQuery }): Promise<string> => {
      const compiled = query.compile();
      return fresh.storage.db.connection().execute(async (db) => {
        if (backend === "sqlite") {
          const rows = await db.executeQuery(
            CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
          );
          return JSON.stringify(rows.rows);
        }
        await db.executeQuery(CompiledQuery.raw("set enable_seqscan = off"));
        try {
          const rows = await db.executeQuery(
            CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]),
          );
          return JSON.stringify(rows.rows);
        } finally {
          await db.executeQuery(CompiledQuery.raw("reset enable_seqscan"));
        }
      });
    };

    before(async () => {
      fresh = await freshStorage(backend);
      await migrateToLatest(fresh.storage);
      accounts = await modelAccounts(fresh.storage, ACCOUNTS, NOW_MS);
      for (const account of accounts) {
        const ended = Array.from({ length: ENDED_PER_ACCOUNT }, () => ({
          ...restingOrder(account, NOW_MS),
          status: "Filled",
          closed_at: NOW_MS,
        }));
        const live = Array.from({ length: LIVE_PER_ACCOUNT }, () => restingOrder(account, NOW_MS));
        await fresh.storage.db
          .insertInto("orders")
          .values([...ended, ...live])
          .execute();
      }
    });
    after(async () => {
      await fresh?.dispose();
    });

    const everyLive = () => everyLiveOrder(fresh.storage.db);
    const ofAccounts = (ids: number[]) => liveOrdersOf(fresh.storage.db, ids);

    test("they answer the live orders only", async () => {
      assert.equal((await everyLive().execute()).length, ACCOUNTS * LIVE_PER_ACCOUNT);
      const [first, second] = accounts.map((account) => account.id);
      const rows = await ofAccounts([first as number, second as number]).execute();
      assert.equal(rows.length, 2 * LIVE_PER_ACCOUNT);
      assert.ok(rows.every((row) => row.status === "Working"));
    });

    test("both use the index of live orders", async () => {
      assert.match(await plan(everyLive()), /orders_live_idx/);
      assert.match(await plan(ofAccounts(accounts.slice(0, 3).map((account) => account.id))), /orders_live_idx/);
    });
  });
}
