import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { currentOrNextSession, US_EQUITIES } from "../../src/core/sessions.js";
import { applyClockSetting } from "../../src/services/clock.js";
import { settleAutotrade } from "../helpers/autotrade.js";
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
import { clockTo, heldIn, lastSyncOf, strategyTrade, syncFollower, syncOrdersOf } from "../helpers/sync.js";
import { newStrategy, setQuote } from "../helpers/trading.js";

/**
 * AutoSync's rules, over HTTP: what it brings an account back to after the
 * copier could not (a rejected copy, a close missed while disabled, a
 * reversal), what it leaves alone (DoNotSyncToOpen, DoNotJoinOpenPositions
 * until the strategy is flat, an account whose AutoSync an external
 * execution turned off, a market whose WillSyncToOpen is off), that it
 * never doubles an order (another pass in the session, a held sync order,
 * the copier's copies on the way, a second process), and that a setup
 * joining during a session is synced at once.
 */

/** US stocks' trading days from February 3, 2026 (not Presidents' Day, the 16th), with each one's open. */
const DAYS = Array.from({ length: 60 }, (_, i) => new Date(Date.UTC(2026, 1, 3 + i)).toISOString().slice(0, 10)).filter(
  (d) => {
    const session = currentOrNextSession(US_EQUITIES, Date.parse(`${d}T00:00:00Z`));
    return new Date(session.opensAtMs).toISOString().startsWith(d);
  },
);
const openOf = (d: string) => currentOrNextSession(US_EQUITIES, Date.parse(`${d}T00:00:00Z`)).opensAtMs;

const kept = (storage: TestStorage): TestStorage => ({ ...storage, dispose: async () => {} });

