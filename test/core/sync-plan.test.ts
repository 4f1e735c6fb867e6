import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type SetupSettings, settingsOfStart } from "../../src/core/autotrade/settings.js";
import { legsBetween, type SyncInput, syncPlan } from "../../src/core/autotrade/sync-plan.js";
import { add, decimal, formatDecimal, fromInteger, neg, sub, ZERO } from "../../src/core/decimal.js";

const d = decimal;
const ALL_ON = settingsOfStart({ EnableStocks: true, EnableFutures: true, EnableForex: true, EnableOptions: true });

const input = (over: Partial<SyncInput> = {}): SyncInput => ({
  symbolType: "stock",
  strategyQuantity: d("100"),
  held: ZERO,
  working: ZERO,
  scalingPercentage: d("50"),
  accountValue: d("50000"),
  modelValue: d("100000"),
  price: d("200"),
  settings: ALL_ON,
  excluded: null,
  expired: false,
  ...over,
});

const legsOf = (over: Partial<SyncInput>) =>
  syncPlan(input(over)).legs.map((leg) => `${leg.side} ${leg.openClose} ${formatDecimal(leg.quantity)}`);

test("the target is the strategy's position scaled as an opening copy of it", () => {
  assert.equal(formatDecimal(syncPlan(input()).target ?? d("-1")), "25");
  assert.equal(formatDecimal(syncPlan(input({ strategyQuantity: d("-100") })).target ?? ZERO), "-25");
  // Whole lots of forex, whole contracts of futures; MaxFutures caps the whole position.
  assert.equal(
    formatDecimal(syncPlan(input({ symbolType: "forex", strategyQuantity: d("25000") })).target ?? ZERO),
    "6000",
  );
  const capped = { ...ALL_ON, futures: { ...ALL_ON.futures, max: 2 } };
  assert.equal(
    formatDecimal(
      syncPlan(input({ symbolType: "future", strategyQuantity: d("20"), settings: capped, held: d("1") })).target ??
        ZERO,
    ),
    "2",
  );
  assert.equal(formatDecimal(syncPlan(input({ strategyQuantity: ZERO, held: d("7") })).target ?? d("-1")), "0");
});

test("the legs take the holding to the target: an open, a close, or a close then an open", () => {
  assert.deepEqual(legsOf({}), ["buy open 25"]);
  assert.deepEqual(legsOf({ held: d("10") }), ["buy open 15"]);
  assert.deepEqual(legsOf({ held: d("40") }), ["sell close 15"]);
  assert.deepEqual(legsOf({ held: d("25") }), []);
  assert.deepEqual(legsOf({ held: d("-5") }), ["buy close 5", "buy open 25"]);
  assert.deepEqual(legsOf({ strategyQuantity: ZERO, held: d("-5") }), ["buy close 5"]);
});

test("where the setup may not open, the sync only reduces toward the scaled size", () => {
  const noStocks = { ...ALL_ON, stocks: { ...ALL_ON.stocks, enabled: false } };
  assert.deepEqual(legsOf({ settings: noStocks }), []);
  assert.deepEqual(legsOf({ settings: noStocks, held: d("40") }), ["sell close 15"]);
  assert.deepEqual(legsOf({ settings: noStocks, held: d("10") }), []);
  assert.deepEqual(legsOf({ settings: noStocks, held: d("-10") }), ["buy close 10"]);
  const closingOnly = { ...ALL_ON, closingOrdersOnly: true };
  assert.deepEqual(legsOf({ settings: closingOnly, held: d("30") }), ["sell close 5"]);
  const noShorts = { ...ALL_ON, stocks: { ...ALL_ON.stocks, short: false } };
  assert.deepEqual(legsOf({ settings: noShorts, strategyQuantity: d("-100"), held: d("3") }), ["sell close 3"]);
});

test("positions not to be joined, working market orders and unknown values leave the symbol as it is", () => {
  const notJoined = syncPlan(input({ excluded: "not_joined" }));
  assert.deepEqual([notJoined.legs, notJoined.blocked, notJoined.inSync], [[], "not_joined", false]);
  assert.equal(syncPlan(input({ excluded: "do_not_sync" })).blocked, "do_not_sync");
  // A strategy flat in it is synced whatever the position was.
  assert.deepEqual(legsOf({ excluded: null, strategyQuantity: ZERO, held: d("5") }), ["sell close 5"]);
  const working = syncPlan(input({ working: d("10") }));
  assert.deepEqual([working.legs, working.blocked], [[], "orders_working"]);
  // Working orders that make up the difference already: nothing more is made while they work.
  const covered = syncPlan(input({ working: d("25") }));
  assert.deepEqual([covered.legs, covered.blocked, covered.inSync], [[], "orders_working", false]);
  assert.equal(syncPlan(input({ accountValue: null })).blocked, "no_account_value");
  const dollars = { ...ALL_ON, stocks: { ...ALL_ON.stocks, maxDollars: 1000 } };
  assert.equal(syncPlan(input({ settings: dollars, price: null })).blocked, "no_price");
});

