import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BACKENDS, populate, setClock, startTestService } from "../helpers/service.js";
import { cancelOrder, MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * Ended orders leave an account's working book in bulk (src/engine/frame/
 * journal-entry.ts): finding what still waits on them takes a pass over the
 * book. A filled entry stays while its exits work. Counted among the ended
 * orders, such kept entries held the count over the threshold for good, and
 * the whole book was pruned again on every operation of the account.
 */

const BRACKETS = 70;
/** The fewest ended orders the book holds before it is pruned (ENDED_KEPT). */
const ENDED_KEPT = 64;

for (const backend of BACKENDS) {
  describe(`an account's book pruning (${backend})`, () => {
    test("filled entries kept for their working exits do not make every operation prune the book", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const key = (await populate(service)).keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key, 10_000_000);
        await setQuote(service, "AAPL", 200, 200.05);
        const entries: number[] = [];
        for (let i = 0; i < BRACKETS; i++) {
          const bracket = await placed(
            service,
            key,
            stockOrder(strategyId, "AAPL", "buy", 1, { ProfitTarget: 300, StopLoss: 100 }),
          );
          entries.push(bracket.SignalId);
        }
        const { frame } = service.app.runtime;
        const book = async () => (await frame.workingAccount(strategyId)).state.book;
        for (const entry of entries) {
          assert.equal((await book()).get(entry)?.state.status, "Filled", "a filled entry stays beside its exits");
        }

        // More entries are kept than the threshold: an order ending now waits in the book for the others.
        const restAndCancel = async () => {
          const { SignalId } = await placed(
            service,
            key,
            stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 1 }),
          );
          const r = await cancelOrder(service, key, strategyId, SignalId);
          assert.equal(r.status, 200, r.text);
          return SignalId;
        };
        const first = await restAndCancel();
        assert.equal((await book()).get(first)?.state.status, "Canceled", "one ended order does not prune the book");

        // Orders go on ending until the count passes the threshold: then every one of them leaves at once.
        const canceled = [first];
        while ((await book()).has(first)) {
          assert.ok(canceled.length <= ENDED_KEPT, `${canceled.length} ended orders and the book not pruned yet`);
          canceled.push(await restAndCancel());
        }
        const after = await book();
        assert.deepEqual(
          canceled.filter((id) => after.has(id)),
          [],
          "the ended orders leave together",
        );
        for (const entry of entries) assert.ok(after.has(entry), "entries whose exits work stay");
      } finally {
        await service.close();
      }
    });
  });
}
