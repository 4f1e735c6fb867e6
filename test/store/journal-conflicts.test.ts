import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ConsumerAdvance, Journal, StoredOrder } from "../../src/store/journal/batch.js";
import { openJournal } from "../../src/store/journal/journal.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { BACKENDS, freshStorage, type TestStorage } from "../helpers/service.js";
import { accountCommit, journalBatch, type ModelAccount, modelAccounts, restingOrder } from "../helpers/store-rows.js";

const NOW_MS = Date.parse("2026-03-10T14:00:00Z");
const CONSUMER = "records";

/**
 * A batch is written whole or not at all: when an account it moves is no
 * longer at the version the frame read, or a consumer's position is no longer
 * where it was, the journal writes none of it and names what moved. Two
 * journals stand for two processes on one database.
 */
for (const backend of BACKENDS) {
  describe(`the journal refuses a batch written over what moved (${backend})`, () => {
    let fresh: TestStorage;
    let journal: Journal;
    let other: Journal;
    let accounts: ModelAccount[];
    let nextOrderId: number;

    before(async () => {
      fresh = await freshStorage(backend);
      await migrateToLatest(fresh.storage);
      accounts = await modelAccounts(fresh.storage, 5, NOW_MS);
      journal = openJournal(fresh.storage, "first");
      other = openJournal(fresh.storage, "second");
      const [range] = await journal.reserveIds("orders", 100);
      nextOrderId = range?.[0] as number;
    });
    after(async () => {
      await other?.close();
      await journal?.close();
      await fresh?.dispose();
    });

    const account = (i: number) => accounts[i] as ModelAccount;
    const order = (of: ModelAccount): StoredOrder => ({ id: nextOrderId++, ...restingOrder(of, NOW_MS) });
    const stored = async () => {
      const orders = await fresh.storage.db.selectFrom("orders").select("id").execute();
      const versions = await fresh.storage.db.selectFrom("accounts").select(["id", "version"]).orderBy("id").execute();
      const positions = await fresh.storage.db
        .selectFrom("outbox_positions")
        .select(["consumer", "account_id", "seq"])
        .orderBy("account_id")
        .execute();
      return {
        orders: orders.map((o) => Number(o.id)).sort((a, b) => a - b),
        versions: versions.map((v) => [Number(v.id), Number(v.version)]),
        positions: positions.map((p) => [p.consumer, Number(p.account_id), Number(p.seq)]),
      };
    };
    const advance = (of: ModelAccount, expected: number | null, seq: number): ConsumerAdvance => ({
      consumer: CONSUMER,
      accountId: of.id,
      expected,
      seq,
    });

    test("an account moved by another writer: nothing of the batch is written, and the account is named", async () => {
      const [a, b] = [account(0), account(1)];
      const first = order(a);
      assert.deepEqual(await journal.commit(journalBatch({ accounts: [accountCommit(a, 0, 0)], newOrders: [first] })), {
        ok: true,
      });
      const before = await stored();
      const outcome = await other.commit(
        journalBatch({
          accounts: [accountCommit(a, 0, 0), accountCommit(b, 0, 0)],
          newOrders: [order(a), order(b)],
        }),
      );
      assert.deepEqual(outcome, { ok: false, conflicts: [a.id], consumerConflicts: [] });
      assert.deepEqual(await stored(), before);
      assert.deepEqual(
        await other.commit(journalBatch({ accounts: [accountCommit(a, 1, 0)], newOrders: [order(a)] })),
        { ok: true },
        "written from the version stored, the batch lands",
      );
    });

    test("two writers moving one account from one version at once: one lands, the other is refused whole", async () => {
      const e = account(4);
      const before = await stored();
      const batch = () => journalBatch({ accounts: [accountCommit(e, 0, 0)], newOrders: [order(e), order(e)] });
      const outcomes = await Promise.all([journal.commit(batch()), other.commit(batch())]);
      const landed = outcomes.findIndex((o) => o.ok);
      assert.notEqual(landed, -1, "one batch lands");
      assert.deepEqual(outcomes[1 - landed], { ok: false, conflicts: [e.id], consumerConflicts: [] });
      const after = await stored();
      assert.equal(after.orders.length, before.orders.length + 2);
      assert.deepEqual(
        after.versions.find(([id]) => id === e.id),
        [e.id, 1],
      );
    });

    test("a consumer's position moved: nothing of the batch is written, and the consumer is named", async () => {
      const c = account(2);
      assert.deepEqual(await journal.commit(journalBatch({ consumers: [advance(c, null, 3)] })), { ok: true });
      const before = await stored();
      const outcome = await other.commit(
        journalBatch({ accounts: [accountCommit(c, 0, 0)], newOrders: [order(c)], consumers: [advance(c, 1, 5)] }),
      );
      assert.deepEqual(outcome, { ok: false, conflicts: [], consumerConflicts: [`${CONSUMER}:${c.id}`] });
      assert.deepEqual(await stored(), before);
      assert.deepEqual(await other.commit(journalBatch({ consumers: [advance(c, 3, 5)] })), { ok: true });
      assert.deepEqual((await stored()).positions, [[CONSUMER, c.id, 5]]);
    });

    test("two writers starting the same consumer position at once: one lands, the other is refused whole", async () => {
      const d = account(3);
      const before = await stored();
      const batch = (seq: number) =>
        journalBatch({ accounts: [accountCommit(d, 0, 0)], newOrders: [order(d)], consumers: [advance(d, null, seq)] });
      const outcomes = await Promise.all([journal.commit(batch(2)), other.commit(batch(4))]);
      const landed = outcomes.findIndex((o) => o.ok);
      assert.notEqual(landed, -1, "one batch lands");
      assert.deepEqual(outcomes[1 - landed], {
        ok: false,
        conflicts: [d.id],
        consumerConflicts: [`${CONSUMER}:${d.id}`],
      });
      const after = await stored();
      assert.equal(after.orders.length, before.orders.length + 1);
      assert.deepEqual(
        after.positions.filter(([, accountId]) => accountId === d.id),
        [[CONSUMER, d.id, landed === 0 ? 2 : 4]],
      );
    });
  });
}
