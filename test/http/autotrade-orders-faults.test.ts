import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import { settleAutotrade } from "../helpers/autotrade.js";
import {
  accountQuery,
  accountsService,
  activeOf,
  brokerFault,
  type Following,
  followingAccount,
  historyOf,
  manualOrder,
  sendManual,
  strategyTrades,
} from "../helpers/autotrade-accounts.js";
import { assertRefused } from "../helpers/refusals.js";
import { ADMIN_KEY, BACKENDS, type Population, type TestService } from "../helpers/service.js";

/**
 * Manual orders when the broker misbehaves (POST /Sandbox/SetBrokerFault):
 * a refused placement, a broker not reached (the order waits and is sent once,
 * under its key, when it is back), a cancel and a replace the broker could
 * not take (the order rolls back to working as it was).
 */
for (const backend of BACKENDS) {
  describe(`manual orders and broker faults (${backend})`, () => {
    let service: TestService;
    let p: Population;

    const holding = async (): Promise<Following> => {
      const following = await followingAccount(service, p);
      await strategyTrades(service, p, following.strategyId, "buy", 100);
      return following;
    };
    const atBroker = (key: string) =>
      service.storage.db
        .selectFrom("sim_broker_orders")
        .select(["status", "limit_price", "idempotency_key"])
        .where("idempotency_key", "=", key)
        .execute();
    const keyOf = async (orderId: number) =>
      (
        await service.storage.db
          .selectFrom("account_orders")
          .select("idempotency_key")
          .where("id", "=", orderId)
          .executeTakeFirstOrThrow()
      ).idempotency_key;
    const resting = async (following: Following) => {
      const r = await sendManual(service, p.keys.personB, manualOrder(p, following));
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0].SignalId as number;
    };
    const cancel = (following: Following, orderId: number) =>
      accountQuery(service, p.keys.personB, "DELETE", "CancelAutotradeOrder", {
        Account: following.account,
        PersonId: p.people.personB,
        OrderId: orderId,
      });
    const replace = async (following: Following, orderId: number, price: number) => {
      const r = await service.call("GEN", "PUT", "/Autotrade/ReplaceAutotradeOrder", {
        key: p.keys.personB,
        body: { Account: following.account, PersonId: p.people.personB, OrderId: String(orderId), Price: price },
      });
      await settleAutotrade(service);
      return r;
    };
    const statusOf = async (following: Following, orderId: number) => {
      const working = (await activeOf(service, p, following.account)).find((o) => o.Id === orderId);
      const ended = (await historyOf(service, p, following.account)).find((o) => o.Id === orderId);
      return working ?? ended;
    };

    before(async () => {
      ({ service, p } = await accountsService(backend));
    });
    after(() => service.close());

    test("the broker refuses the placement: 409 with its reason, the order kept as rejected, the holding untouched", async () => {
      const following = await holding();
      await brokerFault(service, following.account, { Fault: "reject", Reason: "Short sale restricted" });
      const r = await sendManual(service, p.keys.personB, manualOrder(p, following));
      assertRefused(r, 409, "Order", "2010");
      assert.match(r.json.ResponseStatus.Errors[0].Message, /The broker rejected the order: Short sale restricted/);
      const orderId = Number(r.json.ResponseStatus.Errors[0].Meta.OrderId);
      const rejected = await statusOf(following, orderId);
      assert.deepEqual([rejected?.OrderStatus, rejected?.RejectMessage], ["8", "Short sale restricted"]);
      // The rejected order covers nothing: the whole holding may still be closed.
      const all = await sendManual(service, p.keys.personB, manualOrder(p, following, { OrderQuantity: 50 }));
      assert.equal(all.status, 200, all.text);
    });

    test("the broker not reached: the order waits unsent, then goes once under its key (a client's retry replays it)", async () => {
      const following = await holding();
      await brokerFault(service, following.account, { Fault: "disconnect" });
      const headers = { "Idempotency-Key": `disconnect-${backend}` };
      const body = manualOrder(p, following);
      const r = await sendManual(service, p.keys.personB, body, "GEN", headers);
      assert.equal(r.status, 200, r.text);
      const orderId = r.json.Results[0].SignalId as number;
      assert.equal((await statusOf(following, orderId))?.OrderStatus, "A");
      const key = await keyOf(orderId);
      assert.deepEqual(await atBroker(key), []);
      // The desk's pass while still disconnected tries again, and fails again: nothing sent.
      await service.app.desk.run();
      assert.deepEqual(await atBroker(key), []);
      // The client retries the same request: answered as the first time, no second order.
      const retried = await sendManual(service, p.keys.personB, body, "GEN", headers);
      assert.equal(retried.text, r.text);
      await brokerFault(service, following.account, { Fault: "reconnect" });
      await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 1 } });
      await settleAutotrade(service);
      assert.deepEqual(
        (await atBroker(key)).map((o) => o.status),
        ["working"],
      );
      assert.equal((await statusOf(following, orderId))?.OrderStatus, "0");
      const manuals = (await activeOf(service, p, following.account)).filter((o) => o.Info === "Manual exit order");
      assert.equal(manuals.length, 1);
    });

    test("a cancel the broker cannot take is refused (409) and the order works on; once reachable it is canceled", async () => {
      const following = await holding();
      const orderId = await resting(following);
      await brokerFault(service, following.account, { Fault: "disconnect" });
      const refused = await cancel(following, orderId);
      assertRefused(refused, 409, "OrderId", "2011");
      assert.match(refused.json.ResponseStatus.Errors[0].Message, /could not be reached/);
      assert.equal((await statusOf(following, orderId))?.OrderStatus, "0");
      assert.deepEqual(
        (await atBroker(await keyOf(orderId))).map((o) => o.status),
        ["working"],
      );
      await brokerFault(service, following.account, { Fault: "reconnect" });
      const canceled = await cancel(following, orderId);
      assert.equal(canceled.status, 200, canceled.text);
      assert.equal((await statusOf(following, orderId))?.OrderStatus, "4");
    });

    /**
     * The broker fills the order just as the cancel or replace reaches it: it answers
     * cancelRejected or replaceRejected after the fill, and the order ends filled.
     */
    const crossingAFill = async (ask: "cancel" | "replace") => {
      const following = await holding();
      const orderId = await resting(following);
      const broker = service.app.brokers.simulated;
      const fillFirst = { symbol: "AAPL", bid: decimal("250"), ask: decimal("250.1"), last: decimal("250") };
      const original = broker[ask].bind(broker);
      broker[ask] = (async (...args: Parameters<typeof original>) => {
        broker.quoteChanged({ ...fillFirst, bidSize: null, askSize: null, atMs: service.app.runtime.clock.nowMs() });
        return (original as (...a: typeof args) => Promise<void>)(...args);
      }) as typeof broker.cancel & typeof broker.replace;
      try {
        const r = ask === "cancel" ? await cancel(following, orderId) : await replace(following, orderId, 260);
        assertRefused(r, 409, "OrderId", "2011");
        assert.match(r.json.ResponseStatus.Errors[0].Message, /is Filled: it is no longer open/);
      } finally {
        broker[ask] = original as typeof broker.cancel & typeof broker.replace;
      }
      const after = await statusOf(following, orderId);
      assert.deepEqual([after?.OrderStatus, after?.FilledQuantity, after?.Limit], ["2", 10, 250]);
      assert.deepEqual(
        (await atBroker(await keyOf(orderId))).map((o) => o.status),
        ["filled"],
      );
    };

    test("a cancel that crosses a fill at the broker: cancelRejected, the order filled, answered 409", async () => {
      await crossingAFill("cancel");
    });

    test("a replace that crosses a fill at the broker: replaceRejected, the order filled at its price, answered 409", async () => {
      await crossingAFill("replace");
    });

    test("a replace the broker cannot take is refused (409): the order rolls back to working at its old price", async () => {
      const following = await holding();
      const orderId = await resting(following);
      await brokerFault(service, following.account, { Fault: "disconnect" });
      const refused = await replace(following, orderId, 260);
      assertRefused(refused, 409, "OrderId", "2011");
      const after = await statusOf(following, orderId);
      assert.deepEqual([after?.OrderStatus, after?.Limit], ["0", 250]);
      assert.deepEqual(
        (await atBroker(await keyOf(orderId))).map((o) => o.limit_price),
        ["250"],
      );
      await brokerFault(service, following.account, { Fault: "reconnect" });
      const replaced = await replace(following, orderId, 260);
      assert.equal(replaced.status, 200, replaced.text);
      assert.deepEqual(
        (await atBroker(await keyOf(orderId))).map((o) => o.limit_price),
        ["260"],
      );
    });
  });
}
