import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { TradingFrame } from "../../src/engine/frame/frame.js";
import { placeOrder } from "../../src/services/orders.js";
import type { CommitOutcome, Journal, JournalBatch } from "../../src/store/journal/batch.js";
import { openJournal } from "../../src/store/journal/journal.js";
import type { Backend, Storage } from "../../src/store/storage.js";
import { assertEventsWithoutGap, assertRecordTotalsMatchHistory, consumersCaughtUp } from "../helpers/outbox.js";
import { BACKENDS, freshStorage, populate, setClock, startTestService, type TestService } from "../helpers/service.js";
import { callerOf, orderInput } from "../helpers/services.js";
import {
  assertRefused,
  MARKET_OPEN,
  newOrder,
  newStrategy,
  placed,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

/**
 * Batches the journal fails to write. One storage refuses (here a trigger
 * refusing one strategy's new orders or fills, as a full disk or a broken
 * constraint would) is rolled back whole and tried again account by account:
 * the accounts that write alone commit, the operations of one that fails
 * alone answer the error and leave nothing stored, and that account is loaded
 * again from storage, so what it does next starts from what is stored. One
 * that lands but whose answer is lost (the connection dropped after the
 * commit) answers the error too, and the account read again holds what landed.
 */

const REFUSAL = "no space left on the device";

/** Makes storage refuse every new row of the strategy in `table` (orders or fills), as the journal writes them. */
async function refuseRowsOf(service: TestService, table: "orders" | "fills", strategyId: number): Promise<void> {
  const statements =
    service.backend === "sqlite"
      ? [
          `create trigger refuse_rows before insert on ${table} when new.strategy_id = ${strategyId}
            begin select raise(abort, '${REFUSAL}'); end`,
        ]
      : [
          `create function refuse_rows() returns trigger language plpgsql as $$
            begin if new.strategy_id = ${strategyId} then raise exception '${REFUSAL}'; end if; return new; end $$`,
          `create trigger refuse_rows before insert on ${table} for each row execute function refuse_rows()`,
        ];
  for (const statement of statements) await sql.raw(statement).execute(service.storage.db);
}

async function acceptRowsAgain(service: TestService, table: "orders" | "fills"): Promise<void> {
  const statements =
    service.backend === "sqlite"
      ? ["drop trigger refuse_rows"]
      : [`drop trigger refuse_rows on ${table}`, "drop function refuse_rows()"];
  for (const statement of statements) await sql.raw(statement).execute(service.storage.db);
}

async function stored(
  service: TestService,
  strategyId: number,
): Promise<{ orders: number; fills: number; shares: number }> {
  const orders = await service.storage.db
    .selectFrom("orders")
    .select("id")
    .where("strategy_id", "=", strategyId)
    .execute();
  const fills = await service.storage.db
    .selectFrom("fills")
    .select("id")
    .where("strategy_id", "=", strategyId)
    .execute();
  const positions = await service.storage.db
    .selectFrom("positions")
    .select("quantity")
    .where("strategy_id", "=", strategyId)
    .execute();
  return {
    orders: orders.length,
    fills: fills.length,
    shares: positions.reduce((sum, row) => sum + Number(row.quantity), 0),
  };
}

/** Another process's frame on the storage, each of whose commits goes through `commit` (which may fail it, or lose its answer). */
function frameCommitting(
  storage: Storage,
  commit: (journalCommit: Journal["commit"], batch: JournalBatch) => Promise<CommitOutcome>,
): TradingFrame {
  return new TradingFrame(storage, (origin) => {
    const journal = openJournal(storage, origin);
    return {
      get failure() {
        return journal.failure;
      },
      commit: (batch) => commit((b) => journal.commit(b), batch),
      reserveIds: (table, count) => journal.reserveIds(table, count),
      probe: (atIso) => journal.probe(atIso),
      close: () => journal.close(),
    };
  });
}

/** A service at the market's open, AAPL at 200 x 200.05, and two strategies of one owner: the one whose rows storage will refuse, and another. */
async function twoStrategies(backend: Backend) {
  const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
  try {
    const key = (await populate(service)).keys.personA;
    await setClock(service, MARKET_OPEN);
    await setQuote(service, "AAPL", 200, 200.05);
    const unlucky = await newStrategy(service, key, 100_000, "Unlucky");
    const lucky = await newStrategy(service, key, 100_000, "Lucky");
    return { service, key, unlucky, lucky };
  } catch (error) {
    await service.close();
    throw error;
  }
}

for (const backend of BACKENDS) {
  describe(`a batch that fails (${backend})`, () => {
    test("each account is tried alone: the others commit, the failing one's operations answer the error, and it trades on from what is stored", async () => {
      const { service, key, unlucky, lucky } = await twoStrategies(backend);
      try {
        const ctx = { ...service.app.runtime, caller: await callerOf(service, key) };
        const trade = (strategyId: number, side: "buy" | "sell", shares: number) =>
          placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", side, shares)));
        // Both accounts in memory, so the next two orders are applied at once and share a batch.
        await Promise.all([trade(unlucky, "buy", 10), trade(lucky, "buy", 10)]);

        await refuseRowsOf(service, "orders", unlucky);
        const [refused, accepted] = await Promise.allSettled([trade(unlucky, "buy", 5), trade(lucky, "buy", 5)]);
        assert.equal(refused.status, "rejected");
        assert.match(String(refused.reason), new RegExp(REFUSAL));
        assert.equal(accepted.status, "fulfilled");
        await assert.rejects(trade(unlucky, "buy", 1), new RegExp(REFUSAL));
        // Over the API: an internal error in the error shape, saying nothing of storage.
        const answer = await newOrder(service, key, stockOrder(unlucky, "AAPL", "buy", 1));
        assertRefused(answer, 500, "1500");
        assert.doesNotMatch(answer.text, new RegExp(REFUSAL));
        assert.deepEqual(
          await stored(service, unlucky),
          { orders: 1, fills: 1, shares: 10 },
          "nothing of the failed orders",
        );
        assert.deepEqual(
          await stored(service, lucky),
          { orders: 2, fills: 2, shares: 15 },
          "the lucky orders, each once",
        );
        await assertEventsWithoutGap(service, unlucky);

        await acceptRowsAgain(service, "orders");
        await trade(unlucky, "buy", 3);
        // Selling what is stored closes the position only if the account was loaded again, without the failed buys.
        await trade(unlucky, "sell", 13);
        assert.deepEqual(await stored(service, unlucky), { orders: 3, fills: 3, shares: 0 });
        for (const strategyId of [unlucky, lucky]) {
          await assertEventsWithoutGap(service, strategyId);
        }
        // The records consumer, whose positions went with the failed batch, counts every stored fill once.
        await consumersCaughtUp([service]);
        for (const strategyId of [unlucky, lucky]) {
          await assertRecordTotalsMatchHistory(service, strategyId);
        }
      } finally {
        await service.close();
      }
    });

    test("fills the fill loop makes: the failing account's order stays working, as stored, and fills once at the next quote", async () => {
      const { service, key, unlucky, lucky } = await twoStrategies(backend);
      try {
        const limitBuy = (strategyId: number) =>
          stockOrder(strategyId, "AAPL", "buy", 10, { OrderType: "2", Limit: 199 });
        const resting = await placed(service, key, limitBuy(unlucky));
        await placed(service, key, limitBuy(lucky));

        await refuseRowsOf(service, "fills", unlucky);
        // The quote crosses both limits: one batch works both accounts.
        await setQuote(service, "AAPL", 198.4, 198.5);
        await service.app.runtime.frame.drain();
        assert.deepEqual(await stored(service, unlucky), { orders: 1, fills: 0, shares: 0 });
        assert.deepEqual(await stored(service, lucky), { orders: 1, fills: 1, shares: 10 });
        assert.equal((await signal(service, key, resting.SignalId)).OrderStatus, "0", "working, as stored");
        await assertEventsWithoutGap(service, unlucky);

        await acceptRowsAgain(service, "fills");
        await setQuote(service, "AAPL", 198.45, 198.55);
        await service.app.runtime.frame.drain();
        assert.deepEqual(await stored(service, unlucky), { orders: 1, fills: 1, shares: 10 });
        const filled = await signal(service, key, resting.SignalId);
        assert.deepEqual([filled.OrderStatus, filled.AvgFillPrice], ["2", 198.55]);
        for (const strategyId of [unlucky, lucky]) await assertEventsWithoutGap(service, strategyId);
      } finally {
        await service.close();
      }
    });
    test("storage that cannot take the batch (a full disk): every operation of it fails at once, with no try per account", async () => {
      const fresh = await freshStorage(backend);
      const service = await startTestService(backend, { storage: fresh, marketFeed: { kind: "manual" } });
      const other = await fresh.openAnother();
      let full = false;
      let commits = 0;
      // Another process's frame on the database, whose disk fills up: a try per account would each meet it again.
      const frame = frameCommitting(other, (commit, batch) => {
        commits++;
        if (full) throw Object.assign(new Error("journal: database or disk is full"), { code: "SQLITE_FULL" });
        return commit(batch);
      });
      try {
        const key = (await populate(service)).keys.personA;
        await setClock(service, MARKET_OPEN);
        await setQuote(service, "AAPL", 200, 200.05);
        const strategies = [
          await newStrategy(service, key),
          await newStrategy(service, key),
          await newStrategy(service, key),
        ];
        const ctx = { ...service.app.runtime, storage: other, frame, caller: await callerOf(service, key) };
        const trade = (strategyId: number, shares: number) =>
          placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", "buy", shares)));
        // Every account in memory, so the next orders are applied at once and share a batch.
        await Promise.all(strategies.map((strategyId) => trade(strategyId, 10)));

        full = true;
        commits = 0;
        const answers = await Promise.allSettled(strategies.map((strategyId) => trade(strategyId, 5)));
        assert.deepEqual(
          answers.map((answer) => answer.status),
          ["rejected", "rejected", "rejected"],
        );
        assert.equal(commits, 1, "one batch, tried once");
        full = false;
        for (const strategyId of strategies) {
          assert.deepEqual(
            await stored(service, strategyId),
            { orders: 1, fills: 1, shares: 10 },
            "nothing of the batch",
          );
        }
        // The accounts were read again: what they do next starts from what is stored.
        await Promise.all(strategies.map((strategyId) => trade(strategyId, 1)));
        for (const strategyId of strategies) {
          assert.deepEqual(await stored(service, strategyId), { orders: 2, fills: 2, shares: 11 });
          await assertEventsWithoutGap(service, strategyId);
        }
      } finally {
        await frame.close();
        await other.close();
        await service.close();
      }
    });

    test("a commit that lands but whose answer is lost: the operation answers the error, and the account is read again with what landed", async () => {
      const fresh = await freshStorage(backend);
      const service = await startTestService(backend, { storage: fresh, marketFeed: { kind: "manual" } });
      const other = await fresh.openAnother();
      let loseAnswers = false;
      // Another process's frame on the database, whose journal loses the answer of commits that landed.
      const frame = frameCommitting(other, async (commit, batch) => {
        const outcome = await commit(batch);
        if (loseAnswers && outcome.ok) throw new Error("the connection was lost after the commit");
        return outcome;
      });
      try {
        const key = (await populate(service)).keys.personA;
        await setClock(service, MARKET_OPEN);
        await setQuote(service, "AAPL", 200, 200.05);
        const strategyId = await newStrategy(service, key);
        const ctx = { ...service.app.runtime, storage: other, frame, caller: await callerOf(service, key) };
        const trade = (side: "buy" | "sell", shares: number) =>
          placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", side, shares)));
        await trade("buy", 10);
        loseAnswers = true;
        await assert.rejects(trade("buy", 5), /connection was lost/);
        loseAnswers = false;
        assert.deepEqual(await stored(service, strategyId), { orders: 2, fills: 2, shares: 15 }, "it landed");
        await trade("buy", 1);
        // What the frame holds is what is stored: selling all of it leaves nothing.
        await trade("sell", 16);
        assert.deepEqual(await stored(service, strategyId), { orders: 4, fills: 4, shares: 0 });
        await assertEventsWithoutGap(service, strategyId);
      } finally {
        await frame.close();
        await other.close();
        await service.close();
      }
    });
  });
}
