import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { restartedSettings, type SetupSettings, settingsOfStart } from "../../src/core/autotrade/settings.js";
import {
  changedSettings,
  FOREX_LOT_SIZES,
  type SettingsChange,
  settingsRefusal,
} from "../../src/core/autotrade/settings-change.js";

/** The follower's preferences against what a start sets. */

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const change: fc.Arbitrary<SettingsChange> = fc.record({
  futuresLong: maybe(fc.boolean()),
  futuresShort: maybe(fc.boolean()),
  minFutures: maybe(fc.nat(50)),
  forexLong: maybe(fc.boolean()),
  forexShort: maybe(fc.boolean()),
  forexLotSize: maybe(fc.constantFrom(...FOREX_LOT_SIZES)),
  minForex: maybe(fc.nat(500)),
  stocksLong: maybe(fc.boolean()),
  stocksShort: maybe(fc.boolean()),
  tradeStocksAsCfd: maybe(fc.boolean()),
  optionsLong: maybe(fc.boolean()),
  minOptions: maybe(fc.nat(50)),
  closingOrdersOnly: maybe(fc.boolean()),
  ignoreManualOrders: maybe(fc.boolean()),
  virtualLimitOrders: maybe(fc.boolean()),
});

const start = fc.record({
  EnableFutures: maybe(fc.boolean()),
  MaxFuturesContracts: maybe(fc.nat(100)),
  EnableForex: maybe(fc.boolean()),
  MaxForexUnits: maybe(fc.nat(1000)),
  EnableStocks: maybe(fc.boolean()),
  MaxStocksDollars: maybe(fc.nat(1_000_000)),
  EnableOptions: maybe(fc.boolean()),
  EnableOptionsShorting: maybe(fc.boolean()),
  MaxOptionsContracts: maybe(fc.nat(100)),
  AutoStopLossDollars: maybe(fc.integer({ min: 1, max: 100_000 })),
});

/** What a start sets, read off settings. */
const startPart = (s: SetupSettings) => ({
  classes: [s.futures, s.forex, s.stocks, s.options].map((c) => [c.enabled, c.max]),
  maxDollars: s.stocks.maxDollars,
  optionsShort: s.options.short,
  autoStop: s.autoStopLossDollars,
});
/** The follower's part. */
const preferencePart = (s: SetupSettings) => ({
  ...s,
  futures: { ...s.futures, enabled: null, max: null },
  forex: { ...s.forex, enabled: null, max: null },
  stocks: { ...s.stocks, enabled: null, max: null, maxDollars: null },
  options: { ...s.options, enabled: null, max: null, short: null },
  autoStopLossDollars: null,
  brokerUsername: null,
});

describe("the follower's preferences", () => {
  test("a change touches only what it names, and a start never touches what a change set", () => {
    fc.assert(
      fc.property(start, change, start, (first, preferences, second) => {
        const before = settingsOfStart(first);
        const changed = changedSettings(before, preferences);
        assert.deepEqual(startPart(changed), startPart(before));
        const restarted = restartedSettings(changed, second);
        assert.deepEqual(preferencePart(restarted), preferencePart(changed));
        assert.deepEqual(startPart(restarted), startPart(settingsOfStart(second)));
      }),
    );
  });

  test("TradeStocksAsCFD, which a start may name too, is the start's only when it names it", () => {
    const cfd = changedSettings(settingsOfStart({ EnableStocks: true }), { tradeStocksAsCfd: true });
    assert.equal(restartedSettings(cfd, { EnableStocks: true }).stocks.asCfd, true);
    assert.equal(restartedSettings(cfd, { EnableStocks: true, TradeStocksAsCFD: false }).stocks.asCfd, false);
    assert.equal(settingsOfStart({ TradeStocksAsCFD: true }).stocks.asCfd, true);
  });

  test("an empty change is no change", () => {
    fc.assert(
      fc.property(start, (fields) => {
        const settings = settingsOfStart(fields);
        assert.deepEqual(changedSettings(settings, {}), settings);
      }),
    );
  });

  test("refusals: a minimum above its maximum, a lot size brokers do not trade, a minimum off the lot grid", () => {
    const base = settingsOfStart({ EnableFutures: true, MaxFuturesContracts: 3, MaxForexUnits: 100 });
    assert.equal(settingsRefusal(base), null);
    assert.equal(settingsRefusal(changedSettings(base, { minFutures: 3 })), null);
    assert.equal(settingsRefusal(changedSettings(base, { minFutures: 4 }))?.field, "MinFutures");
    assert.equal(settingsRefusal(changedSettings(base, { minForex: 101 }))?.field, "MinForex");
    assert.equal(settingsRefusal({ ...base, forex: { ...base.forex, lotSize: 5000 } })?.field, "ForexLotSize");
    assert.equal(settingsRefusal(changedSettings(base, { forexLotSize: 10_000, minForex: 25 }))?.field, "MinForex");
    assert.equal(settingsRefusal(changedSettings(base, { forexLotSize: 10_000, minForex: 30 })), null);
    // No maximum: any minimum stands.
    assert.equal(settingsRefusal(changedSettings(base, { minOptions: 1000 })), null);
  });
});
