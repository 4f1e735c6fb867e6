import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type ConsumerWrites, mergeWrites } from "../../src/engine/outbox/consumer.js";
import type { NewAccountOrder, NewCopySkip, RecordTotals } from "../../src/store/journal/batch.js";

/**
 * The writes a batch carries for its consumers' deliveries
 * (src/engine/outbox/consumer.ts): a strategy's record totals add up into one
 * row, the autotrade copier's rows keep their order.
 */

const totalsOf = (strategyId: number, fills: number, latest: number | null): RecordTotals => ({
  strategy_id: strategyId,
  fills_stock: fills,
  fills_option: 0,
  fills_future: 0,
  fills_forex: 0,
  latest_fill_at: latest,
  closed_trades: fills,
  winners: 1,
  losers: 0,
  sum_winners_cents: 100 * fills,
  sum_losers_cents: 0,
  duration_ms: 1_000,
});

// The copier's rows are passed through untouched: their shape does not matter here, only who they are.
const accountOrder = (n: number) => ({ id: n }) as unknown as NewAccountOrder;
const copySkip = (n: number) => ({ source_order_id: n }) as unknown as NewCopySkip;

const deliveryArbitrary: fc.Arbitrary<ConsumerWrites> = fc.record({
  recordTotals: fc
    .uniqueArray(
      fc.record({
        strategy: fc.integer({ min: 1, max: 4 }),
        fills: fc.integer({ min: 1, max: 5 }),
        latest: fc.option(fc.integer({ min: 0, max: 1_000 })),
      }),
      { selector: (t) => t.strategy, maxLength: 4 },
    )
    .map((rows) => rows.map((t) => totalsOf(t.strategy, t.fills, t.latest))),
  accountOrders: fc.array(fc.nat(1_000), { maxLength: 3 }).map((ids) => ids.map(accountOrder)),
  copySkips: fc.array(fc.nat(1_000), { maxLength: 3 }).map((ids) => ids.map(copySkip)),
});

test("merging deliveries sums each strategy's totals and keeps every copier row in order", () => {
  fc.assert(
    fc.property(fc.array(deliveryArbitrary, { maxLength: 12 }), (deliveries) => {
      const merged = mergeWrites(deliveries);
      assert.deepEqual(
        merged.accountOrders,
        deliveries.flatMap((d) => d.accountOrders),
      );
      assert.deepEqual(
        merged.copySkips,
        deliveries.flatMap((d) => d.copySkips),
      );
      const strategies = new Set(deliveries.flatMap((d) => d.recordTotals.map((t) => t.strategy_id)));
      assert.equal(merged.recordTotals.length, strategies.size);
      for (const strategyId of strategies) {
        const rows = deliveries.flatMap((d) => d.recordTotals.filter((t) => t.strategy_id === strategyId));
        const row = merged.recordTotals.find((t) => t.strategy_id === strategyId);
        assert.equal(
          row?.fills_stock,
          rows.reduce((sum, t) => sum + t.fills_stock, 0),
        );
        assert.equal(
          row?.sum_winners_cents,
          rows.reduce((sum, t) => sum + t.sum_winners_cents, 0),
        );
        assert.equal(row?.duration_ms, rows.length * 1_000);
        const latest = rows.map((t) => t.latest_fill_at).filter((at): at is number => at !== null);
        assert.equal(row?.latest_fill_at, latest.length === 0 ? null : Math.max(...latest));
      }
    }),
  );
});

test("merging in one go equals merging two at a time", () => {
  fc.assert(
    fc.property(fc.array(deliveryArbitrary, { minLength: 1, maxLength: 12 }), (deliveries) => {
      const stepwise = deliveries.slice(1).reduce((all, d) => mergeWrites([all, d]), deliveries[0] as ConsumerWrites);
      assert.deepEqual(mergeWrites(deliveries), mergeWrites([stepwise]));
    }),
  );
});

test("ten thousand deliveries of a hundred strategies make a hundred totals rows", () => {
  const deliveries = Array.from({ length: 10_000 }, (_, i) => ({
    recordTotals: [totalsOf(i % 100, 1, i)],
    accountOrders: [accountOrder(i)],
    copySkips: [],
  }));
  const merged = mergeWrites(deliveries);
  assert.equal(merged.recordTotals.length, 100);
  assert.equal(merged.accountOrders.length, 10_000);
  assert.equal(merged.recordTotals.find((t) => t.strategy_id === 7)?.fills_stock, 100);
});
