import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { migrateTo, migrateToLatest } from "../../src/store/migrate.js";
import { BACKENDS, freshStorage } from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`0008 restates existing records under every commission plan (${backend})`, () => {
    test("strategies, trades and marks get their running totals from the fills", async () => {
      const fresh = await freshStorage(backend);
      try {
        const db = fresh.storage.db;
        await migrateTo(fresh.storage, "0007_discovery");
        await sql`insert into persons (email, first_name, last_name, role, created_at)
          values ('owner@example.com', 'Olga', 'Owner', 'person', 1)`.execute(db);
        await sql`insert into strategies (name, owner_person_id, is_private, starting_capital, cash, created_at, updated_at)
          values ('Old One', 1, 1, '100000', '99998', 1, 1)`.execute(db);
        await sql`insert into orders (strategy_id, symbol, symbol_type, order_type, side, open_close, tif, quantity,
          signal_type, status, posted_at, updated_at) values (1, 'AAPL', 'stock', 'market', 'buy', 'open', 'gtc', '100',
          1, 'Filled', 1, 1)`.execute(db);
        await sql`insert into trades (strategy_id, symbol, symbol_type, side, opened_at, closed_at, opened_quantity,
          closed_quantity, open_notional, close_notional, realized, commission, evaluated_at)
          values (1, 'AAPL', 'stock', 'buy', 10, 20, '100', '100', '10000', '10100', '100', '2', 20)`.execute(db);
        for (const [quantity, at] of [
          ["100", 10],
          ["100", 20],
        ] as const) {
          await sql`insert into fills (order_id, strategy_id, symbol, symbol_type, side, quantity, price, commission,
            realized, cash, usd_rate, position_after, filled_at, trade_id)
            values (1, 1, 'AAPL', 'stock', 'buy', ${quantity}, '100', '1', '0', '0', '1', '0', ${at}, 1)`.execute(db);
        }
        await sql`insert into equity_marks (strategy_id, day, marked_at, equity, cash, exposure, commissions_paid, benchmark)
          values (1, '2026-03-10', 15, '99999', '99999', '0', '1', '0')`.execute(db);
        await migrateToLatest(fresh.storage);
        // 0013 then moves the strategy's totals to its model account.
        const plans = async (table: "accounts" | "trades") =>
          JSON.parse(
            (await db.selectFrom(table).select("plan_commissions").executeTakeFirstOrThrow()).plan_commissions,
          );
        // Two fills of 100 shares: Default as paid ($1 each), Institutional $0.35 each (its minimum), None nothing.
        const both = { Default: "2", Institutional: "0.7", None: "0" };
        assert.deepEqual(await plans("accounts"), both);
        assert.deepEqual(await plans("trades"), both);
        const mark = await db.selectFrom("equity_marks").select("plan_commissions").executeTakeFirstOrThrow();
        assert.deepEqual(JSON.parse(mark.plan_commissions), { Default: "1", Institutional: "0.35", None: "0" });
      } finally {
        await fresh.dispose();
      }
    });
  });
}
