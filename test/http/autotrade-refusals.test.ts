import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { follow, settleAutotrade, startAutotrade } from "../helpers/autotrade.js";
import {
  accountQuery,
  accountsService,
  activeOf,
  brokerFault,
  type Following,
  followingAccount,
  manualOrder,
  positionsOf,
  sendManual,
  startFollowing,
  strategyTrades,
} from "../helpers/autotrade-accounts.js";
import { legacyCall } from "../helpers/legacy.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type CallResult,
  type Population,
  setClock,
  type TestService,
} from "../helpers/service.js";
import { newStrategy, placed, stockOrder } from "../helpers/trading.js";

/**
 * The autotrade operations' refusals and edge paths a client meets but no
 * other test walks: a manual order on an account its broker delinked, an
 * OrderId of digits that cannot be an order's, a manual exit of a CFD
 * holding, starts the setup's state refuses (a strategy no longer alive, a
 * disabled broker, a form change while holding) and the re-enabling start,
 * SyncPositionsToOpen while AutoSync or the copier is mid-change, and the
 * sync report's rows for copies held, ended, skipped or never made.
 */
for (const backend of BACKENDS) {
  describe(`autotrade refusals and edge paths (${backend})`, () => {
    let service: TestService;
    let p: Population;

    /** B's account, holding 50 AAPL: the copy of the strategy's buy of 100. */
    const holding = async (extra: Record<string, unknown> = {}): Promise<Following> => {
      const following = await followingAccount(service, p, { extra });
      await strategyTrades(service, p, following.strategyId, "buy", 100);
      return following;
    };
    const cancel = (following: Following, orderId: string) =>
      accountQuery(service, p.keys.personB, "DELETE", "CancelAutotradeOrder", {
        Account: following.account,
        PersonId: p.people.personB,
        OrderId: orderId,
      });
    const replace = async (following: Following, orderId: string, price: number) => {
      const r = await service.call("GEN", "PUT", "/Autotrade/ReplaceAutotradeOrder", {
        key: p.keys.personB,
        body: { Account: following.account, PersonId: p.people.personB, OrderId: orderId, Price: price },
      });
      await settleAutotrade(service);
      return r;
    };
    /** Every account order and every order the broker holds, in a form to compare before and after. */
    const everything = async () => {
      const db = service.storage.db;
      return {
        orders: await db
          .selectFrom("account_orders")
          .select(["id", "status", "limit_price", "stop_price", "quantity"])
          .orderBy("id")
          .execute(),
        atBroker: await db
          .selectFrom("sim_broker_orders")
          .select(["idempotency_key", "status", "limit_price"])
          .orderBy("idempotency_key")
          .execute(),
      };
    };
    /** The refusal changes no account order, at the service or at the broker. */
    const refusedChangingNothing = async (
      send: () => Promise<CallResult>,
      status: number,
      field: string,
      code: string,
    ) => {
      const before = await everything();
      const r = await send();
      assertRefused(r, status, field, code);
      assert.deepEqual(await everything(), before, "a refusal changed nothing");
      return r;
    };
    const settingsOf = async (account: string) => {
      const r = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSettings", {
        key: ADMIN_KEY,
        query: { PersonId: String(p.people.personB), Account: account },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Record<string, unknown>[];
    };
    const setSettings = async (body: Record<string, unknown>) => {
      const r = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", { key: p.keys.personB, body });
      assert.equal(r.status, 200, r.text);
      await settleAutotrade(service);
    };
    const start = (following: Following, extra: Record<string, unknown> = {}) =>
      startAutotrade(service, ADMIN_KEY, {
        Account: following.account,
        PersonId: p.people.personB,
        StrategyId: following.strategyId,
        EnableStocks: true,
        ...extra,
      });

    /** A new account of B's (50,000 dollars) following an existing strategy of A's; answers its number. */
    const newAccountFollowing = async (strategyId: number, extra: Record<string, unknown> = {}) => {
      const account = `REFUSALS-${backend}-${Math.random().toString(36).slice(2, 8)}`;
      await openSimulatedBrokerAccount(service.app.runtime, {
        personId: p.people.personB,
        brokerId: 1,
        account,
        cash: decimal("50000"),
        paper: false,
      });
      await startFollowing(service, p, strategyId, account, extra);
      return account;
    };
    /** SyncPositionsToOpen for B's account and its strategy, as B asks it; autotrade settles after unless told. */
    const syncNow = async (following: Following, settle = true) => {
      const r = await service.call("GEN", "POST", "/Autotrade/SyncPositionsToOpen", {
        key: p.keys.personB,
        body: {
          Account: following.account,
          PersonId: p.people.personB,
          BrokerId: 1,
          StrategyIds: [following.strategyId],
        },
      });
      assert.equal(r.status, 200, r.text);
      if (settle) await settleAutotrade(service);
      assert.equal(r.json.Results.length, 1, r.text);
      return r.json.Results[0] as { StrategyId: number; Success: boolean; Reason: string; ReasonCode: number };
    };
    /** A strategy holding 100 AAPL before B's account follows it: the account holds none, AutoSync would buy 50. */
    const joinedLate = async (): Promise<Following> => {
      const strategyId = await newStrategy(service, p.keys.personA, 100_000, "Joined late");
      await strategyTrades(service, p, strategyId, "buy", 100);
      return { strategyId, account: await newAccountFollowing(strategyId) };
    };

    /** The sync report's row for the signal (ReportType 2), read as B: what the account works of it, and why not in sync. */
    const signalRow = async (account: string, signalId: number) => {
      const r = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSyncStatusReport", {
        key: p.keys.personB,
        query: { PersonId: String(p.people.personB), Account: account },
      });
      assert.equal(r.status, 200, r.text);
      const rows = (r.json.Results as Record<string, unknown>[]).filter((row) => row.SignalId === signalId);
      assert.equal(rows.length, 1, r.text);
      const [row] = rows as [Record<string, unknown>];
      assert.equal(row.ReportType, 2);
      return [row.AccountQuantity, row.StrategyQuantity, row.ScaledQuantity, row.InSync, row.NotInSyncReason];
    };
    /** The strategy's buy limit of 20 AAPL at 190, resting below the market: its copy is 10 in B's account. */
    const restingBuy = async (following: Following) =>
      (
        await placed(
          service,
          p.keys.personA,
          stockOrder(following.strategyId, "AAPL", "buy", 20, { OrderType: "2", Limit: 190 }),
        )
      ).SignalId;

    before(async () => {
      ({ service, p } = await accountsService(backend, [["MSFT", 400, 400.2]]));
    });
    after(() => service.close());

    test("NewAutotradeOrder on an account its broker delinked: 409 on Account, nothing stored or sent", async () => {
      const following = await holding();
      await brokerFault(service, following.account, { Fault: "delink", Reason: "Authorization revoked" });
      const r = await refusedChangingNothing(
        () => sendManual(service, p.keys.personB, manualOrder(p, following)),
        409,
        "Account",
        "1202",
      );
      assert.match(r.json.ResponseStatus.Errors[0].Message, /is delinked by its broker/);
      // The order's own faults are still said first: a client fixes them whatever the account's state.
      await refusedChangingNothing(
        () => sendManual(service, p.keys.personB, manualOrder(p, following, { OrderType: "1", Limit: undefined })),
        400,
        "Order.OrderType",
        "1101",
      );
    });

    test("an OrderId of digits that no order can have is refused on OrderId (400), a well-formed unknown one is 404", async () => {
      const following = await holding();
      const manual = await sendManual(service, p.keys.personB, manualOrder(p, following));
      assert.equal(manual.status, 200, manual.text);
      const orderId = String(manual.json.Results[0].SignalId);
      // Zero, a leading zero (even of a real order's id), and past the largest exact integer.
      for (const bad of ["0", `0${orderId}`, "9999999999999999"]) {
        const refused = await refusedChangingNothing(() => cancel(following, bad), 400, "OrderId", "1101");
        // The message says what an OrderId is, not merely "digits" (each of these is digits).
        assert.equal(
          refused.json.ResponseStatus.Errors[0].Message,
          `OrderId ${bad} is not an order's OrderId: one is a whole number from 1 to 9007199254740991, without leading zeros`,
        );
        await refusedChangingNothing(() => replace(following, bad, 251), 400, "OrderId", "1101");
      }
      await refusedChangingNothing(() => cancel(following, "9007199254740991"), 404, "OrderId", "2013");
      const [still] = (await activeOf(service, p, following.account)).filter((o) => o.OrderId === orderId);
      assert.deepEqual([still?.OrderStatus, still?.Limit], ["0", 250]);
    });

    test("a manual exit of a holding copied as CFDs goes to the broker as a CFD", async () => {
      const following = await holding({ TradeStocksAsCFD: true });
      const r = await sendManual(service, p.keys.personB, manualOrder(p, following));
      assert.equal(r.status, 200, r.text);
      const forms = await service.storage.db
        .selectFrom("sim_broker_orders")
        .select(["side", "as_cfd"])
        .where("account", "=", following.account)
        .orderBy("side")
        .execute();
      assert.deepEqual(
        forms.map((o) => [o.side, o.as_cfd]),
        [
          ["buy", 1],
          ["sell", 1],
        ],
      );
    });

    test("a start on a setup whose autotrade is off switches it on and records it; a refused start switches nothing", async () => {
      const following = await followingAccount(service, p);
      const events = async () => {
        const r = await service.call("WL", "GET", "/General/GetWlInstrumentationExport", {
          key: p.keys.wlAdminB,
          query: { StartDate: "2026-03-01T00:00:00Z", EndDate: "2026-04-01T00:00:00Z" },
        });
        assert.equal(r.status, 200, r.text);
        return (r.json.Results[0].AutotradeAccountStability as { Account: string; EventType: string; Reason: string }[])
          .filter((e) => e.Account === following.account)
          .map((e) => `${e.EventType}: ${e.Reason}`);
      };
      await setSettings({ Account: following.account, IsAutotradeEnabled: false });
      const off = await events();
      assert.deepEqual(off.slice(-1), ["AutotradeDisabled: Disabled with SetAutotradeSettings"]);
      // DoNotJoinOpenPositions is for new setups only: the whole start is refused, autotrade stays off.
      assertRefused(await start(following, { DoNotJoinOpenPositions: true }), 400, "DoNotJoinOpenPositions", "1101");
      const [still] = await settingsOf(following.account);
      assert.deepEqual(
        [still?.IsAutotradeDisabled, still?.IsAutotradeDisabledReason],
        [true, "Disabled with SetAutotradeSettings"],
      );
      assert.deepEqual(await events(), off);
      // A start that stands switches autotrade on (API.md States) and says so in the account's events, once.
      const restarted = await start(following, { ScalingPercentage: 50 });
      assert.equal(restarted.status, 200, restarted.text);
      await settleAutotrade(service);
      const [on] = await settingsOf(following.account);
      assert.deepEqual(
        [on?.IsAutotradeDisabled, on?.IsAutotradeDisabledReason, on?.ScalingPercentage],
        [false, null, 50],
      );
      assert.deepEqual(await events(), [...off, "AutotradeEnabled: Enabled by StartAutotrade"]);
      assert.equal((await start(following, { ScalingPercentage: 60 })).status, 200);
      assert.deepEqual(await events(), [...off, "AutotradeEnabled: Enabled by StartAutotrade"]);
      // Switched on, the setup copies again: the strategy's buy of 100 is 30 shares (60% of 50,000 against 100,000).
      await strategyTrades(service, p, following.strategyId, "buy", 100);
      assert.deepEqual(
        (await positionsOf(service, p, following.account)).map((x) => x.Quantity),
        [30],
      );
    });

    test("a start on a strategy no longer alive, or at a disabled broker, is refused naming it and writes no setup", async () => {
      // A strategy B follows that its owner then retires (legacy isAlive 0).
      const retired = await newStrategy(service, p.keys.personA, 100_000, "Retired");
      await follow(service, p.people.personB, retired);
      const killed = await legacyCall(
        service,
        "changeSystemAttribute",
        { systemid: retired, isAlive: 0 },
        p.keys.personA,
      );
      assert.deepEqual(killed.success.changes, ["isAlive updated"]);
      const following = await followingAccount(service, p);
      const onRetired = { ...following, strategyId: retired };
      const dead = await refusedChangingNothing(() => start(onRetired), 409, "StrategyId", "1202");
      assert.match(dead.json.ResponseStatus.Errors[0].Message, /is not alive/);
      // A broker the service no longer trades through (no operation disables one: the operator does, in storage).
      const disabled = await service.storage.db
        .insertInto("brokers")
        .values({ name: "Dormant Broker", connection_name: "FIX", is_enabled: 0, created_at: 0 })
        .returning("id")
        .executeTakeFirstOrThrow();
      const atDisabled = await refusedChangingNothing(
        () => start(following, { BrokerId: disabled.id }),
        409,
        "BrokerId",
        "1202",
      );
      assert.match(atDisabled.json.ResponseStatus.Errors[0].Message, /is not enabled/);
      const sync = await service.call("GEN", "POST", "/Autotrade/SyncPositionsToOpen", {
        key: p.keys.personB,
        body: {
          Account: following.account,
          PersonId: p.people.personB,
          BrokerId: disabled.id,
          StrategyIds: [following.strategyId],
        },
      });
      assertRefused(sync, 409, "BrokerId", "1202");
      assert.deepEqual(
        (await settingsOf(following.account)).map((s) => s.StrategyId),
        [following.strategyId],
      );
    });

    test("a start changing TradeStocksAsCFD is refused while the setup holds stock, and taken once it is flat", async () => {
      const following = await holding();
      const refused = await refusedChangingNothing(
        () => start(following, { TradeStocksAsCFD: true, ScalingPercentage: 50 }),
        409,
        "TradeStocksAsCFD",
        "1202",
      );
      assert.match(refused.json.ResponseStatus.Errors[0].Message, /holds stock \(AAPL\)/);
      const [kept] = await settingsOf(following.account);
      assert.deepEqual([kept?.TradeStocksAsCFD, kept?.ScalingPercentage], [false, 100]);
      await strategyTrades(service, p, following.strategyId, "sell", 100);
      assert.deepEqual(await positionsOf(service, p, following.account), []);
      const taken = await start(following, { TradeStocksAsCFD: true, ScalingPercentage: 50 });
      assert.equal(taken.status, 200, taken.text);
      const [changed] = await settingsOf(following.account);
      assert.deepEqual([changed?.TradeStocksAsCFD, changed?.ScalingPercentage], [true, 50]);
    });

    test("SyncPositionsToOpen while an outside execution's AutoSync switch-off is not yet written: AutoSyncDisabled, nothing sent", async () => {
      const following = await joinedLate();
      await brokerFault(service, following.account, {
        Fault: "externalExecution",
        Symbol: "AAPL",
        Side: "buy",
        Quantity: 5,
      });
      const written = await syncNow(following);
      assert.deepEqual([written.Success, written.ReasonCode], [false, 14]);
      assert.match(written.Reason, /An order the service did not send executed in the account \(buy 5 AAPL\)/);
      // The desk turns AutoSync off in its memory at once and writes it with its next batch. Storage put
      // back as it stood before that write: the request finds the setup on in storage, off at the desk.
      await service.storage.db
        .updateTable("autotrade_setups")
        .set({ is_sync_enabled: 1, sync_disabled_reason: null })
        .where("strategy_id", "=", following.strategyId)
        .execute();
      const before = await everything();
      const pending = await syncNow(following);
      assert.deepEqual(pending, {
        StrategyId: following.strategyId,
        Success: false,
        Reason: "AutoSync is disabled: an order the service did not send executed in the account",
        ReasonCode: 14,
      });
      assert.deepEqual(await everything(), before, "no sync order");
      assert.deepEqual(await positionsOf(service, p, following.account), []);
    });

    test("SyncPositionsToOpen while the copier has not taken the strategy's latest event: Busy, nothing sent; then it syncs", async () => {
      const following = await joinedLate();
      const model = service.storage.db.updateTable("accounts").where("strategy_id", "=", following.strategyId);
      // As if the strategy had just committed an event the copier has not taken yet: a sync now could double it.
      await model.set((eb) => ({ event_seq: eb("event_seq", "+", 1) })).execute();
      const before = await everything();
      // Autotrade cannot settle while the copier is behind for good: nothing is waited for.
      const busy = await syncNow(following, false);
      assert.deepEqual(busy, {
        StrategyId: following.strategyId,
        Success: false,
        Reason: "The strategy's latest orders are still being copied: try again shortly",
        ReasonCode: 15,
      });
      assert.deepEqual(await everything(), before, "no sync order");
      await model.set((eb) => ({ event_seq: eb("event_seq", "-", 1) })).execute();
      const synced = await syncNow(following);
      assert.deepEqual(
        [synced.Success, synced.ReasonCode, synced.Reason],
        [true, 0, "Synced now: StocksUSA (1 order)"],
      );
      assert.deepEqual(
        (await positionsOf(service, p, following.account)).map((x) => x.Quantity),
        [50],
      );
    });

    test("the sync report says why a working signal's copy is not working: held for confirmation, canceled, rejected", async () => {
      const held = await followingAccount(service, p);
      await setSettings({ Account: held.account, IsConfirmationNeeded: true });
      const heldSignal = await restingBuy(held);
      await settleAutotrade(service);
      assert.deepEqual(await signalRow(held.account, heldSignal), [
        0,
        20,
        10,
        false,
        "The copy is held until the customer confirms it",
      ]);

      const canceled = await followingAccount(service, p);
      const canceledSignal = await restingBuy(canceled);
      await settleAutotrade(service);
      assert.deepEqual(await signalRow(canceled.account, canceledSignal), [10, 20, 10, true, null]);
      const [copy] = await activeOf(service, p, canceled.account);
      assert.equal((await cancel(canceled, copy?.OrderId as string)).status, 200);
      assert.deepEqual(await signalRow(canceled.account, canceledSignal), [
        0,
        20,
        10,
        false,
        // The broker's cancel carries no reason of its own: the customer's, asked with it, is kept.
        "The copy ended Canceled: Canceled by the customer",
      ]);

      const rejected = await followingAccount(service, p);
      await brokerFault(service, rejected.account, { Fault: "reject", Reason: "Insufficient buying power" });
      const rejectedSignal = await restingBuy(rejected);
      await settleAutotrade(service);
      assert.deepEqual(await signalRow(rejected.account, rejectedSignal), [
        0,
        20,
        10,
        false,
        "The copy ended Rejected: Insufficient buying power",
      ]);
    });

    test("the sync report counts a signal the setup's settings skip as rightly not copied: in sync", async () => {
      const following = await followingAccount(service, p);
      await setSettings({ Account: following.account, StocksShort: false });
      // The strategy, flat, rests a sell above the market: a short the setup does not take.
      const short = await placed(
        service,
        p.keys.personA,
        stockOrder(following.strategyId, "AAPL", "sell", 20, { OrderType: "2", Limit: 250 }),
      );
      await settleAutotrade(service);
      assert.deepEqual(await activeOf(service, p, following.account), []);
      // The copier recorded why it made no copy (the report reads that record, not a guess).
      const skips = await service.storage.db
        .selectFrom("copy_skips")
        .select("reason")
        .where("source_order_id", "=", short.SignalId)
        .execute();
      assert.deepEqual(skips, [{ reason: "short_disabled" }]);
      assert.deepEqual(await signalRow(following.account, short.SignalId), [0, -20, 0, true, null]);
    });

    // Last: it moves the clock past the close.
    test("the sync report scales a stop or market signal working before the setup followed as the copier would", async () => {
      const strategyId = await newStrategy(service, p.keys.personA, 100_000, "Worked before");
      // A buy stop above the market works (GTC) through the close.
      const stop = await placed(
        service,
        p.keys.personA,
        stockOrder(strategyId, "AAPL", "buy", 20, { OrderType: "3", Stop: 250 }),
      );
      // Past the close a market order works until the next open.
      await setClock(service, "2026-03-10T21:00:00Z");
      const market = await placed(service, p.keys.personA, stockOrder(strategyId, "MSFT", "buy", 10));
      // NVDA has no quote at all: nothing to value the copy at against MaxStocksDollars.
      const unpriced = await placed(service, p.keys.personA, stockOrder(strategyId, "NVDA", "buy", 10));
      await settleAutotrade(service);
      const account = await newAccountFollowing(strategyId, { MaxStocksDollars: 25_000 });
      const notCopied =
        "The signal was not copied: it started working before the setup followed the strategy, or while it was off";
      // Half the strategy's quantity (50,000 against 100,000), well under 25,000 dollars at the stop or the market.
      assert.deepEqual(await signalRow(account, stop.SignalId), [0, 20, 10, false, notCopied]);
      assert.deepEqual(await signalRow(account, market.SignalId), [0, 10, 5, false, notCopied]);
      // The copier would have skipped it for want of a price: what it would make of it is not known, not nothing.
      assert.deepEqual(await signalRow(account, unpriced.SignalId), [0, 10, null, false, notCopied]);
    });
  });
}
