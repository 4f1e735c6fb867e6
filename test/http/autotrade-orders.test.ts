import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import { insertBrokerAccount } from "../../src/services/broker-accounts.js";
import { settleAutotrade } from "../helpers/autotrade.js";
import {
  accountQuery,
  accountsService,
  activeOf,
  followingAccount,
  historyOf,
  manualOrder,
  positionsOf,
  sendManual,
  startFollowing,
  strategyTrades,
} from "../helpers/autotrade-accounts.js";
import { assertRefused } from "../helpers/refusals.js";
import { ADMIN_KEY, BACKENDS, type Population, type TestService } from "../helpers/service.js";
import { newStrategy } from "../helpers/trading.js";

/**
 * Reading an autotraded account over HTTP: GetAutotradeActiveOrders,
 * GetAutotradeHistoricalOrders (paged, filtered) and GetAutoTradeOpenPositions
 * (whose query names no person: the caller may name the accounts of the
 * people it acts on, and BrokerId picks one of two accounts of one number).
 */
for (const backend of BACKENDS) {
  describe(`autotrade account reads (${backend})`, () => {
    let service: TestService;
    let p: Population;

    before(async () => {
      ({ service, p } = await accountsService(backend, [["MSFT", 400, 400.2]]));
    });
    after(() => service.close());

    test("working orders: copies with the signal they copy, the service's own, manual ones; a strategy's only when named", async () => {
      const following = await followingAccount(service, p, { extra: { AutoStopLossDollars: 100 } });
      const buy = await strategyTrades(service, p, following.strategyId, "buy", 100);
      const resting = await strategyTrades(service, p, following.strategyId, "buy", 10, { OrderType: "2", Limit: 150 });
      const manual = await sendManual(service, p.keys.personB, manualOrder(p, following, { OrderQuantity: 5 }));
      assert.equal(manual.status, 200, manual.text);
      // A second strategy in the same account.
      const second = await newStrategy(service, p.keys.personA, 100_000, `Second ${backend}`);
      await startFollowing(service, p, second, following.account);
      await strategyTrades(service, p, second, "buy", 10, { OrderType: "2", Limit: 390 }, "MSFT");
      const active = await activeOf(service, p, following.account);
      assert.deepEqual(
        active.map((o) => [o.StrategyId, o.SignalId, o.Info, o.OrderType, o.Side, o.OrderQuantity, o.OrderStatus]),
        [
          [following.strategyId, null, "Automatic stop loss (AutoStopLossDollars)", "3", "2", 50, "0"],
          [following.strategyId, resting.SignalId, null, "2", "1", 5, "0"],
          [following.strategyId, null, "Manual exit order", "2", "2", 5, "0"],
          [second, active[3]?.SignalId, null, "2", "1", 5, "0"],
        ],
      );
      assert.ok(typeof active[3]?.SignalId === "number");
      for (const order of active) {
        assert.equal(order.OrderId, String(order.Id));
        assert.equal(order.BrokerId, 1);
        assert.equal(typeof order.PostedDate, "string");
        assert.deepEqual(Object.keys(order.ServiceSymbol as object).includes("FullSymbol"), true);
      }
      const onlySecond = await activeOf(service, p, following.account, { StrategyId: String(second) });
      assert.deepEqual(
        onlySecond.map((o) => o.StrategyId),
        [second],
      );
      // The filled buy is history, not working.
      assert.equal(
        active.some((o) => o.SignalId === buy.SignalId),
        false,
      );
      const [filled] = await historyOf(service, p, following.account, { OrderStatus: "2" });
      assert.deepEqual(
        [filled?.SignalId, filled?.FilledQuantity, filled?.AvgFillPrice, filled?.SignalType],
        [buy.SignalId, 50, 200.1, 1],
      );
      // Positions: per strategy, by symbol.
      assert.deepEqual(
        (await positionsOf(service, p, following.account)).map((x) => [
          x.StrategyId,
          x.ServiceSymbol.FullSymbol,
          x.Quantity,
          x.AvgPx,
        ]),
        [[following.strategyId, "AAPL", 50, 200.1]],
      );
    });

    test("the history: ended orders, paged oldest first (or newest first), filtered by status, strategy and posting time", async () => {
      const following = await followingAccount(service, p);
      await strategyTrades(service, p, following.strategyId, "buy", 100);
      const postedFrom = new Date(service.app.runtime.clock.nowMs()).toISOString();
      await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 60 } });
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) {
        const sent = await sendManual(
          service,
          p.keys.personB,
          manualOrder(p, following, { OrderQuantity: 1, Limit: 300 + i }),
        );
        ids.push(sent.json.Results[0].SignalId);
        const canceled = await accountQuery(service, p.keys.personB, "DELETE", "CancelAutotradeOrder", {
          Account: following.account,
          PersonId: p.people.personB,
          OrderId: sent.json.Results[0].SignalId,
        });
        assert.equal(canceled.status, 200, canceled.text);
      }
      const all = await historyOf(service, p, following.account);
      assert.deepEqual(
        all.map((o) => o.OrderStatus),
        ["2", "4", "4", "4", "4", "4"],
      );
      // Each was at the broker: its cancel's reason is kept once the broker confirms it.
      assert.deepEqual(
        all.slice(1).map((o) => o.Info),
        Array(5).fill("Canceled by the customer"),
      );
      // Pages of two, forward then back.
      const page = (extra: Record<string, string>) =>
        accountQuery(service, p.keys.personB, "GET", "GetAutotradeHistoricalOrders", {
          Account: following.account,
          PersonId: p.people.personB,
          OrderStatus: "4",
          Limit: 2,
          ...extra,
        });
      const first = await page({});
      assert.deepEqual(
        first.json.Results.map((o: { Id: number }) => o.Id),
        ids.slice(0, 2),
      );
      assert.equal(first.json.Pagination.prev_cursor, null);
      const second = await page({ Cursor: first.json.Pagination.next_cursor });
      assert.deepEqual(
        second.json.Results.map((o: { Id: number }) => o.Id),
        ids.slice(2, 4),
      );
      const third = await page({ Cursor: second.json.Pagination.next_cursor });
      assert.deepEqual(
        third.json.Results.map((o: { Id: number }) => o.Id),
        ids.slice(4),
      );
      assert.equal(third.json.Pagination.next_cursor, null);
      const back = await page({ Cursor: second.json.Pagination.prev_cursor });
      assert.deepEqual(
        back.json.Results.map((o: { Id: number }) => o.Id),
        ids.slice(0, 2),
      );
      const newest = await page({ AscendingOrder: "false" });
      assert.deepEqual(
        newest.json.Results.map((o: { Id: number }) => o.Id),
        [ids[4], ids[3]],
      );
      // A cursor belongs to its query.
      assertRefused(await page({ Cursor: first.json.Pagination.next_cursor, OrderStatus: "2" }), 400, "Cursor", "1104");
      // Posting time: [StartDate, EndDate).
      const later = await historyOf(service, p, following.account, {
        StartDate: new Date(Date.parse(postedFrom) + 30_000).toISOString(),
      });
      assert.deepEqual(
        later.map((o) => o.Id),
        ids,
      );
      const earlier = await historyOf(service, p, following.account, {
        EndDate: new Date(Date.parse(postedFrom) + 30_000).toISOString(),
      });
      assert.deepEqual(
        earlier.map((o) => o.OrderStatus),
        ["2"],
      );
      assert.deepEqual(
        await historyOf(service, p, following.account, { StrategyId: String(following.strategyId), OrderStatus: "8" }),
        [],
      );
      // A broker's rejection is history too, with its message.
      await service.call("GEN", "POST", "/Sandbox/SetBrokerFault", {
        body: { Account: following.account, Fault: "reject", Reason: "Outside regular hours" },
      });
      const rejected = await sendManual(service, p.keys.personB, manualOrder(p, following, { OrderQuantity: 1 }));
      assertRefused(rejected, 409, "Order", "2010");
      const [record] = await historyOf(service, p, following.account, { OrderStatus: "8" });
      assert.deepEqual([record?.OrderStatus, record?.RejectMessage], ["8", "Outside regular hours"]);
    });

    test("the reads' refusals name their field", async () => {
      const following = await followingAccount(service, p);
      const read = (operation: string, query: Record<string, string | number>, key = p.keys.personB) =>
        accountQuery(service, key, "GET", operation, query);
      const owned = { Account: following.account, PersonId: p.people.personB };
      for (const operation of ["GetAutotradeActiveOrders", "GetAutotradeHistoricalOrders", "GetDashBoard"]) {
        assertRefused(await read(operation, { Account: following.account }), 400, "PersonId", "1102");
        assertRefused(await read(operation, { PersonId: p.people.personB }), 400, "Account", "1102");
        assertRefused(await read(operation, owned, p.keys.personA), 403, "PersonId", "1002");
        assertRefused(await read(operation, owned, p.keys.wlAdminA), 403, "PersonId", "1002");
        assertRefused(await read(operation, { ...owned, PersonId: 999_999 }, ADMIN_KEY), 404, "PersonId", "2013");
        assertRefused(await read(operation, { ...owned, Account: "NO-SUCH" }), 404, "Account", "2013");
        assertRefused(await read(operation, { ...owned, BrokerId: 7 }), 404, "Account", "2013");
      }
      assertRefused(
        await read("GetAutotradeActiveOrders", { ...owned, StrategyId: 999_999 }),
        404,
        "StrategyId",
        "2013",
      );
      const history = (query: Record<string, string | number>) =>
        read("GetAutotradeHistoricalOrders", { ...owned, ...query });
      assertRefused(await history({ OrderStatus: "0" }), 400, "OrderStatus", "1101");
      assertRefused(await history({ OrderStatus: "Z" }), 400, "OrderStatus", "1101");
      assertRefused(
        await history({ StartDate: "2026-03-02T00:00:00Z", EndDate: "2026-03-02T00:00:00Z" }),
        400,
        "EndDate",
        "1101",
      );
      assertRefused(await history({ StartDate: "yesterday" }), 400, "StartDate", "1101");
      assertRefused(await history({ StrategyId: 999_999 }), 404, "StrategyId", "2013");
      assertRefused(await history({ Limit: 0 }), 400, "Limit", "1101");
      assertRefused(await read("GetAutoTradeOpenPositions", {}), 400, "Account", "1102");
      assertRefused(
        await read("GetAutoTradeOpenPositions", { Account: following.account, StrategyId: 999_999 }),
        404,
        "StrategyId",
        "2013",
      );
    });

    test("GetAutoTradeOpenPositions: the accounts of people the caller acts on; BrokerId picks between two brokers' accounts of one number", async () => {
      const following = await followingAccount(service, p);
      await strategyTrades(service, p, following.strategyId, "buy", 100);
      const positions = (key: string, query: Record<string, string | number> = {}) =>
        accountQuery(service, key, "GET", "GetAutoTradeOpenPositions", { Account: following.account, ...query });
      for (const key of [p.keys.personB, p.keys.wlAdminB, ADMIN_KEY]) {
        const r = await positions(key);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(
          r.json.Results.map((x: { Quantity: number }) => x.Quantity),
          [50],
        );
      }
      // Another's account is not there for them.
      for (const key of [p.keys.personA, p.keys.wlAdminA, p.keys.geoAdmin])
        assertRefused(await positions(key), 404, "Account", "2013");
      // The same number at a second broker, also B's.
      const other = await service.storage.db
        .insertInto("brokers")
        .values({ name: `Other ${backend}`, connection_name: "Other", is_enabled: 1, created_at: 0 })
        .returning("id")
        .executeTakeFirstOrThrow();
      await insertBrokerAccount(
        service.storage.db,
        {
          personId: p.people.personB,
          brokerId: other.id,
          account: following.account,
          cash: decimal("1000"),
          paper: false,
        },
        service.app.runtime.clock.nowMs(),
      );
      const ambiguous = await positions(p.keys.personB);
      assertRefused(ambiguous, 400, "BrokerId", "1102");
      assert.deepEqual(ambiguous.json.ResponseStatus.Errors[0].Meta, { BrokerIds: [1, other.id] });
      const atFirst = await positions(p.keys.personB, { BrokerId: 1 });
      assert.deepEqual(
        atFirst.json.Results.map((x: { Quantity: number }) => x.Quantity),
        [50],
      );
      const atOther = await positions(p.keys.personB, { BrokerId: other.id });
      assert.deepEqual(atOther.json.Results, []);
      // The reads naming the person are ambiguous the same way.
      const active = await accountQuery(service, p.keys.personB, "GET", "GetAutotradeActiveOrders", {
        Account: following.account,
        PersonId: p.people.personB,
      });
      assertRefused(active, 400, "BrokerId", "1102");
      await settleAutotrade(service);
    });
  });
}