for (const backend of BACKENDS) {
  describe(`AutoSync's rules (${backend})`, () => {
    let fresh: TestStorage;
    let service: TestService;
    let p: Population;
    let day = 0;
    let strategies = 0;

    /** The next trading day (the clock only moves forward here). */
    const nextDay = () => {
      const next = DAYS[day];
      day += 1;
      assert.ok(next, "out of trading days");
      return next;
    };
    /** During the session, and after the close. */
    const during = (d: string) => clockTo(service, `${d}T16:00:00Z`);
    const afterClose = (d: string) => clockTo(service, `${d}T21:30:00Z`);
    /** A minute before the US open, then the open. */
    const open = async (d: string) => {
      await clockTo(service, new Date(openOf(d) - 60_000).toISOString());
      await clockTo(service, 60);
    };
    const strategy = async () => {
      strategies += 1;
      return newStrategy(service, p.keys.personA, 100_000, `Synced ${strategies}`);
    };
    const trade = (strategyId: number, symbol: string, side: "buy" | "sell", quantity: number, extra = {}) =>
      strategyTrade(service, p.keys.personA, strategyId, symbol, side, quantity, extra);
    const settings = async (account: string, body: Record<string, unknown>) => {
      const r = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        key: ADMIN_KEY,
        body: { PersonId: p.people.personB, Account: account, ...body },
      });
      assert.equal(r.status, 200, r.text);
      await settleAutotrade(service);
    };
    const fault = async (account: string, body: Record<string, unknown>) => {
      const r = await service.call("GEN", "POST", "/Sandbox/SetBrokerFault", {
        key: ADMIN_KEY,
        body: { Account: account, ...body },
      });
      assert.equal(r.status, 200, r.text);
      await settleAutotrade(service);
    };
    const reportOf = async (account: string) => {
      const r = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSyncStatusReport", {
        key: ADMIN_KEY,
        query: { PersonId: String(p.people.personB), Account: account },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results as {
        ReportType: number;
        ServiceSymbol: { FullSymbol: string };
        InSync: boolean;
        NotInSyncReason: string | null;
        AccountQuantity: number;
        ScaledQuantity: number | null;
      }[];
    };
    const positionRow = async (account: string, symbol: string) => {
      const row = (await reportOf(account)).find((r) => r.ReportType === 1 && r.ServiceSymbol.FullSymbol === symbol);
      assert.ok(row, `a report row for ${symbol}`);
      return row;
    };
    const follower = (strategyId: number, extra: Record<string, unknown> = {}) =>
      syncFollower(service, p.people.personB, strategyId, extra, "50000");
    /** During the next day's session: a new strategy, and a follower that joined it before it traded. */
    const followedFromTheStart = async () => {
      await during(nextDay());
      const strategyId = await strategy();
      return { strategyId, account: await follower(strategyId) };
    };
    /** A new strategy holding these positions, bought during the next day's session; a follower joins after its close. */
    const joinedAfterTheClose = async (
      positions: readonly (readonly [string, number, Record<string, unknown>?])[],
      extra: Record<string, unknown> = {},
    ) => {
      const d = nextDay();
      await during(d);
      const strategyId = await strategy();
      for (const [symbol, quantity, order] of positions) await trade(strategyId, symbol, "buy", quantity, order ?? {});
      await afterClose(d);
      return { strategyId, account: await follower(strategyId, extra) };
    };
    const quantities = async (account: string) =>
      (await syncOrdersOf(service, account)).map((o) => `${o.side} ${o.open_close} ${o.quantity} ${o.status}`);

    before(async () => {
      fresh = await freshStorage(backend);
      service = await startTestService(backend, { storage: kept(fresh), marketFeed: { kind: "manual" } });
      p = await populate(service);
      await during(DAYS[0] as string);
      await setQuote(service, "AAPL", 200, 200.1);
      await setQuote(service, "MSFT", 400, 400.1);
    });
    after(async () => {
      await service.close();
      await fresh.dispose();
    });

    test("a copy the broker rejected is made up at the next open, once: later passes make nothing more", async () => {
      const { strategyId, account } = await followedFromTheStart();
      await fault(account, { Fault: "reject", Reason: "Account restricted for the day" });
      await trade(strategyId, "AAPL", "buy", 100);
      assert.equal(await heldIn(service, account, "AAPL"), "0");
      assert.equal((await positionRow(account, "AAPL")).ScaledQuantity, 50);
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "50");
      assert.deepEqual(await quantities(account), ["buy open 50 Filled"]);
      // More passes in the same session, and the next day's open with the account in sync, make no order.
      await clockTo(service, 600);
      await clockTo(service, `${DAYS[day - 1]}T19:00:00Z`);
      await open(nextDay());
      assert.deepEqual(await quantities(account), ["buy open 50 Filled"]);
      assert.equal((await positionRow(account, "AAPL")).InSync, true);
      const lastSync = await lastSyncOf(service, p.people.personB, account);
      assert.equal(lastSync.StocksUSA, new Date(openOf(DAYS[day - 1] as string)).toISOString());
    });

    test("a close missed while autotrade was off is made at the next open once autotrade is on again", async () => {
      const { strategyId, account } = await followedFromTheStart();
      await trade(strategyId, "AAPL", "buy", 100);
      assert.equal(await heldIn(service, account, "AAPL"), "50");
      await settings(account, { IsAutotradeEnabled: false });
      await trade(strategyId, "AAPL", "sell", 100);
      assert.equal(await heldIn(service, account, "AAPL"), "50");
      // While autotrade is off nothing is synced either.
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "50");
      assert.match((await positionRow(account, "AAPL")).NotInSyncReason ?? "", /Autotrade is disabled/);
      await settings(account, { IsAutotradeEnabled: true });
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "0");
      assert.deepEqual(await quantities(account), ["sell close 50 Filled"]);
    });

    test("a reversal the account missed is a close then an open", async () => {
      const { strategyId, account } = await followedFromTheStart();
      await trade(strategyId, "AAPL", "buy", 100);
      await settings(account, { IsAutotradeEnabled: false });
      await trade(strategyId, "AAPL", "sell", 100);
      await trade(strategyId, "AAPL", "sell", 100);
      await settings(account, { IsAutotradeEnabled: true });
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "-50");
      assert.deepEqual(await quantities(account), ["sell close 50 Filled", "sell open 50 Filled"]);
    });

    test("a position opened with DoNotSyncToOpen is not joined at the open, the strategy's others are", async () => {
      const { strategyId, account } = await joinedAfterTheClose([
        ["AAPL", 100, { DoNotSyncToOpen: true }],
        ["MSFT", 10],
      ]);
      await open(nextDay());
      assert.equal(await heldIn(service, account, "MSFT"), "5");
      assert.equal(await heldIn(service, account, "AAPL"), "0");
      const aapl = await positionRow(account, "AAPL");
      assert.equal(aapl.ScaledQuantity, 50);
      assert.match(aapl.NotInSyncReason ?? "", /DoNotSyncToOpen/);
      // Flat and open again without the mark: the next open joins it.
      await settings(account, { IsAutotradeEnabled: false });
      await during(DAYS[day - 1] as string);
      await trade(strategyId, "AAPL", "sell", 100);
      await trade(strategyId, "AAPL", "buy", 100);
      await settings(account, { IsAutotradeEnabled: true });
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "50");
    });

    test("DoNotJoinOpenPositions: the positions open at the start are skipped until the strategy is flat in them", async () => {
      const { strategyId, account } = await joinedAfterTheClose(
        [
          ["AAPL", 100],
          ["MSFT", 10],
        ],
        { DoNotJoinOpenPositions: true },
      );
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "0");
      assert.equal(await heldIn(service, account, "MSFT"), "0");
      // The strategy goes flat in AAPL and opens it again while the follower copies nothing.
      await settings(account, { IsAutotradeEnabled: false });
      await trade(strategyId, "AAPL", "sell", 100);
      await trade(strategyId, "AAPL", "buy", 100);
      await settings(account, { IsAutotradeEnabled: true });
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "50", "a new trade is synced");
      assert.equal(await heldIn(service, account, "MSFT"), "0", "still the position open at the start");
      assert.match((await positionRow(account, "MSFT")).NotInSyncReason ?? "", /DoNotJoinOpenPositions/);
    });

    test("an external execution turns AutoSync off: no sync fights it until AutoSync is on again", async () => {
      const { strategyId, account } = await followedFromTheStart();
      await trade(strategyId, "AAPL", "buy", 100);
      await fault(account, { Fault: "externalExecution", Symbol: "AAPL", Side: "sell", Quantity: 50 });
      await settings(account, { IsAutotradeEnabled: false });
      await trade(strategyId, "AAPL", "buy", 100);
      await settings(account, { IsAutotradeEnabled: true });
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "50");
      assert.deepEqual(await syncOrdersOf(service, account), []);
      const row = await positionRow(account, "AAPL");
      assert.equal(row.InSync, false);
      assert.match(row.NotInSyncReason ?? "", /AutoSync is disabled: An order the service did not send/);
      await settings(account, { IsAutoSyncEnabled: true });
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "100");
    });

    test("a market whose WillSyncToOpen is off is not synced at its open (the flags as stored)", async () => {
      const { account } = await joinedAfterTheClose([["AAPL", 100]]);
      const row = await service.storage.db
        .selectFrom("autotrade_setups as s")
        .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
        .select(["s.id", "s.sync_to_open"])
        .where("b.account_number", "=", account)
        .executeTakeFirstOrThrow();
      const flags = { ...JSON.parse(row.sync_to_open), StocksUSA: false };
      await service.storage.db
        .updateTable("autotrade_setups")
        .set({ sync_to_open: JSON.stringify(flags) })
        .where("id", "=", row.id)
        .execute();
      await open(nextDay());
      assert.equal(await heldIn(service, account, "AAPL"), "0");
      assert.equal((await lastSyncOf(service, p.people.personB, account)).StocksUSA, null);
      assert.match((await positionRow(account, "AAPL")).NotInSyncReason ?? "", /WillSyncToOpenStocksUSA is off/);
    });

    test("a setup joining during a session is synced at the next pass, not at the next open", async () => {
      const d1 = nextDay();
      await during(d1);
      const strategyId = await strategy();
      await trade(strategyId, "AAPL", "buy", 100);
      const account = await follower(strategyId);
      assert.equal(await heldIn(service, account, "AAPL"), "0");
      await clockTo(service, 60);
      assert.equal(await heldIn(service, account, "AAPL"), "50");
      assert.equal((await lastSyncOf(service, p.people.personB, account)).StocksUSA, `${d1}T16:01:00.000Z`);
    });

    test("a sync order held for the customer's confirmation is not doubled at the next open", async () => {
      const { account } = await joinedAfterTheClose([["AAPL", 100]]);
      await settings(account, { IsConfirmationNeeded: true });
      await open(nextDay());
      await open(nextDay());
      assert.deepEqual(await quantities(account), ["buy open 50 PendingNew"]);
      const row = await positionRow(account, "AAPL");
      assert.match(row.NotInSyncReason ?? "", /market orders of the setup are still working/i);
      // Confirmed, it goes to the broker and fills.
      const [held] = await syncOrdersOf(service, account);
      const accountId = (
        await service.storage.db
          .selectFrom("broker_accounts")
          .select("account_id")
          .where("account_number", "=", account)
          .executeTakeFirstOrThrow()
      ).account_id;
      assert.equal(service.app.desk.decide(accountId, held?.idempotency_key ?? "", true), true);
      await settleAutotrade(service);
      assert.equal(await heldIn(service, account, "AAPL"), "50");
    });

    test("while the copier has not copied the strategy's latest events the sync waits for it", async () => {
      const { strategyId, account } = await joinedAfterTheClose([["AAPL", 100]]);
      const db = service.storage.db;
      // As if the strategy had just committed an event the copier has not taken yet.
      await db
        .updateTable("accounts")
        .set((eb) => ({ event_seq: eb("event_seq", "+", 1) }))
        .where("strategy_id", "=", strategyId)
        .execute();
      // The clock moves without waiting for the copier (it is behind for good until put back).
      const at = new Date(openOf(nextDay())).toISOString();
      const moved = await service.call("GEN", "POST", "/Sandbox/SetClock", { key: ADMIN_KEY, body: { Now: at } });
      assert.equal(moved.status, 200, moved.text);
      assert.deepEqual(await syncOrdersOf(service, account), []);
      assert.equal((await lastSyncOf(service, p.people.personB, account)).StocksUSA, null);
      await db
        .updateTable("accounts")
        .set((eb) => ({ event_seq: eb("event_seq", "-", 1) }))
        .where("strategy_id", "=", strategyId)
        .execute();
      await clockTo(service, 60);
      assert.equal(await heldIn(service, account, "AAPL"), "50");
    });

    // Two processes in one test process: SQLite's synchronous driver would have each connection wait on the other.
    test("two processes passing at the same open sync each setup once", { skip: backend === "sqlite" }, async () => {
      const { account } = await joinedAfterTheClose([["AAPL", 100]]);
      const sibling = await service.sibling();
      try {
        const d2 = nextDay();
        // Hand quotes live in each process's memory: the sibling's broker needs its own to fill.
        await setQuote(sibling, "AAPL", 200, 200.1);
        // Both clocks at the open, and both passes at once (no clock move's own pass before them).
        for (const process of [service, sibling])
          await applyClockSetting(process.storage, process.app.runtime.clock, { kind: "fixed", atMs: openOf(d2) });
        await Promise.all([service.app.autoSync.run(), sibling.app.autoSync.run()]);
        await settleAutotrade(service);
        await settleAutotrade(sibling);
        assert.equal((await syncOrdersOf(service, account)).length, 1);
        assert.equal(await heldIn(service, account, "AAPL"), "50");
      } finally {
        await sibling.close();
      }
    });
  });
}
