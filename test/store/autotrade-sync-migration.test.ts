import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { migrateTo, migrateToLatest } from "../../src/store/migrate.js";
import { BACKENDS, freshStorage } from "../helpers/service.js";

const markets = [
  "StocksUSA",
  "StocksEurope",
  "OptionsUSA",
  "OptionsEurope",
  "FuturesUSA",
  "FuturesEurope",
  "FuturesAsia",
  "Forex",
];
const flags = (on: boolean) => JSON.stringify(Object.fromEntries(markets.map((m) => [m, on])));

for (const backend of BACKENDS) {
  describe(`0029 turns AutoSync's markets on for setups started with DoNotJoinOpenPositions (${backend})`, () => {
    test("their flags, all off before, are all on; other setups keep theirs", async () => {
      const fresh = await freshStorage(backend);
      try {
        const db = fresh.storage.db;
        await migrateTo(fresh.storage, "0024_confirmations");
        await sql`insert into persons (email, first_name, last_name, role, created_at)
          values ('follower@example.com', 'Fay', 'Follower', 'person', 1)`.execute(db);
        await sql`insert into strategies (name, owner_person_id, is_private, starting_capital, created_at, updated_at)
          values ('Followed', 1, 0, '100000', 1, 1)`.execute(db);
        await sql`insert into accounts (kind, strategy_id, cash, starting_cash, commission_plan, created_at)
          values ('broker', null, '0', '0', 'Default', 1)`.execute(db);
        const [account] = (await sql<{ id: number }>`select id from accounts where kind = 'broker'`.execute(db)).rows;
        const setup = (doNotJoin: number, syncToOpen: string, key: string) =>
          sql`insert into autotrade_setups (account_id, person_id, broker_id, strategy_id, site_id, status, live_key,
            scaling_percentage, is_autotrade_enabled, is_sync_enabled, is_confirmation_needed, approved, settings,
            sync_to_open, last_sync, do_not_join_open_positions, started_at, updated_at)
            values (${account?.id}, 1, 1, 1, null, 'active', ${key}, '100', 1, 1, 0, 1, '{}', ${syncToOpen}, '{}',
            ${doNotJoin}, 1, 1)`.execute(db);
        await setup(1, flags(false), "a");
        await setup(0, JSON.stringify({ ...JSON.parse(flags(true)), Forex: false }), "b");
        await migrateToLatest(fresh.storage);
        const rows = await db
          .selectFrom("autotrade_setups")
          .select(["live_key", "sync_to_open"])
          .orderBy("id")
          .execute();
        assert.deepEqual(JSON.parse(rows[0]?.sync_to_open ?? ""), JSON.parse(flags(true)));
        assert.equal(JSON.parse(rows[1]?.sync_to_open ?? "").Forex, false);
      } finally {
        await fresh.dispose();
      }
    });
  });
}
