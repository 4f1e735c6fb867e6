import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { followingInNewAccount, settleAutotrade, stopAutotrade } from "../helpers/autotrade.js";
import {
  ADMIN_KEY,
  BACKENDS,
  freshStorage,
  type Population,
  populate,
  startTestService,
  type TestService,
  type TestStorage,
} from "../helpers/service.js";
import { cancelOrder, MARKET_OPEN, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * The copier end to end: strategy orders sent over the API are copied,
 * scaled, into followers' accounts at the simulated broker, and what the
 * broker does comes back through its reports.
 */

/** The storage, left open when a service on it closes (a restart opens another service on it). */
const kept = (storage: TestStorage): TestStorage => ({ ...storage, dispose: async () => {} });

for (const backend of BACKENDS) {
  describe(`the autotrade copier (${backend})`, () => {
    let fresh: TestStorage;
    let service: TestService;
    let p: Population;

    const settle = () => settleAutotrade(service);

    /** A strategy of person A and an account of person B following it; answers both. */
    const following = (extra: Record<string, unknown> = {}, cash = "50000") =>
      followingInNewAccount(service, p, `COPY-${backend}`, { cash, start: { EnableForex: false, ...extra } });

    const ordersOf = (account: string) =>
      service.storage.db
        .selectFrom("account_orders as o")
        .innerJoin("broker_accounts as b", "b.account_id", "o.account_id")
        .select([
          "o.symbol",
          "o.side",
          "o.open_close",
          "o.order_type",
          "o.quantity",
          "o.status",
          "o.reason",
          "o.idempotency_key",
          "o.source_order_id",
          "o.purpose",
        ])
        .where("b.account_number", "=", account)
        .orderBy("o.id")
        .execute();
    const heldBy = async (account: string, symbol = "AAPL") => {
      const row = await service.storage.db
        .selectFrom("autotrade_positions as p")
        .innerJoin("broker_accounts as b", "b.account_id", "p.account_id")
        .select("p.quantity")
        .where("b.account_number", "=", account)
        .where("p.symbol", "=", symbol)
        .executeTakeFirst();
      return row?.quantity ?? "0";
    };
    const atBroker = async (account: string, symbol = "AAPL") => {
      const held = await service.app.brokers.simulated.positions({ brokerId: 1, account });
      const position = held.find((h) => h.symbol === symbol);
      return position ? String(Number(position.quantity) / 1e8) : "0";
    };
    const fault = async (account: string, body: Record<string, unknown>) => {
      const r = await service.call("GEN", "POST", "/Sandbox/SetBrokerFault", {
        key: ADMIN_KEY,
        body: { Account: account, ...body },
      });
      assert.equal(r.status, 200, r.text);
      await settle();
    };
    const trade = async (
      strategyId: number,
      side: "buy" | "sell",
      quantity: number,
      extra: Record<string, unknown> = {},
    ) => {
      const result = await placed(service, p.keys.personA, stockOrder(strategyId, "AAPL", side, quantity, extra));
      await settle();
      return result;
    };

    /** The copier alone: AutoSync would bring the account to the scaled holding at a pass whatever the copier did. */
    const withoutAutoSync = async (account: string) => {
      const r = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        key: ADMIN_KEY,
        body: { PersonId: p.people.personB, Account: account, IsAutoSyncEnabled: false },
      });
      assert.equal(r.status, 200, r.text);
    };

    before(async () => {
      fresh = await freshStorage(backend);
      service = await startTestService(backend, { storage: kept(fresh), marketFeed: { kind: "manual" } });
      p = await populate(service);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { key: ADMIN_KEY, body: { Now: MARKET_OPEN } });
      await setQuote(service, "AAPL", 200, 200.1);
    });
    after(async () => {
      await service.close();
      await fresh.dispose();
    });

    test("a strategy market order is copied, scaled by the accounts' values, and fills at the broker", async () => {
      const { strategyId, account } = await following();
      await trade(strategyId, "buy", 100);
      const [copy] = await ordersOf(account);
      assert.equal(copy?.quantity, "50");
      assert.equal(copy?.status, "Filled");
      assert.equal(copy?.purpose, "copy");
      assert.equal(await heldBy(account), "50");
      assert.equal(await atBroker(account), "50");
    });

    test("a partial close follows in proportion, and the strategy's last close takes the follower flat", async () => {
      const { strategyId, account } = await following({ ScalingPercentage: 30 }, "100000");
      await trade(strategyId, "buy", 100);
      assert.equal(await heldBy(account), "30");
      await trade(strategyId, "sell", 40);
      assert.equal(await heldBy(account), "18");
      await trade(strategyId, "sell", 60);
      assert.equal(await heldBy(account), "0");
      assert.equal(await atBroker(account), "0");
      const quantities = (await ordersOf(account)).map((o) => `${o.side} ${o.quantity} ${o.status}`);
      assert.deepEqual(quantities, ["buy 30 Filled", "sell 12 Filled", "sell 18 Filled"]);
    });

    test("a resting limit order is copied to the broker and canceled with the strategy's", async () => {
      const { strategyId, account } = await following();
      const { SignalId } = await trade(strategyId, "buy", 10, { OrderType: "2", Limit: 150 });
      assert.deepEqual(
        (await ordersOf(account)).map((o) => [o.order_type, o.quantity, o.status]),
        [["limit", "5", "Working"]],
      );
      const canceled = await cancelOrder(service, p.keys.personA, strategyId, SignalId);
      assert.equal(canceled.status, 200, canceled.text);
      await settle();
      assert.deepEqual(
        (await ordersOf(account)).map((o) => o.status),
        ["Canceled"],
      );
    });

    test("what the setup forbids is skipped, with its reason recorded", async () => {
      const { strategyId, account } = await following({ EnableStocks: false, EnableFutures: true });
      const { SignalId } = await trade(strategyId, "buy", 10);
      assert.deepEqual(await ordersOf(account), []);
      const skips = await service.storage.db
        .selectFrom("copy_skips")
        .select(["reason", "source_order_id"])
        .where("strategy_id", "=", strategyId)
        .execute();
      assert.deepEqual(skips, [{ reason: "class_disabled", source_order_id: SignalId }]);
    });

    test("the broker refusing a copy ends it rejected with the broker's reason, nothing else applied", async () => {
      const { strategyId, account } = await following();
      await fault(account, { Fault: "reject", Reason: "Insufficient buying power" });
      await trade(strategyId, "buy", 10);
      const [copy] = await ordersOf(account);
      assert.equal(copy?.status, "Rejected");
      assert.equal(copy?.reason, "Insufficient buying power");
      assert.equal(await heldBy(account), "0");
    });

    test("a partly filled copy is closed when the strategy goes flat", async () => {
      const { strategyId, account } = await following({}, "100000");
      await fault(account, { Fault: "partialFill", Fraction: 0.5 });
      await trade(strategyId, "buy", 10);
      assert.equal(await heldBy(account), "5");
      await fault(account, { Fault: "clear" });
      await trade(strategyId, "sell", 10);
      assert.equal(await heldBy(account), "0");
      assert.equal(await atBroker(account), "0");
    });

    test("a close the broker refused is made again at a pass, though the strategy rested and canceled an opening order meanwhile", async () => {
      const { strategyId, account } = await following();
      await withoutAutoSync(account);
      await trade(strategyId, "buy", 2);
      assert.equal(await heldBy(account), "1");
      await fault(account, { Fault: "reject", Count: 10_000, Reason: "Refused by the test" });
      await trade(strategyId, "sell", 2);
      assert.equal(await heldBy(account), "1", "the close was refused");
      // Copied (and refused) while the strategy is flat, then canceled unfilled: the strategy never opened again.
      const { SignalId } = await trade(strategyId, "buy", 2, { OrderType: "2", Limit: 150 });
      const canceled = await cancelOrder(service, p.keys.personA, strategyId, SignalId);
      assert.equal(canceled.status, 200, canceled.text);
      await fault(account, { Fault: "clear" });
      await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 1 } });
      await settle();
      assert.equal(await heldBy(account), "0", "the follower follows the strategy to flat");
      assert.equal(await atBroker(account), "0");
    });

    test("a follower's opening copy that fills while the strategy is flat is not closed by the follow to flat", async () => {
      const { strategyId, account } = await following();
      await withoutAutoSync(account);
      await trade(strategyId, "buy", 2);
      await trade(strategyId, "sell", 2);
      assert.equal(await heldBy(account), "0");
      // The strategy's limit rests below the market; the follower's copy fills when the market comes down to it.
      await trade(strategyId, "buy", 4, { OrderType: "2", Limit: 190 });
      try {
        await setQuote(service, "AAPL", 189.9, 190);
        await settle();
        assert.equal(await heldBy(account), "2");
        await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 1 } });
        await settle();
        assert.equal(await heldBy(account), "2", "the opened holding stays");
      } finally {
        await setQuote(service, "AAPL", 200, 200.1);
      }
    });

    test("a stop is requested at once and applied on the desk's next pass: orders canceled, positions closed", async () => {
      const { strategyId, account } = await following();
      await trade(strategyId, "buy", 20);
      await trade(strategyId, "buy", 10, { OrderType: "2", Limit: 150 });
      const stopped = await stopAutotrade(service, ADMIN_KEY, {
        Account: account,
        PersonId: p.people.personB,
        StrategyId: strategyId,
        BrokerId: 1,
      });
      assert.equal(stopped.status, 200, stopped.text);
      const requested = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSettings", {
        key: ADMIN_KEY,
        query: { PersonId: String(p.people.personB), Account: account },
      });
      assert.equal(requested.json.Results[0].IsAutotradeDisabledReason, "Stop requested");
      await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 1 } });
      await settle();
      assert.equal(await heldBy(account), "0");
      assert.deepEqual(
        (await ordersOf(account)).map((o) => `${o.purpose} ${o.side} ${o.quantity} ${o.status}`),
        ["copy buy 10 Filled", "copy buy 5 Canceled", "close sell 10 Filled"],
      );
      const setup = await service.storage.db
        .selectFrom("autotrade_setups")
        .select(["status", "live_key"])
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(setup, { status: "stopped", live_key: null });
      // A stopped setup copies nothing more.
      await trade(strategyId, "buy", 10);
      assert.equal((await ordersOf(account)).length, 3);
    });

    test("the automatic stop loss rests beside the strategy's exits and closes the holding at its loss", async () => {
      const { strategyId, account } = await following({ AutoStopLossDollars: 100 });
      await trade(strategyId, "buy", 100);
      const resting = (await ordersOf(account)).filter((o) => o.purpose === "auto_stop");
      // 50 bought at 200.1: 100 dollars of loss is 2 dollars a share.
      assert.deepEqual(
        resting.map((o) => `${o.side} ${o.quantity} ${o.order_type} ${o.status}`),
        ["sell 50 stop Working"],
      );
      const stop = await service.storage.db
        .selectFrom("account_orders")
        .select("stop_price")
        .where("idempotency_key", "=", resting[0]?.idempotency_key ?? "")
        .executeTakeFirstOrThrow();
      assert.equal(stop.stop_price, "198.1");
      // The strategy's own exit for part of the holding: the stop follows what is left.
      await trade(strategyId, "sell", 40);
      const after = (await ordersOf(account)).filter((o) => o.purpose === "auto_stop");
      assert.deepEqual(
        after.map((o) => `${o.quantity} ${o.status}`),
        ["50 Canceled", "30 Working"],
      );
      // 30 left at 200.1: the stop moved to 196.77 (100 dollars over 30 shares, rounded up to the cent).
      const moved = await service.storage.db
        .selectFrom("account_orders")
        .select("stop_price")
        .where("idempotency_key", "=", after[1]?.idempotency_key ?? "")
        .executeTakeFirstOrThrow();
      assert.equal(moved.stop_price, "196.77");
      await setQuote(service, "AAPL", 197, 197.1);
      await settle();
      assert.equal(await heldBy(account), "30");
      await setQuote(service, "AAPL", 196.5, 196.6);
      await settle();
      assert.equal(await heldBy(account), "0");
      assert.equal(await atBroker(account), "0");
      // The strategy closes later: the follower has nothing left to close.
      await setQuote(service, "AAPL", 200, 200.1);
      await trade(strategyId, "sell", 60);
      assert.equal(await heldBy(account), "0");
    });

    test("a setup whose person no longer follows the strategy is stopped on the next pass, positions left open", async () => {
      const { strategyId, account } = await following();
      await trade(strategyId, "buy", 10);
      const nowMs = service.app.runtime.clock.nowMs();
      await service.storage.db
        .updateTable("subscriptions")
        .set({ ended_at: nowMs })
        .where("person_id", "=", p.people.personB)
        .where("strategy_id", "=", strategyId)
        .execute();
      await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 1 } });
      await settle();
      const setup = await service.storage.db
        .selectFrom("autotrade_setups")
        .select("status")
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.equal(setup.status, "stopped");
      assert.equal(await heldBy(account), "5");
      await trade(strategyId, "buy", 10);
      assert.equal((await ordersOf(account)).length, 1);
    });

    test("a delink disables autotrade with the broker's reason, and nothing more is copied", async () => {
      const { strategyId, account } = await following();
      await fault(account, { Fault: "delink", Reason: "Authorization revoked" });
      const setup = await service.storage.db
        .selectFrom("autotrade_setups")
        .select(["is_autotrade_enabled", "autotrade_disabled_reason"])
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.equal(setup.is_autotrade_enabled, 0);
      assert.match(setup.autotrade_disabled_reason ?? "", /delinked the account: Authorization revoked/);
      await trade(strategyId, "buy", 10);
      assert.deepEqual(await ordersOf(account), []);
    });

    test("an order the service did not send executing in the account disables AutoSync", async () => {
      const { strategyId, account } = await following();
      await fault(account, { Fault: "externalExecution", Symbol: "AAPL", Side: "buy", Quantity: 3 });
      const setup = await service.storage.db
        .selectFrom("autotrade_setups")
        .select(["is_sync_enabled", "sync_disabled_reason", "is_autotrade_enabled"])
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
      assert.equal(setup.is_sync_enabled, 0);
      assert.equal(setup.is_autotrade_enabled, 1);
      assert.match(setup.sync_disabled_reason ?? "", /did not send/);
    });

    test("an option held at expiry: the strategy's settlement is not copied, the broker settles the follower's own", async () => {
      const { strategyId, account } = await following({ EnableOptions: true });
      const call = "AAPL260320C00150000";
      await setQuote(service, call, 5, 5.1);
      await placed(service, p.keys.personA, stockOrder(strategyId, call, "buy", 4));
      await settle();
      assert.equal(await heldBy(account, call), "2");
      // AAPL at 160 as the option expires; midnight in New York after its expiry date, every model and broker
      // account is settled.
      await setQuote(service, "AAPL", 159.9, 160.1);
      try {
        await service.call("GEN", "POST", "/Sandbox/SetClock", {
          key: ADMIN_KEY,
          body: { Now: "2026-03-21T04:00:00Z" },
        });
        await settle();
        assert.deepEqual(
          (await ordersOf(account)).map((o) => `${o.side} ${o.quantity} ${o.status} ${o.purpose}`),
          ["buy 2 Filled copy"],
          "the settlement order of the strategy made no order in the account",
        );
        const skips = await service.storage.db
          .selectFrom("copy_skips")
          .select("reason")
          .where("strategy_id", "=", strategyId)
          .execute();
        assert.deepEqual(skips, []);
        assert.equal(await atBroker(account, call), "0");
        assert.equal(await heldBy(account, call), "0", "the broker's settlement reached the account's holdings");
        const setup = await service.storage.db
          .selectFrom("autotrade_setups")
          .select(["is_sync_enabled", "is_autotrade_enabled"])
          .where("strategy_id", "=", strategyId)
          .executeTakeFirstOrThrow();
        assert.deepEqual(setup, { is_sync_enabled: 1, is_autotrade_enabled: 1 }, "a settlement is no outside trade");
      } finally {
        await service.call("GEN", "POST", "/Sandbox/SetClock", { key: ADMIN_KEY, body: { Now: MARKET_OPEN } });
        await setQuote(service, "AAPL", 200, 200.1);
      }
    });

    // Two processes in one test process: SQLite's synchronous driver would have each connection wait on the other.
    test("two processes holding the same unsent copy send it to the broker once", {
      skip: backend === "sqlite",
    }, async () => {
      const { strategyId, account } = await following();
      await fault(account, { Fault: "disconnect" });
      await trade(strategyId, "buy", 10);
      await fault(account, { Fault: "reconnect" });
      const [unsent] = await ordersOf(account);
      assert.equal(unsent?.status, "PendingNew");
      // The second process reads the unsent copy at its start and sends it; the first sends it on its pass.
      const sibling = await service.sibling();
      try {
        await Promise.all([
          service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 0 } }),
          sibling.app.desk.run(),
        ]);
        await settle();
        await sibling.app.desk.settled();
        const atTheBroker = await service.storage.db
          .selectFrom("sim_broker_orders")
          .select((eb) => eb.fn.countAll<number | string>().as("n"))
          .where("idempotency_key", "=", unsent?.idempotency_key ?? "")
          .executeTakeFirstOrThrow();
        assert.equal(Number(atTheBroker.n), 1);
      } finally {
        await sibling.close();
      }
    });

    test("a copy made while the broker is unreachable is sent once, under its key, after a restart", async () => {
      const { strategyId, account } = await following();
      await fault(account, { Fault: "disconnect" });
      await trade(strategyId, "buy", 10);
      const [unsent] = await ordersOf(account);
      assert.equal(unsent?.status, "PendingNew");
      await service.close();
      service = await startTestService(backend, {
        storage: { ...fresh, dispose: async () => {} },
        marketFeed: { kind: "manual" },
      });
      await setQuote(service, "AAPL", 200, 200.1);
      await fault(account, { Fault: "reconnect" });
      await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 1 } });
      await settle();
      const [sent] = await ordersOf(account);
      assert.equal(sent?.status, "Filled");
      const atTheBroker = await service.storage.db
        .selectFrom("sim_broker_orders")
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .where("idempotency_key", "=", sent?.idempotency_key ?? "")
        .executeTakeFirstOrThrow();
      assert.equal(Number(atTheBroker.n), 1);
      assert.equal(await heldBy(account), "5");
    });
  });
}
