import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { follow, followingInNewAccount, settleAutotrade, startAutotrade } from "../helpers/autotrade.js";
import { assertRefused } from "../helpers/refusals.js";
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
import { cancelOrder, MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * The follower's preferences (SetAutotradeSettings beside the spec's flags):
 * set and read back over the API, refused where they cannot stand, kept by a
 * start that modifies the setup, and what the copier and the broker do with
 * each of them.
 */

const kept = (storage: TestStorage): TestStorage => ({ ...storage, dispose: async () => {} });

for (const backend of BACKENDS) {
  describe(`autotrade preferences (${backend})`, () => {
    let fresh: TestStorage;
    let service: TestService;
    let p: Population;

    const settle = () => settleAutotrade(service);
    const setSettings = (body: Record<string, unknown>, server: "WL" | "GEN" | "GEO" = "GEN") =>
      service.call(server, "PUT", "/Autotrade/SetAutotradeSettings", {
        key: ADMIN_KEY,
        body: { PersonId: p.people.personB, ...body },
      });
    const settingsOf = async (account: string) => {
      const r = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSettings", {
        key: ADMIN_KEY,
        query: { PersonId: String(p.people.personB), Account: account },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Record<string, unknown>[];
    };

    /** A strategy of person A and a new account of person B following it. */
    const following = (start: Record<string, unknown> = {}) =>
      followingInNewAccount(service, p, `PREF-${backend}`, { start });
    const trade = async (strategyId: number, side: "buy" | "sell", quantity: number, extra = {}) => {
      const result = await placed(service, p.keys.personA, stockOrder(strategyId, "AAPL", side, quantity, extra));
      await settle();
      return result;
    };
    const ordersOf = (account: string) =>
      service.storage.db
        .selectFrom("account_orders as o")
        .innerJoin("broker_accounts as b", "b.account_id", "o.account_id")
        .select(["o.idempotency_key", "o.side", "o.order_type", "o.quantity", "o.status", "o.reason", "o.as_cfd"])
        .select(["o.virtual_limit", "o.limit_price", "o.purpose"])
        .where("b.account_number", "=", account)
        .orderBy("o.id")
        .execute();
    const atBroker = (account: string) =>
      service.storage.db
        .selectFrom("sim_broker_orders")
        .select(["idempotency_key", "order_type", "as_cfd", "status"])
        .where("account", "=", account)
        .orderBy("created_at")
        .execute();
    const skipsOf = (strategyId: number) =>
      service.storage.db
        .selectFrom("copy_skips")
        .select("reason")
        .where("strategy_id", "=", strategyId)
        .orderBy("id")
        .execute();

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

    test("every preference is set with SetAutotradeSettings and read back; StrategyId narrows to one setup", async () => {
      const first = await following({ EnableFutures: true, EnableForex: true, EnableOptions: true });
      const second = await newStrategy(service, p.keys.personA, 100_000, "Preferred other");
      await follow(service, p.people.personB, second);
      const other = await startAutotrade(service, ADMIN_KEY, {
        Account: first.account,
        PersonId: p.people.personB,
        StrategyId: second,
        EnableStocks: true,
      });
      assert.equal(other.status, 200, other.text);
      const preferences = {
        FuturesLong: false,
        FuturesShort: true,
        MinFutures: 2,
        ForexEnabledLong: true,
        ForexEnabledShort: false,
        ForexLotSize: 10_000,
        MinForex: 20,
        StocksLong: true,
        StocksShort: false,
        TradeStocksAsCFD: true,
        OptionsLong: false,
        MinOptions: 3,
        ClosingOrdersOnly: true,
        IgnoreManualOrders: true,
        VirtualLimitOrdersEnabled: true,
        WillSyncToOpenStocksUSA: false,
        WillSyncToOpenForex: false,
      };
      for (const server of ["WL", "GEN", "GEO"] as const) {
        const r = await setSettings({ Account: first.account, StrategyId: first.strategyId, ...preferences }, server);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.json.Results, [true]);
      }
      const [changed, untouched] = await settingsOf(first.account);
      assert.equal(changed?.StrategyId, first.strategyId);
      for (const [name, value] of Object.entries(preferences)) assert.equal(changed?.[name], value, name);
      // What the start set stays the start's; the markets not named keep syncing.
      assert.equal(changed?.EnabledFutures, true);
      assert.equal(changed?.WillSyncToOpenFuturesUSA, true);
      assert.equal(untouched?.StrategyId, second);
      assert.equal(untouched?.ClosingOrdersOnly, false);
      assert.equal(untouched?.ForexLotSize, 1000);
      assert.equal(untouched?.WillSyncToOpenStocksUSA, true);
      // A start modifying the setup keeps the follower's preferences and takes its own fields.
      const modified = await startAutotrade(service, ADMIN_KEY, {
        Account: first.account,
        PersonId: p.people.personB,
        StrategyId: first.strategyId,
        EnableStocks: true,
        EnableFutures: false,
        MaxFuturesContracts: 5,
      });
      assert.equal(modified.status, 200, modified.text);
      const [after] = await settingsOf(first.account);
      assert.equal(after?.EnabledFutures, false);
      assert.equal(after?.MaxFutures, 5);
      assert.equal(after?.MinFutures, 2);
      assert.equal(after?.ClosingOrdersOnly, true);
      assert.equal(after?.ForexLotSize, 10_000);
      assert.equal(after?.TradeStocksAsCFD, true);
    });

    test("preferences that cannot stand are refused naming the field, and nothing is written", async () => {
      const { strategyId, account } = await following({ EnableFutures: true, MaxFuturesContracts: 3 });
      const second = await newStrategy(service, p.keys.personA, 100_000, "Preferred refusals");
      await follow(service, p.people.personB, second);
      const other = await startAutotrade(service, ADMIN_KEY, {
        Account: account,
        PersonId: p.people.personB,
        StrategyId: second,
        EnableFutures: true,
        MaxFuturesContracts: 10,
      });
      assert.equal(other.status, 200, other.text);
      const before = await settingsOf(account);
      // Fine for the second setup (maximum 10), not for the first (maximum 3): neither changes.
      assertRefused(await setSettings({ Account: account, MinFutures: 5, ClosingOrdersOnly: true }), 400, "MinFutures");
      assertRefused(await setSettings({ Account: account, ForexLotSize: 5000 }), 400, "ForexLotSize");
      assertRefused(await setSettings({ Account: account, MinForex: 5, ForexLotSize: 10_000 }), 400, "MinForex");
      assertRefused(await setSettings({ Account: account, MinOptions: -1 }), 400, "MinOptions");
      assertRefused(await setSettings({ Account: account, StocksShort: "perhaps" }), 400, "StocksShort");
      assertRefused(
        await setSettings({ Account: account, StrategyId: 999_999, ClosingOrdersOnly: true }),
        404,
        "StrategyId",
      );
      assert.deepEqual(await settingsOf(account), before);
      // A start whose maximum is below the follower's minimum is refused naming the start's field.
      assert.equal((await setSettings({ Account: account, StrategyId: second, MinFutures: 5 })).status, 200);
      const lowered = await startAutotrade(service, ADMIN_KEY, {
        Account: account,
        PersonId: p.people.personB,
        StrategyId: second,
        EnableFutures: true,
        MaxFuturesContracts: 4,
      });
      assertRefused(lowered, 400, "MaxFuturesContracts");
      assert.equal((await settingsOf(account)).find((s) => s.StrategyId === second)?.MaxFutures, 10);
      assert.equal(strategyId > 0, true);
    });

    test("StocksShort off skips short-opening copies; ClosingOrdersOnly copies only closes", async () => {
      const { strategyId, account } = await following();
      assert.equal((await setSettings({ Account: account, StocksShort: false })).status, 200);
      await trade(strategyId, "sell", 10);
      assert.deepEqual(await skipsOf(strategyId), [{ reason: "short_disabled" }]);
      await trade(strategyId, "buy", 10);
      await trade(strategyId, "buy", 20);
      const copied = (await ordersOf(account)).filter((o) => o.purpose === "copy");
      assert.equal(copied.length, 1, JSON.stringify(copied));
      assert.equal(copied[0]?.status, "Filled");
      assert.equal((await setSettings({ Account: account, ClosingOrdersOnly: true })).status, 200);
      await trade(strategyId, "buy", 10);
      await trade(strategyId, "sell", 20);
      assert.deepEqual((await skipsOf(strategyId)).at(-1), { reason: "closing_orders_only" });
      const closes = (await ordersOf(account)).filter((o) => o.side === "sell");
      assert.equal(closes.length, 1);
      assert.equal(closes[0]?.status, "Filled");
    });

    test("TradeStocksAsCFD sends stock copies as CFDs, and changes only while the setup holds no stock", async () => {
      const { strategyId, account } = await following();
      assert.equal((await setSettings({ Account: account, TradeStocksAsCFD: true })).status, 200);
      await trade(strategyId, "buy", 10);
      const [copy] = await ordersOf(account);
      assert.equal(copy?.as_cfd, 1);
      assert.deepEqual(
        (await atBroker(account)).map((o) => [o.idempotency_key, o.as_cfd, o.status]),
        [[copy?.idempotency_key, 1, "filled"]],
      );
      assertRefused(await setSettings({ Account: account, TradeStocksAsCFD: false }), 409, "TradeStocksAsCFD");
      assert.equal((await settingsOf(account))[0]?.TradeStocksAsCFD, true);
      // Closing the CFD position closes it as a CFD; flat, the form may change.
      await trade(strategyId, "sell", 10);
      assert.deepEqual(
        (await atBroker(account)).map((o) => o.as_cfd),
        [1, 1],
      );
      assert.equal((await setSettings({ Account: account, TradeStocksAsCFD: false })).status, 200);
    });

    test("a virtual limit copy waits at the service and goes at market once the strategy's limit fills", async () => {
      const { strategyId, account } = await following();
      assert.equal((await setSettings({ Account: account, VirtualLimitOrdersEnabled: true })).status, 200);
      const resting = await trade(strategyId, "buy", 10, { OrderType: "2", Limit: 190 });
      const [waiting] = await ordersOf(account);
      assert.equal(waiting?.status, "PendingNew");
      assert.equal(waiting?.virtual_limit, 1);
      assert.equal(waiting?.order_type, "limit");
      assert.match(waiting?.reason ?? "", /Virtual limit/);
      assert.deepEqual(await atBroker(account), []);
      // The market reaches the strategy's limit: the strategy fills, and its follower at market.
      await setQuote(service, "AAPL", 189.8, 189.9);
      await settle();
      const [released] = await ordersOf(account);
      assert.equal(released?.virtual_limit, 0);
      assert.equal(released?.order_type, "market");
      assert.equal(released?.limit_price, null);
      assert.equal(released?.status, "Filled");
      assert.deepEqual(
        (await atBroker(account)).map((o) => [o.order_type, o.status]),
        [["market", "filled"]],
      );
      // A virtual limit whose strategy order is canceled never reaches the broker.
      const canceled = await trade(strategyId, "buy", 5, { OrderType: "2", Limit: 150 });
      assert.equal((await cancelOrder(service, p.keys.personA, strategyId, canceled.SignalId)).status, 200);
      await settle();
      const last = (await ordersOf(account)).at(-1);
      assert.equal(last?.status, "Canceled");
      assert.equal((await atBroker(account)).length, 1);
      assert.ok(resting.SignalId > 0);
      await setQuote(service, "AAPL", 200, 200.1);
    });

    test("a virtual limit whose strategy order filled while its release was lost is released at the next pass", async () => {
      const { strategyId, account } = await following();
      assert.equal((await setSettings({ Account: account, VirtualLimitOrdersEnabled: true })).status, 200);
      const { SignalId } = await trade(strategyId, "buy", 10, { OrderType: "2", Limit: 150 });
      // As if the copier had consumed the fill and the process stopped before the desk wrote the release.
      await service.storage.db.updateTable("orders").set({ filled_quantity: "4" }).where("id", "=", SignalId).execute();
      await service.app.desk.run();
      await settle();
      const [released] = await ordersOf(account);
      assert.equal(released?.order_type, "market");
      assert.equal(released?.status, "Filled");
      await service.storage.db.updateTable("orders").set({ filled_quantity: "0" }).where("id", "=", SignalId).execute();
      assert.equal((await cancelOrder(service, p.keys.personA, strategyId, SignalId)).status, 200);
      await settle();
    });

    test("IgnoreManualOrders keeps AutoSync on when an order the service did not send executes", async () => {
      const { strategyId, account } = await following();
      const second = await newStrategy(service, p.keys.personA, 100_000, "Preferred manual");
      await follow(service, p.people.personB, second);
      assert.equal(
        (
          await startAutotrade(service, ADMIN_KEY, {
            Account: account,
            PersonId: p.people.personB,
            StrategyId: second,
            EnableStocks: true,
          })
        ).status,
        200,
      );
      assert.equal(
        (await setSettings({ Account: account, StrategyId: strategyId, IgnoreManualOrders: true })).status,
        200,
      );
      await settle();
      const fault = await service.call("GEN", "POST", "/Sandbox/SetBrokerFault", {
        key: ADMIN_KEY,
        body: { Account: account, Fault: "externalExecution", Symbol: "AAPL", Side: "buy", Quantity: 3 },
      });
      assert.equal(fault.status, 200, fault.text);
      await settle();
      const bySetup = new Map((await settingsOf(account)).map((s) => [s.StrategyId, s]));
      assert.equal(bySetup.get(strategyId)?.IsSyncEnabled, true);
      assert.equal(bySetup.get(second)?.IsSyncEnabled, false);
      assert.match(String(bySetup.get(second)?.SyncDisabledReason), /did not send/);
    });
  });
}