test("nothing is traded in an expired contract, whatever either side holds: the broker settles it", () => {
  for (const [strategyQuantity, held] of [
    [ZERO, d("5")],
    [d("100"), ZERO],
    [d("100"), d("-5")],
  ] as const) {
    const plan = syncPlan(input({ symbolType: "option", strategyQuantity, held, expired: true }));
    assert.deepEqual([plan.legs, plan.blocked, plan.target, plan.inSync], [[], "expired", null, false]);
  }
});

/** The reference: the scaled position by plain rational arithmetic on integers, the setup's rules spelled out. */
function referenceTarget(c: Case): bigint {
  if (c.strategy === 0n) return 0n;
  const size = c.strategy < 0n ? -c.strategy : c.strategy;
  let q = (size * c.percent * c.account) / (100n * c.model);
  if (c.min > 0n && q < c.min) q = c.min;
  if (c.max !== null && q > c.max) q = c.max;
  const mayOpen = c.enabled && (c.strategy > 0n ? c.long : c.short);
  const way = c.strategy > 0n ? 1n : -1n;
  if (mayOpen) return way * q;
  // Reduce only: what is held the strategy's way, at most the scaled size.
  if (c.held === 0n || c.held > 0n !== c.strategy > 0n) return 0n;
  const held = c.held < 0n ? -c.held : c.held;
  return way * (held < q ? held : q);
}

interface Case {
  readonly strategy: bigint;
  readonly held: bigint;
  readonly percent: bigint;
  readonly account: bigint;
  readonly model: bigint;
  readonly min: bigint;
  readonly max: bigint | null;
  readonly enabled: boolean;
  readonly long: boolean;
  readonly short: boolean;
}

const cases = fc.record({
  strategy: fc.bigInt(-500n, 500n),
  held: fc.bigInt(-300n, 300n),
  percent: fc.bigInt(1n, 1000n),
  account: fc.bigInt(1000n, 1_000_000n),
  model: fc.bigInt(1000n, 1_000_000n),
  min: fc.bigInt(0n, 3n),
  max: fc.option(fc.bigInt(0n, 200n), { nil: null }),
  enabled: fc.boolean(),
  long: fc.boolean(),
  short: fc.boolean(),
});

const settingsOf = (c: Case): SetupSettings => ({
  ...ALL_ON,
  futures: {
    enabled: c.enabled,
    long: c.long,
    short: c.short,
    min: Number(c.min),
    max: c.max === null ? null : Number(c.max),
  },
});

test("the target and legs agree with the reference for any positions, values and settings (futures)", () => {
  fc.assert(
    fc.property(cases, (c) => {
      const plan = syncPlan({
        symbolType: "future",
        strategyQuantity: fromInteger(c.strategy),
        held: fromInteger(c.held),
        working: ZERO,
        scalingPercentage: fromInteger(c.percent),
        accountValue: fromInteger(c.account),
        modelValue: fromInteger(c.model),
        price: null,
        settings: settingsOf(c),
        excluded: null,
        expired: false,
      });
      const expected = fromInteger(referenceTarget(c));
      assert.equal(formatDecimal(plan.target ?? d("-999999")), formatDecimal(expected));
      assert.equal(plan.inSync, c.held === referenceTarget(c));
      // The legs, applied in order, take the holding to the target, each leg positive, a close never past flat.
      let holding = fromInteger(c.held);
      for (const leg of plan.legs) {
        assert.ok(leg.quantity > 0n);
        const signed = leg.side === "buy" ? leg.quantity : neg(leg.quantity);
        const after = add(holding, signed);
        if (leg.openClose === "close") assert.ok(after === ZERO || after > 0n === holding > 0n);
        else assert.ok(holding === ZERO || holding > 0n === signed > 0n);
        holding = after;
      }
      assert.equal(formatDecimal(holding), formatDecimal(expected));
      assert.ok(plan.legs.length <= 2);
    }),
    { numRuns: 500 },
  );
});

test("legsBetween is a path from any holding to any target", () => {
  fc.assert(
    fc.property(fc.bigInt(-50n, 50n), fc.bigInt(-50n, 50n), (from, to) => {
      const legs = legsBetween(fromInteger(from), fromInteger(to));
      const end = legs.reduce(
        (held, leg) => (leg.side === "buy" ? add(held, leg.quantity) : sub(held, leg.quantity)),
        fromInteger(from),
      );
      assert.equal(end, fromInteger(to));
      assert.equal(legs.length === 0, from === to);
    }),
  );
});
