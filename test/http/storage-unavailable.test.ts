import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { serviceLogger } from "../../src/log.js";
import { openStorage } from "../../src/store/storage.js";
import {
  approvalStatus,
  follower,
  formTokenOf,
  openPage,
  requested,
  startBody,
  submitForm,
} from "../helpers/approvals.js";
import {
  BACKENDS,
  type CallResult,
  dropTestSchema,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { holdWriteLock } from "../helpers/sqlite-lock.js";
import { activeOrders, MARKET_OPEN, newOrder, newStrategy, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * Storage that cannot take writes for a while, as a running service meets it:
 * on SQLite another writer (an operator's shell, a backup) holding the
 * database's write lock past the service's wait; on PostgreSQL a full disk,
 * which PostgreSQL reports as SQLSTATE 53100 (disk_full), raised here by a
 * trigger exactly as the server raises it when a table cannot grow. Requests
 * answer 503 with Retry-After, in each API's error shape and without the
 * storage's own words; nothing is written; once storage takes writes again
 * the same requests go through.
 */

const RETRY_AFTER = "5";
const STORAGE_WORDS = /database is locked|SQLITE|No space left|could not extend/;

/** The tables the scenarios write, whose growth PostgreSQL refuses. */
const TABLES = ["orders", "strategies", "autotrade_approvals"];

/** Makes storage refuse writes (on PostgreSQL, to `tables`) until the answered function is called. */
async function storageRefusingWrites(service: TestService, tables = TABLES): Promise<() => Promise<void>> {
  const { location } = service.storage;
  if (location.backend === "sqlite") {
    const letGo = holdWriteLock(location.file);
    return async () => letGo();
  }
  const db = service.storage.db;
  await sql`create function disk_full() returns trigger language plpgsql as $$
      begin raise exception 'could not extend file: No space left on device' using errcode = 'disk_full'; end $$`.execute(
    db,
  );
  for (const table of tables) {
    await sql
      .raw(`create trigger disk_full before insert or update on ${table} for each row execute function disk_full()`)
      .execute(db);
  }
  return async () => {
    for (const table of tables) await sql.raw(`drop trigger disk_full on ${table}`).execute(db);
    await sql`drop function disk_full()`.execute(db);
  };
}

/** A TCP way to PostgreSQL that can become a black hole: connections accepted and never answered, as a dead host behind a firewall. */
async function passageTo(url: string) {
  const target = new URL(url);
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("error", () => undefined);
    client.on("close", () => sockets.delete(client));
    if (!open) return;
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on("error", end);
    upstream.on("close", end);
    client.on("close", end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const cut = (nowOpen: boolean) => {
    open = nowOpen;
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: Object.assign(new URL(url), { hostname: "127.0.0.1", port: String(port) }).href,
    blackHole: () => cut(false),
    reopen: () => cut(true),
    close: async () => {
      cut(false);
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Fails the test rather than waiting for ever on an answer that does not come. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function assertUnavailable(r: CallResult): void {
  assert.equal(r.status, 503, r.text);
  assert.equal(r.headers["retry-after"], RETRY_AFTER);
  assert.equal(r.json.Results, null);
  assert.equal(r.json.ResponseStatus.ErrorCode, "503");
  assert.equal(r.json.ResponseStatus.Message, "ServiceUnavailable");
  const [entry] = r.json.ResponseStatus.Errors;
  assert.equal(entry.ErrorCode, "1503");
  assert.deepEqual(entry.Meta, { RetryAfterSeconds: Number(RETRY_AFTER) });
  assert.doesNotMatch(r.text, STORAGE_WORDS, "the storage's own words stay in the log");
}

if (BACKENDS.includes("postgres")) {
  describe("PostgreSQL that stops answering (a dead host behind a black hole)", () => {
    test("requests answer 503 in seconds instead of hanging, and go through once it answers again", async () => {
      const direct = process.env.DATABASE_URL as string;
      const passage = await passageTo(direct);
      const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
      const storage = await openStorage({ databaseUrl: passage.url, dataDir: "", pgSchema: schema });
      const service = await startTestService("postgres", {
        marketFeed: { kind: "manual" },
        storage: {
          storage,
          env: { DATABASE_URL: passage.url, PGOPTIONS: `-c search_path=${schema}` },
          openAnother: () => openStorage({ databaseUrl: passage.url, dataDir: "", pgSchema: schema }),
          async dispose() {
            await storage.close();
            const cleanup = await openStorage({ databaseUrl: direct, dataDir: "" });
            try {
              await dropTestSchema(cleanup.db, schema);
            } finally {
              await cleanup.close();
            }
          },
        },
      });
      try {
        const key = (await populate(service)).keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        const resting = stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 150 });
        assert.equal((await newOrder(service, key, resting)).status, 200);

        passage.blackHole();
        assertUnavailable(await within(30_000, "an order", newOrder(service, key, resting)));
        assertUnavailable(
          await within(
            30_000,
            "AddStrategy",
            service.call("GEN", "POST", "/Strategies/AddStrategy", {
              key,
              body: { StrategyName: "In the dark", StartingCapital: 100_000 },
            }),
          ),
        );

        passage.reopen();
        assert.equal((await newOrder(service, key, resting)).status, 200);
        assert.equal((await activeOrders(service, key, strategyId)).length, 2);
      } finally {
        passage.reopen();
        await service.close();
        await passage.close();
      }
    });
  });
}

for (const backend of BACKENDS) {
  describe(`storage that cannot take writes (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    const logged: { msg: string; suppressed?: number }[] = [];
    before(async () => {
      service = await startTestService(backend, {
        marketFeed: { kind: "manual" },
        logger: serviceLogger("error", { write: (line: string) => logged.push(JSON.parse(line)) }),
      });
      population = await populate(service);
      key = population.keys.personA;
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 200, 200.05);
    });
    after(() => service.close());

    const addStrategy = () =>
      service.call("GEN", "POST", "/Strategies/AddStrategy", {
        key,
        body: { StrategyName: "Waits for storage", StartingCapital: 100_000 },
      });
    const submitSignal = (systemid: number) =>
      service.call("LEGACY", "POST", "/world/apiv3/submitSignal", {
        key: null,
        body: {
          apikey: key,
          systemid,
          signal: { action: "BTO", quant: 3, symbol: "AAPL", typeofsymbol: "stock", limit: 150, duration: "GTC" },
        },
      });
    const strategiesNamed = async (name: string) =>
      (await service.storage.db.selectFrom("strategies").select("id").where("name", "=", name).execute()).length;

    test("orders, signals and other writes answer 503 with Retry-After, write nothing, and go through once storage is back", async () => {
      const first = await newStrategy(service, key, 100_000, "First");
      const second = await newStrategy(service, key, 100_000, "Second");
      const resting = (strategyId: number) => stockOrder(strategyId, "AAPL", "buy", 5, { OrderType: "2", Limit: 150 });
      const keyed = { "Idempotency-Key": `unavailable-${backend}` };

      const storageBack = await storageRefusingWrites(service);
      let answers: CallResult[];
      try {
        // Together: the two orders share a batch, which fails whole.
        answers = await Promise.all([
          newOrder(service, key, resting(first)),
          service.call("GEN", "POST", "/Strategies/NewStrategyOrder", {
            key,
            body: { Order: resting(second) },
            headers: keyed,
          }),
          submitSignal(first),
          addStrategy(),
        ]);
      } finally {
        await storageBack();
      }
      const [order, keyedOrder, signal, strategy] = answers as [CallResult, CallResult, CallResult, CallResult];
      assertUnavailable(order);
      assertUnavailable(keyedOrder);
      assertUnavailable(strategy);
      assert.equal(signal.status, 503, signal.text);
      assert.equal(signal.headers["retry-after"], RETRY_AFTER);
      assert.equal(signal.json.ok, 0);
      assert.equal(signal.json.error.title, "Service unavailable");
      assert.doesNotMatch(signal.text, STORAGE_WORDS);

      // The log says each kind of failure once, not once a request (src/outage-lines.ts).
      const failures = logged.filter((line) => /storage is unavailable/.test(line.msg)).map((line) => line.msg);
      assert.deepEqual([...failures].sort(), [
        "legacy command failed: storage is unavailable",
        "operation failed: storage is unavailable",
      ]);
      assert.deepEqual(await activeOrders(service, key, first), [], "no order or signal was placed");
      assert.deepEqual(await activeOrders(service, key, second), []);
      assert.equal(await strategiesNamed("Waits for storage"), 0);

      // Sent again, each goes through; the keyed order runs (its key was not taken by the failure).
      assert.equal((await newOrder(service, key, resting(first))).status, 200);
      const again = await service.call("GEN", "POST", "/Strategies/NewStrategyOrder", {
        key,
        body: { Order: resting(second) },
        headers: keyed,
      });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers["idempotent-replayed"], undefined);
      assert.equal((await submitSignal(first)).json.ok, 1);
      assert.equal((await addStrategy()).status, 200);
      assert.equal((await activeOrders(service, key, first)).length, 2);
      assert.equal((await activeOrders(service, key, second)).length, 1);
      assert.equal(await strategiesNamed("Waits for storage"), 1);
    });

    test("readiness: 503 naming the journal that cannot write while reads still answer, ready again once storage takes writes", async () => {
      const readyz = () => service.call("GEN", "GET", "/readyz", { key: null });
      assert.equal((await readyz()).status, 200);
      // The journal's probe writes a service setting.
      const storageBack = await storageRefusingWrites(service, ["service_settings"]);
      let refused: CallResult;
      try {
        refused = await readyz();
      } finally {
        await storageBack();
      }
      assert.equal(refused.status, 503, refused.text);
      const { status, checks } = refused.json;
      assert.equal(status, "not ready");
      assert.equal(checks.storage, "ok", "reads still answer");
      assert.equal(checks.migrations, "ok");
      // SQLite's journal waits for the other writer's lock past readiness's patience; PostgreSQL refuses the row.
      assert.equal(
        checks.journal,
        backend === "sqlite" ? "cannot write: no answer within 2000 ms" : "cannot write (53100)",
      );
      assert.doesNotMatch(refused.text, STORAGE_WORDS, "the storage's own words stay in the log");
      const ready = await readyz();
      assert.equal(ready.status, 200, ready.text);
      assert.equal(ready.json.checks.journal, "ok");
    });

    if (backend === "postgres") {
      test("a table another session keeps locked: the order waits 5 s for it, answers 503, and goes through once the lock is let go", async () => {
        const strategyId = await newStrategy(service, key, 100_000, "Locked Out");
        const other = await service.storage.db.connection().execute(async (db) => {
          await sql`begin`.execute(db);
          await sql`lock table orders in exclusive mode`.execute(db);
          try {
            return await newOrder(
              service,
              key,
              stockOrder(strategyId, "AAPL", "buy", 2, { OrderType: "2", Limit: 150 }),
            );
          } finally {
            await sql`rollback`.execute(db);
          }
        });
        assertUnavailable(other);
        assert.deepEqual(await activeOrders(service, key, strategyId), []);
        assert.equal(
          (await newOrder(service, key, stockOrder(strategyId, "AAPL", "buy", 2, { OrderType: "2", Limit: 150 })))
            .status,
          200,
        );
      });
    }

    if (backend === "postgres") {
      test("a table another session keeps locked, written through the pool: AddStrategy waits 5 s for it, answers 503, and goes through after", async () => {
        const other = await service.storage.db.connection().execute(async (db) => {
          await sql`begin`.execute(db);
          await sql`lock table strategies in exclusive mode`.execute(db);
          try {
            return await within(30_000, "AddStrategy", addStrategy());
          } finally {
            await sql`rollback`.execute(db);
          }
        });
        assertUnavailable(other);
        assert.equal(await strategiesNamed("Waits for storage"), 1, "only the one the first test placed");
        assert.equal((await addStrategy()).status, 200);
        assert.equal(await strategiesNamed("Waits for storage"), 2);
      });
    }

    test("a customer's page whose form storage cannot take answers as the page, 503, and the form works once storage is back", async () => {
      const f = await follower(service, population);
      const { ApprovalUrl, ApprovalRequestId } = await requested(service, population, startBody(f));
      const shown = await openPage(service, ApprovalUrl);
      const fields = { form_token: formTokenOf(shown.text) };
      const storageBack = await storageRefusingWrites(service);
      let failed: CallResult;
      try {
        failed = await submitForm(service, ApprovalUrl, "decline", fields);
      } finally {
        await storageBack();
      }
      assert.equal(failed.status, 503, failed.text);
      assert.match(String(failed.headers["content-type"]), /^text\/html/);
      assert.match(failed.text, /This could not be finished just now/);
      // Where the page can still be read (PostgreSQL refuses only writes here) it is shown as it stands;
      // under SQLite's held lock reading it waits too, and the message stands alone.
      if (backend === "postgres") assert.match(failed.text, /name="form_token"/, "the page, its forms still there");
      assert.doesNotMatch(failed.text, STORAGE_WORDS);
      assert.equal((await approvalStatus(service, population, ApprovalRequestId)).Status, "PendingCustomer");
      assert.equal((await submitForm(service, ApprovalUrl, "decline", fields)).status, 303);
      assert.equal((await approvalStatus(service, population, ApprovalRequestId)).Status, "Failed");
    });
  });
}
