import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { autotrading } from "../helpers/autotrade.js";
import { newCustomer, newStrategy } from "../helpers/commerce.js";
import { legacyCall } from "../helpers/legacy.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * Ending a subscription ends its autotrading: WhiteLabelStopSubscription's
 * AutotradePositions (API.md 4.6 rule 3) and the legacy unsubscribe's
 * autoTradePositionsAndOrders say what becomes of the positions.
 */

for (const backend of BACKENDS) {
  describe(`ending an autotraded subscription (${backend})`, () => {
    let service: TestService;
    let p: Population;

    const setupOf = (personId: number, strategyId: number) =>
      service.storage.db
        .selectFrom("autotrade_setups")
        .select(["status", "stop_leave_positions_open"])
        .where("person_id", "=", personId)
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
    const isLive = async (personId: number, strategyId: number) => {
      const row = await service.storage.db
        .selectFrom("subscriptions")
        .select("ended_at")
        .where("person_id", "=", personId)
        .where("strategy_id", "=", strategyId)
        .orderBy("id", "desc")
        .executeTakeFirstOrThrow();
      return row.ended_at === null || row.ended_at > service.app.runtime.clock.nowMs();
    };

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
    });
    after(() => service.close());

    test("WhiteLabelStopSubscription: Immediate on an autotrading customer needs AutotradePositions", async () => {
      const owner = await newCustomer(service, p.siteA);
      const strategy = await newStrategy(service, p.keys.wlAdminA, owner);
      const grant = async (customer: number) => {
        const r = await service.call("WL", "POST", "/Strategies/WhiteLabelStartSubscription", {
          key: p.keys.wlAdminA,
          body: { PersonId: customer, StrategyId: strategy, IdempotencyKey: `grant-${customer}`, Months: 3 },
        });
        assert.equal(r.status, 200, r.text);
      };
      const stop = (customer: number, extra: Record<string, string> = {}) =>
        service.call("WL", "DELETE", "/Strategies/WhiteLabelStopSubscription", {
          key: p.keys.wlAdminA,
          query: { PersonId: String(customer), StrategyId: String(strategy), ...extra },
        });
      const closing = await newCustomer(service, p.siteA);
      await grant(closing);
      await autotrading(service, closing, strategy);
      assertRefused(await stop(closing, { Mode: "Immediate" }), 400, "AutotradePositions", "1102");
      assert.equal(await isLive(closing, strategy), true, "the refusal wrote nothing");
      assertRefused(
        await stop(closing, { Mode: "Immediate", AutotradePositions: "Sometimes" }),
        400,
        "AutotradePositions",
      );
      const endOfTerm = await stop(closing, { Mode: "EndOfTerm" });
      assert.equal(endOfTerm.status, 200, endOfTerm.text);
      assert.equal(
        (await setupOf(closing, strategy)).status,
        "active",
        "access runs to the term's end: so does autotrade",
      );
      const closed = await stop(closing, { Mode: "Immediate", AutotradePositions: "AttemptToClose" });
      assert.equal(closed.status, 200, closed.text);
      assert.deepEqual(await setupOf(closing, strategy), { status: "stop_requested", stop_leave_positions_open: 0 });

      const leaving = await newCustomer(service, p.siteA);
      await grant(leaving);
      await autotrading(service, leaving, strategy);
      const left = await stop(leaving, { Mode: "Immediate", AutotradePositions: "LeaveInPlace" });
      assert.equal(left.status, 200, left.text);
      assert.deepEqual(await setupOf(leaving, strategy), { status: "stop_requested", stop_leave_positions_open: 1 });

      const notAutotrading = await newCustomer(service, p.siteA);
      await grant(notAutotrading);
      const plain = await stop(notAutotrading, { Mode: "Immediate" });
      assert.equal(plain.status, 200, plain.text);
    });

    test("legacy unsubscribeFromStrategy: autoTradePositionsAndOrders required when access ends now", async () => {
      const strategy = await newStrategy(service, ADMIN_KEY, p.people.admin);
      await autotrading(service, p.people.personB, strategy);
      const unsubscribe = (key: string, body: Record<string, unknown> = {}) =>
        legacyCall(service, "unsubscribeFromStrategy", { systemid: strategy, ...body }, key);
      const refused = await unsubscribe(p.keys.personB);
      assert.equal(refused.ok, 0, JSON.stringify(refused));
      assert.match(refused.error.message, /left in place or closed/);
      assert.equal(await isLive(p.people.personB, strategy), true, "the refusal wrote nothing");
      const done = await unsubscribe(p.keys.personB, { autoTradePositionsAndOrders: "attempt_to_close" });
      assert.equal(done.ok, 1, JSON.stringify(done));
      assert.deepEqual(await setupOf(p.people.personB, strategy), {
        status: "stop_requested",
        stop_leave_positions_open: 0,
      });

      // A free subscription's end of term is now: its autotrading stops too.
      await autotrading(service, p.people.personA, strategy);
      const endOfTerm = await unsubscribe(p.keys.personA, { actionType: "unsubscribe_end_of_term" });
      assert.equal(endOfTerm.ok, 0, JSON.stringify(endOfTerm));
      const left = await unsubscribe(p.keys.personA, {
        actionType: "unsubscribe_end_of_term",
        autoTradePositionsAndOrders: "leave_in_place",
      });
      assert.equal(left.ok, 1, JSON.stringify(left));
      assert.deepEqual(await setupOf(p.people.personA, strategy), {
        status: "stop_requested",
        stop_leave_positions_open: 1,
      });
    });
  });
}
