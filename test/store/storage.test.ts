import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { migrateTo, migrateToLatest } from "../../src/store/migrate.js";
import { writeSetting } from "../../src/store/settings.js";
import { transaction } from "../../src/store/transaction.js";
import { BACKENDS, freshStorage, type TestStorage, until } from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`storage (${backend})`, () => {
    let fresh: TestStorage;
    before(async () => {
      fresh = await freshStorage(backend);
    });
    after(() => fresh.dispose());

    test("migrations apply once and are a no-op afterwards", async () => {
      assert.deepEqual(await migrateToLatest(fresh.storage), [
        "0001_platform",
        "0002_people",
        "0003_strategies",
        "0004_orders",
        "0005_trades",
        "0006_equity",
        "0007_discovery",
        "0008_plan_commissions",
        "0009_local_ids",
        "0010_system_settings",
        "0011_desired_positions_mode",
        "0012_subscriptions",
        "0013_accounts",
        "0014_strategy_records",
        "0015_sent_symbols",
        "0016_idempotency_keys",
        "0017_commerce",
        "0018_plans",
        "0020_whitelabel",
        "0021_checkout",
        "0022_autotrade",
        "0023_simulated_broker",
        "0024_confirmations",
        "0025_copy_forms",
        "0026_autotrade_admin",
        "0027_rule575",
        "0027_strategy_mux",
        "0027_watchlists",
        "0028_account_orders",
        "0029_autotrade_sync",
        "0030_live_orders",
        "0031_journal_foreign_keys",
      ]);
      assert.deepEqual(await migrateToLatest(fresh.storage), []);
    });

    test("concurrent migrations from several starts agree", async () => {
      const results = await Promise.all([migrateToLatest(fresh.storage), migrateToLatest(fresh.storage)]);
      assert.deepEqual(results, [[], []]);
    });

    test("a failure inside a transaction rolls all of it back", async () => {
      const db = fresh.storage.db;
      await assert.rejects(
        transaction(fresh.storage, async (tx) => {
          await tx
            .insertInto("sites")
            .values({ kind: "geo", name: "One", domain: null, geo_site_id: null, created_at: 1 })
            .execute();
          await tx
            .insertInto("sites")
            .values({ kind: "geo", name: "Two", domain: null, geo_site_id: null, created_at: 1 })
            .execute();
          throw new Error("fails half-way");
        }),
        /fails half-way/,
      );
      const count = await db
        .selectFrom("sites")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 0);
    });

    test("committed work is visible afterwards, with exact integer times", async () => {
      const at = Date.parse("2026-11-22T10:00:00.123Z");
      const id = await transaction(fresh.storage, async (tx) => {
        const row = await tx
          .insertInto("sites")
          .values({ kind: "whitelabel", name: "Kept", domain: "kept.example.com", geo_site_id: null, created_at: at })
          .returning("id")
          .executeTakeFirstOrThrow();
        return row.id;
      });
      const row = await fresh.storage.db.selectFrom("sites").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
      assert.equal(typeof row.id, "number");
      assert.equal(row.created_at, at);
      assert.equal(row.name, "Kept");
    });

    test("0002 gives people made before it folded names and a UserToken", async () => {
      const older = await freshStorage(backend);
      try {
        assert.deepEqual(await migrateTo(older.storage, "0001_platform"), ["0001_platform"]);
        await sql`insert into persons (email, first_name, last_name, role, created_at)
          values ('op@example.com', 'Ölaf', 'ÉMILE', 'admin', 1)`.execute(older.storage.db);
        assert.deepEqual(await migrateToLatest(older.storage), [
          "0002_people",
          "0003_strategies",
          "0004_orders",
          "0005_trades",
          "0006_equity",
          "0007_discovery",
          "0008_plan_commissions",
          "0009_local_ids",
          "0010_system_settings",
          "0011_desired_positions_mode",
          "0012_subscriptions",
          "0013_accounts",
          "0014_strategy_records",
          "0015_sent_symbols",
          "0016_idempotency_keys",
          "0017_commerce",
          "0018_plans",
          "0020_whitelabel",
          "0021_checkout",
          "0022_autotrade",
          "0023_simulated_broker",
          "0024_confirmations",
          "0025_copy_forms",
          "0026_autotrade_admin",
          "0027_rule575",
          "0027_strategy_mux",
          "0027_watchlists",
          "0028_account_orders",
          "0029_autotrade_sync",
          "0030_live_orders",
          "0031_journal_foreign_keys",
        ]);
        const person = await older.storage.db.selectFrom("persons").selectAll().executeTakeFirstOrThrow();
        assert.equal(person.first_name_folded, "ölaf");
        assert.equal(person.last_name_folded, "émile");
        assert.match(person.user_token ?? "", /^[A-Za-z0-9_-]{32}$/);
      } finally {
        await older.dispose();
      }
    });

    if (backend === "sqlite") {
      test("SQLite runs in WAL mode with durable (FULL) commits", async () => {
        const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(fresh.storage.db);
        assert.equal(mode.rows[0]?.journal_mode, "wal");
        const sync = await sql<{ synchronous: number }>`pragma synchronous`.execute(fresh.storage.db);
        assert.equal(sync.rows[0]?.synchronous, 2);
      });

      test("data_version moves when another connection commits, not when this one does", async () => {
        const dataVersion = fresh.storage.dataVersion as () => number;
        const other = await fresh.openAnother();
        try {
          const write = (storage: typeof other, name: string) =>
            transaction(storage, (tx) => writeSetting(tx, name, String(Math.random())));
          const before = dataVersion();
          await write(fresh.storage, "ours");
          assert.equal(dataVersion(), before);
          await write(other, "theirs");
          const after = dataVersion();
          assert.notEqual(after, before);
          assert.equal(dataVersion(), after, "it stays until the next commit elsewhere");
        } finally {
          await other.close();
        }
      });

      test("a read at once answers what is committed, and nothing while a transaction of ours is open", async () => {
        const readAtOnce = fresh.storage.readAtOnce as NonNullable<typeof fresh.storage.readAtOnce>;
        const text = "select value from service_settings where name = ?";
        await transaction(fresh.storage, (tx) => writeSetting(tx, "read_at_once", "before"));
        assert.deepEqual(readAtOnce(text, ["read_at_once"]), { row: { value: "before" } });
        assert.deepEqual(readAtOnce(text, ["no_such_setting"]), { row: undefined });
        await transaction(fresh.storage, async (tx) => {
          await writeSetting(tx, "read_at_once", "uncommitted");
          assert.equal(readAtOnce(text, ["read_at_once"]), null, "it would see the uncommitted write");
        });
        assert.deepEqual(readAtOnce(text, ["read_at_once"]), { row: { value: "uncommitted" } });
      });
    }

    if (backend === "postgres") {
      test("an idle connection the server ends (a restart, an administrator) is let go: the process lives on and the next query opens another", async () => {
        const storage = await fresh.openAnother();
        try {
          const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(storage.db)).rows[0]?.pid;
          assert.ok(pid, "the pool's connection, idle once it has answered");
          const names = await sql<{ name: string }>`
            select application_name as name from pg_stat_activity where pid = ${pid}`.execute(fresh.storage.db);
          assert.match(names.rows[0]?.name ?? "", /^strategy-hub /, "named for operators");
          await sql`select pg_terminate_backend(${pid})`.execute(fresh.storage.db);
          await until(
            async () =>
              (await sql`select 1 from pg_stat_activity where pid = ${pid}`.execute(fresh.storage.db)).rows.length ===
              0,
          );
          // The server's goodbye reaches the idle connection's socket: it must not end this process.
          await new Promise((resolve) => setTimeout(resolve, 50));
          const again = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(storage.db)).rows[0]?.pid;
          assert.ok(again !== undefined && again !== pid, "another connection");
        } finally {
          await storage.close();
        }
      });

      test("a lost LISTEN connection comes back by itself, telling its listener; closing storage ends it", async () => {
        const storage = await fresh.openAnother();
        const heard: string[] = [];
        const states: boolean[] = [];
        const channel = "strategy_hub_test";
        const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(storage.db)).rows[0]?.s;
        const listen = storage.listen as NonNullable<typeof storage.listen>;
        await listen(
          channel,
          (payload) => heard.push(payload),
          (listening) => states.push(listening),
        );
        const notify = (payload: string) => sql`select pg_notify(${channel}, ${payload})`.execute(fresh.storage.db);
        const listeners = () => sql<{ pid: number }>`
          select pid from pg_stat_activity
          where application_name = ${`strategy-hub listener ${schema}`} and query = ${`listen ${channel}`}`;
        try {
          await notify("first");
          await until(() => heard.length === 1);
          const [listener] = (await listeners().execute(fresh.storage.db)).rows;
          assert.ok(listener);
          await sql`select pg_terminate_backend(${listener.pid})`.execute(fresh.storage.db);
          await until(() => states.length === 2);
          assert.deepEqual(states, [false, true]);
          await notify("after");
          await until(() => heard.length === 2);
          assert.deepEqual(heard, ["first", "after"]);
        } finally {
          await storage.close();
        }
        await until(async () => (await listeners().execute(fresh.storage.db)).rows.length === 0);
        assert.deepEqual(states, [false, true], "a close is no loss");
      });
    }
  });
}
