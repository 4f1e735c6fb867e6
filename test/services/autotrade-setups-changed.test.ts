import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import { Refusal } from "../../src/core/errors.js";
import { startAutotrade, stopAutotrade } from "../../src/services/autotrade-control.js";
import { setAutotradeSettings } from "../../src/services/autotrade-settings.js";
import type { RequestContext } from "../../src/services/runtime.js";
import { brokerAccount, follow, SIMULATED_BROKER } from "../helpers/autotrade.js";
import { newCustomer, newStrategy } from "../helpers/commerce.js";
import { ADMIN_KEY, BACKENDS, startTestService, type TestService } from "../helpers/service.js";
import { callerOf } from "../helpers/services.js";

/**
 * The copier is told which setups changed once their change has committed,
 * and never of a change that rolled back: a start, a flag, a stop.
 */
for (const backend of BACKENDS) {
  describe(`the copier hears of changed setups (${backend})`, () => {
    let service: TestService;
    let heard: number[][];
    let ctx: RequestContext;

    before(async () => {
      service = await startTestService(backend);
      heard = [];
      ctx = {
        ...service.app.runtime,
        caller: await callerOf(service, ADMIN_KEY),
        autotrade: {
          setupsChanged: async (ids) => {
            heard.push([...ids]);
          },
        },
      };
    });
    after(() => service.close());

    test("start, flags and stop each tell it after their commit; a refusal tells it nothing", async () => {
      const person = await newCustomer(service, null);
      const strategy = await newStrategy(service, ADMIN_KEY, person);
      const other = await newStrategy(service, ADMIN_KEY, person);
      await follow(service, person, other);
      const account = await brokerAccount(service, person);
      const start = {
        personId: person,
        account,
        brokerId: SIMULATED_BROKER,
        scalingPercentage: decimal("100"),
        siteId: null,
      };
      const first = await startAutotrade(ctx, { ...start, strategyId: strategy });
      const second = await startAutotrade(ctx, { ...start, strategyId: other });
      assert.deepEqual(heard, [[first], [second]]);

      heard.length = 0;
      const changed = await setAutotradeSettings(ctx, {
        personId: person,
        account,
        brokerId: undefined,
        autotradeEnabled: false,
        syncEnabled: undefined,
      });
      assert.deepEqual(changed, [first, second]);
      assert.deepEqual(heard, [[first, second]]);

      heard.length = 0;
      await assert.rejects(
        startAutotrade(ctx, { ...start, strategyId: strategy, scalingPercentage: decimal("1001") }),
        Refusal,
      );
      await assert.rejects(
        setAutotradeSettings(ctx, {
          personId: person,
          account: "NONE",
          brokerId: undefined,
          autotradeEnabled: true,
          syncEnabled: undefined,
        }),
        Refusal,
      );
      assert.deepEqual(heard, []);

      await stopAutotrade(ctx, {
        personId: person,
        account,
        strategyId: strategy,
        brokerId: null,
        leavePositionsOpen: true,
        terminateSubscription: false,
      });
      assert.deepEqual(heard, [[first]]);
    });

    test("a start answers once the copier holds the setup: the next strategy order is copied by it", async () => {
      const person = await newCustomer(service, null);
      const strategy = await newStrategy(service, ADMIN_KEY, person);
      const account = await brokerAccount(service, person);
      const withDesk: RequestContext = { ...service.app.runtime, caller: ctx.caller };
      await startAutotrade(withDesk, {
        personId: person,
        account,
        brokerId: SIMULATED_BROKER,
        scalingPercentage: decimal("100"),
        siteId: null,
        strategyId: strategy,
      });
      assert.deepEqual(
        [...service.app.desk.followersOf(strategy)].map((f) => f.account.account),
        [account],
      );
    });
  });
}
