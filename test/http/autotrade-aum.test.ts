import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  autotrading,
  brokerAccount,
  follow,
  SIMULATED_BROKER,
  startAutotrade,
  stopAutotrade,
} from "../helpers/autotrade.js";
import { newCustomer, newStrategy } from "../helpers/commerce.js";
import { legacyCall } from "../helpers/legacy.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/** AUM, AUM_NumberOfAccounts, IsTradeOwnSystem and TradeOwnSystemPercent as autotrading makes them. */

for (const backend of BACKENDS) {
  describe(`autotrading in strategy figures (${backend})`, () => {
    let service: TestService;
    let p: Population;

    const details = async (strategyId: number) => {
      const r = await service.call("GEN", "GET", "/Strategies/GetStrategyDetails", {
        query: { StrategyId: String(strategyId) },
      });
      assert.equal(r.status, 200, r.text);
      const d = r.json.Results[0];
      return [d.AUM, d.AUM_NumberOfAccounts, d.IsTradeOwnSystem, d.TradeOwnSystemPercent];
    };
    const searchOwnTrading = async (isTradeOwnSystem: boolean | undefined, strategyIds: readonly number[]) => {
      const query: Record<string, string> = { Limit: "1000" };
      if (isTradeOwnSystem !== undefined) query.IsTradeOwnSystem = String(isTradeOwnSystem);
      const r = await service.call("GEN", "GET", "/Strategies/SearchStrategies", { query });
      assert.equal(r.status, 200, r.text);
      return r.json.Results.filter((s: { StrategyId: number }) => strategyIds.includes(s.StrategyId)).map(
        (s: { StrategyId: number; IsTradeOwnSystem: boolean }) => [s.StrategyId, s.IsTradeOwnSystem],
      );
    };

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
    });
    after(() => service.close());

    test("AUM sums the accounts copying the strategy now; the owner's own account makes IsTradeOwnSystem", async () => {
      const owner = await newCustomer(service, p.siteA);
      const strategy = await newStrategy(service, ADMIN_KEY, owner);
      const other = await newStrategy(service, ADMIN_KEY, owner);
      assert.deepEqual(await details(strategy), [0, 0, false, 0]);

      const first = await newCustomer(service, p.siteA);
      const firstAccount = await autotrading(service, first, strategy);
      const second = await newCustomer(service, p.siteB);
      const secondAccount = await brokerAccount(service, second, { cash: "50000.25" });
      await autotrading(service, second, other);
      await follow(service, second, strategy);
      const started = await startAutotrade(service, ADMIN_KEY, {
        Account: secondAccount,
        PersonId: second,
        StrategyId: strategy,
      });
      assert.equal(started.status, 200, started.text);
      assert.deepEqual(await details(strategy), [150_000.25, 2, false, 0]);
      assert.deepEqual(await searchOwnTrading(true, [strategy, other]), []);

      const ownAccount = await brokerAccount(service, owner, { cash: "20000" });
      const own = await startAutotrade(service, ADMIN_KEY, {
        Account: ownAccount,
        PersonId: owner,
        StrategyId: strategy,
        ScalingPercentage: 50,
      });
      assert.equal(own.status, 200, own.text);
      assert.deepEqual(await details(strategy), [170_000.25, 3, true, 50]);
      assert.deepEqual(await details(other), [100_000, 1, false, 0]);
      assert.deepEqual(await searchOwnTrading(true, [strategy, other]), [[strategy, true]]);
      assert.deepEqual(await searchOwnTrading(false, [strategy, other]), [[other, false]]);
      assert.deepEqual(await searchOwnTrading(undefined, [strategy, other]), [
        [strategy, true],
        [other, false],
      ]);
      const legacy = await legacyCall(service, "getSystemDetails", { systemid: strategy }, ADMIN_KEY);
      assert.equal(legacy.response.trades_own_system_percent, "50");
      assert.equal(legacy.response.trades_own_system_count, "1");

      // Disabled and stopping setups copy nothing: they leave the AUM.
      const off = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        body: { PersonId: second, Account: secondAccount, IsAutotradeEnabled: false },
      });
      assert.equal(off.status, 200, off.text);
      assert.deepEqual(await details(strategy), [120_000, 2, true, 50]);
      const stopped = await stopAutotrade(service, ADMIN_KEY, {
        Account: firstAccount,
        PersonId: first,
        StrategyId: strategy,
        BrokerId: SIMULATED_BROKER,
      });
      assert.equal(stopped.status, 200, stopped.text);
      assert.deepEqual(await details(strategy), [20_000, 1, true, 50]);
      const ownStop = await stopAutotrade(service, ADMIN_KEY, {
        Account: ownAccount,
        PersonId: owner,
        StrategyId: strategy,
        BrokerId: SIMULATED_BROKER,
      });
      assert.equal(ownStop.status, 200, ownStop.text);
      assert.deepEqual(await details(strategy), [0, 0, false, 0]);
    });

    test("a setup another process starts or disables is in the next answer here", async () => {
      const owner = await newCustomer(service, p.siteA);
      const strategy = await newStrategy(service, ADMIN_KEY, owner);
      assert.deepEqual(await details(strategy), [0, 0, false, 0]);
      assert.deepEqual(await details(strategy), [0, 0, false, 0], "asked again, nothing written since");
      const follower = await newCustomer(service, p.siteA);
      const other = await service.sibling();
      try {
        const account = await autotrading(other, follower, strategy);
        assert.deepEqual(await details(strategy), [100_000, 1, false, 0]);
        const off = await other.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
          body: { PersonId: follower, Account: account, IsAutotradeEnabled: false },
        });
        assert.equal(off.status, 200, off.text);
      } finally {
        await other.close();
      }
      assert.deepEqual(await details(strategy), [0, 0, false, 0]);
    });
  });
}
