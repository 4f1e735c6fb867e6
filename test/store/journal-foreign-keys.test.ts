import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { migrateToLatest } from "../../src/store/migrate.js";
import { JOURNAL_KEYS_DROPPED } from "../../src/store/migrations/0031_journal_foreign_keys.js";
import type { Storage } from "../../src/store/storage.js";
import { consumersCaughtUp } from "../helpers/outbox.js";
import { BACKENDS, freshStorage, populate, setClock, startTestService } from "../helpers/service.js";
import { cancelOrder, MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/** The columns of `table` that reference another table, as the database states them. */
async function referencingColumns(storage: Storage, table: string): Promise<string[]> {
  if (storage.backend === "sqlite") {
    const rows = await sql<{ from: string }>`select "from" from pragma_foreign_key_list(${table})`.execute(storage.db);
    return rows.rows.map((row) => row.from).sort();
  }
  const rows = await sql<{ column: string }>`
    select a.attname as column
    from pg_constraint c
    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
    where c.contype = 'f' and c.conrelid = to_regclass(${table})`.execute(storage.db);
  return rows.rows.map((row) => row.column).sort();
}

/** Rows of the journal's tables that name an account, strategy, order or trade that is not there. */
async function orphans(storage: Storage): Promise<{ orders: number; events: number; fills: number }> {
  const { rows } = await sql<{ orders: number | string; events: number | string; fills: number | string }>`
    select
      (select count(*) from orders o
        where not exists (select 1 from accounts a where a.id = o.account_id)
           or not exists (select 1 from strategies s where s.id = o.strategy_id)) as orders,
      (select count(*) from order_events e
        where not exists (select 1 from accounts a where a.id = e.account_id)) as events,
      (select count(*) from fills f
        where not exists (select 1 from accounts a where a.id = f.account_id)
           or not exists (select 1 from orders o where o.id = f.order_id)
           or not exists (select 1 from strategies s where s.id = f.strategy_id)
           or (f.trade_id is not null and not exists (select 1 from trades t where t.id = f.trade_id))) as fills
  `.execute(storage.db);
  const [row] = rows;
  assert.ok(row);
  return { orders: Number(row.orders), events: Number(row.events), fills: Number(row.fills) };
}

for (const backend of BACKENDS) {
  describe(`the journal's foreign keys (${backend})`, () => {
    test(
      backend === "postgres"
        ? "the rows every order writes check none on PostgreSQL; the orders' references to orders stay"
        : "SQLite keeps every one",
      async () => {
        const fresh = await freshStorage(backend);
        try {
          await migrateToLatest(fresh.storage);
          for (const [table, dropped] of Object.entries(JOURNAL_KEYS_DROPPED)) {
            const kept = await referencingColumns(fresh.storage, table);
            for (const column of dropped)
              assert.equal(kept.includes(column), backend === "sqlite", `${table}.${column}`);
          }
          assert.deepEqual(await referencingColumns(fresh.storage, "orders"), [
            ...(backend === "sqlite" ? ["account_id"] : []),
            "cancel_replace_id",
            "oca_group_id",
            "parent_id",
            ...(backend === "sqlite" ? ["strategy_id"] : []),
          ]);
        } finally {
          await fresh.dispose();
        }
      },
    );

    test("what trading writes names only rows that are there", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const { keys } = await populate(service);
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, keys.personA);
        await setQuote(service, "AAPL", 200, 200.05);
        await placed(service, keys.personA, stockOrder(strategyId, "AAPL", "buy", 10));
        await placed(service, keys.personA, stockOrder(strategyId, "AAPL", "sell", 4));
        const resting = await placed(
          service,
          keys.personA,
          stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 100 }),
        );
        assert.equal((await cancelOrder(service, keys.personA, strategyId, resting.SignalId)).status, 200);
        await consumersCaughtUp([service]);
        const { storage } = service;
        const fills = await storage.db.selectFrom("fills").select("id").execute();
        assert.equal(fills.length, 2);
        assert.deepEqual(await orphans(storage), { orders: 0, events: 0, fills: 0 });
      } finally {
        await service.close();
      }
    });
  });
}
