import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { settingsOfStart } from "../../src/core/autotrade/settings.js";
import { type SnapshotSetup, snapshotCounts, utcDayStart } from "../../src/core/autotrade/stats.js";

const setup = (over: Partial<SnapshotSetup> = {}): SnapshotSetup => ({
  strategyId: 1,
  active: true,
  enabled: true,
  syncEnabled: true,
  confirmationNeeded: false,
  settings: settingsOfStart({ EnableStocks: true }),
  ...over,
});

test("an account's strategies count in every class their setup enables; Unique counts each once", () => {
  const counts = snapshotCounts([
    setup({ strategyId: 1, settings: settingsOfStart({ EnableStocks: true, EnableFutures: true }) }),
    setup({ strategyId: 2, settings: settingsOfStart({ EnableStocks: true, EnableOptions: true }) }),
    setup({ strategyId: 3, settings: settingsOfStart({ EnableForex: true }) }),
  ]);
  assert.deepEqual(counts, {
    stocks: 2,
    futures: 1,
    options: 1,
    forex: 1,
    crypto: 0,
    unique: 3,
    syncEnabled: true,
    manualConfirmation: false,
    disabled: false,
  });
});

test("a setup with its stop requested is not counted; an account with no enabled setup is disabled", () => {
  const counts = snapshotCounts([
    setup({ strategyId: 1, active: false }),
    setup({ strategyId: 2, enabled: false, syncEnabled: false, confirmationNeeded: true }),
  ]);
  assert.equal(counts.stocks, 1);
  assert.equal(counts.unique, 1);
  assert.equal(counts.disabled, true);
  assert.equal(counts.syncEnabled, false);
  assert.equal(counts.manualConfirmation, true);
  assert.equal(snapshotCounts([]).disabled, true);
});

test("the flags read 'some active setup'", () => {
  const counts = snapshotCounts([
    setup({ strategyId: 1, enabled: false, syncEnabled: false }),
    setup({ strategyId: 2, enabled: true, syncEnabled: true, confirmationNeeded: true }),
  ]);
  assert.deepEqual([counts.disabled, counts.syncEnabled, counts.manualConfirmation], [false, true, true]);
});

test("a snapshot's day is the UTC midnight its instant falls in, before 1970 too", () => {
  assert.equal(utcDayStart(Date.parse("2026-03-10T23:59:59.999Z")), Date.parse("2026-03-10T00:00:00Z"));
  assert.equal(utcDayStart(Date.parse("2026-03-11T00:00:00Z")), Date.parse("2026-03-11T00:00:00Z"));
  assert.equal(utcDayStart(Date.parse("1969-12-31T12:00:00Z")), Date.parse("1969-12-31T00:00:00Z"));
  fc.assert(
    fc.property(fc.integer({ min: -1e13, max: 1e13 }), (at) => {
      const day = utcDayStart(at);
      return day <= at && at - day < 86_400_000 && new Date(day).toISOString().endsWith("T00:00:00.000Z");
    }),
  );
});
