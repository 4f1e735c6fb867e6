import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import type { NewOrderEvent, StoredOrder } from "../../src/store/journal/batch.js";
import { openSqliteJournal } from "../../src/store/journal/sqlite-journal.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { freshStorage, type TestStorage } from "../helpers/service.js";
import { accountCommit, journalBatch, modelAccounts, restingOrder } from "../helpers/store-rows.js";

const ACCOUNTS = 100;
const ORDERS_PER_BATCH = 25;
const BATCHES = 400;
const NOW_MS = Date.parse("2026-03-10T14:00:00Z");
const MIB = 1024 * 1024;

interface Account {
  readonly id: number;
  readonly strategyId: number;
  version: number;
  eventSeq: number;
}

/**
 * The embedded database's WAL stays short while the journal writes without
 * pause: passive checkpoints alone never let the log start over then (new
 * frames always arrive while one copies), and it grew by some 18 KB for every
 * resting order (1.9 GB in 15 s of bench:orders). Here, 10,000 orders in
 * batches of 25 over 100 accounts, as the order path makes them: without the
 * restarting checkpoint the log ends past 50 MiB, with it at 7-21 MiB.
 */
describe("the SQLite journal's WAL under steady writes", () => {
  let fresh: TestStorage;
  let file: string;
  const accounts: Account[] = [];

  before(async () => {
    fresh = await freshStorage("sqlite");
    const { storage } = fresh;
    await migrateToLatest(storage);
    if (storage.location.backend !== "sqlite") throw new Error("not SQLite");
    file = storage.location.file;
    for (const account of await modelAccounts(storage, ACCOUNTS, NOW_MS)) {
      accounts.push({ ...account, version: 0, eventSeq: 0 });
    }
  });
  after(async () => {
    await fresh?.dispose();
  });

  test("10,000 resting orders written back to back leave the log under 32 MiB", async () => {
    const journal = openSqliteJournal(file, { everyMs: 20, restartFrames: 256 });
    try {
      const [range] = await journal.reserveIds("orders", BATCHES * ORDERS_PER_BATCH);
      let nextId = range?.[0] as number;
      for (let b = 0; b < BATCHES; b++) {
        const newOrders: StoredOrder[] = [];
        const events: NewOrderEvent[] = [];
        const moved = new Map<number, Account>();
        for (let i = 0; i < ORDERS_PER_BATCH; i++) {
          const account = accounts[(b * ORDERS_PER_BATCH + i) % ACCOUNTS] as Account;
          const order = { id: nextId++, ...restingOrder(account, NOW_MS) };
          newOrders.push(order);
          account.eventSeq += 1;
          events.push(acceptedEvent(order, account.eventSeq));
          moved.set(account.id, account);
        }
        const commits = [...moved.values()].map((account) => accountCommit(account, account.version, account.eventSeq));
        const outcome = await journal.commit(journalBatch({ accounts: commits, newOrders, events }));
        assert.deepEqual(outcome, { ok: true });
        for (const account of moved.values()) account.version += 1;
      }
    } finally {
      await journal.close();
    }
    const stored = await fresh.storage.db
      .selectFrom("orders")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    assert.equal(Number(stored.n), BATCHES * ORDERS_PER_BATCH);
    const walBytes = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    assert.ok(walBytes < 32 * MIB, `the WAL holds ${(walBytes / MIB).toFixed(1)} MiB`);
  });
});

function acceptedEvent(order: StoredOrder, seq: number): NewOrderEvent {
  return {
    account_id: order.account_id,
    seq,
    kind: "accepted",
    order_id: order.id,
    payload: JSON.stringify({ strategy_id: order.strategy_id, status: order.status, symbol: order.symbol }),
    actor_person_id: null,
    on_behalf_of_person_id: null,
    origin: "wal-test",
    at: NOW_MS,
  };
}
