import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import { setSiteSettings } from "../../src/services/commerce-admin.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { follow, settleAutotrade, startAutotrade } from "../helpers/autotrade.js";
import {
  ADMIN_KEY,
  advanceClock,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { assertRefused, MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * GetRule575Status over HTTP (WL): copy fills at the simulated broker judged
 * against the strategy's fills: in line, worse by more than the tolerance
 * (a buy above, a sell below), outside the window, the site's own terms;
 * automatic stops are not copies; summaries, filters, pages and refusals.
 */
const DAY = { StartDate: "2026-03-10T00:00:00Z", EndDate: "2026-03-11T00:00:00Z" };

for (const backend of BACKENDS) {
  describe(`GetRule575Status (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let accounts = 0;

    const settle = () => settleAutotrade(service);
    /** A strategy of the administrator's, followed 1:1 by a new account of person A (a customer of site A). */
    const followed = async (extra: Record<string, unknown> = {}) => {
      accounts += 1;
      const strategyId = await newStrategy(service, ADMIN_KEY, 100_000, `Rule 575 ${accounts}`);
      const account = `R575-${backend}-${accounts}`;
      await openSimulatedBrokerAccount(service.app.runtime, {
        personId: p.people.personA,
        brokerId: 1,
        account,
        cash: decimal("100000"),
        paper: false,
      });
      await follow(service, p.people.personA, strategyId);
      const started = await startAutotrade(service, ADMIN_KEY, {
        Account: account,
        PersonId: p.people.personA,
        StrategyId: strategyId,
        EnableStocks: true,
        ...extra,
      });
      assert.equal(started.status, 200, started.text);
      await settle();
      return { strategyId, account };
    };
    const fault = async (account: string, body: Record<string, unknown>) => {
      const r = await service.call("GEN", "POST", "/Sandbox/SetBrokerFault", { body: { Account: account, ...body } });
      assert.equal(r.status, 200, r.text);
    };
    const trade = async (strategyId: number, side: "buy" | "sell", quantity: number) => {
      const order = await placed(service, ADMIN_KEY, stockOrder(strategyId, "AAPL", side, quantity));
      await settle();
      return order.SignalId;
    };
    const report = (query: Record<string, string>, key = p.keys.wlAdminA) =>
      service.call("WL", "GET", "/Strategies/GetRule575Status", { key, query: { ...DAY, ...query } });
    const statusOf = async (query: Record<string, string>, key = p.keys.wlAdminA) => {
      const r = await report(query, key);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.Results.length, 1);
      return r.json.Results[0];
    };

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      p = await populate(service);
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 200, 200.1);
    });
    after(() => service.close());

    test("a copy filled at the strategy's price is no exception, and is counted", async () => {
      const { strategyId } = await followed();
      await trade(strategyId, "buy", 10);
      const status = await statusOf({ StrategyId: String(strategyId) });
      assert.equal(status.WhiteLabelSiteId, p.siteA);
      assert.equal(status.ToleranceBps, 25);
      assert.equal(status.WindowSeconds, 60);
      assert.equal(status.IsDefaultTolerance, true);
      assert.equal(status.StrategyId, strategyId);
      assert.deepEqual(status.Total, {
        CopyFills: 1,
        ExceptionFills: 0,
        SlippageExceptions: 0,
        WindowExceptions: 0,
        WorstSlippageBps: 0,
        WorstSlippageFillId: status.Total.WorstSlippageFillId,
      });
      assert.deepEqual(
        status.Strategies.map((s: { StrategyId: number; CopyFills: number }) => [s.StrategyId, s.CopyFills]),
        [[strategyId, 1]],
      );
      assert.deepEqual(
        status.Days.map((d: { Date: string }) => d.Date),
        ["2026-03-10"],
      );
      assert.deepEqual(status.ExceptionFills, []);
    });

    test("a buy copy filled higher than the strategy by more than the tolerance is slippage", async () => {
      const { strategyId, account } = await followed();
      await fault(account, { Fault: "delay", Seconds: 30 });
      const signalId = await trade(strategyId, "buy", 10);
      await setQuote(service, "AAPL", 200.8, 200.9);
      await advanceClock(service, 30);
      await settle();
      await fault(account, { Fault: "clear" });
      await setQuote(service, "AAPL", 200, 200.1);
      const status = await statusOf({ StrategyId: String(strategyId) });
      assert.equal(status.Total.ExceptionFills, 1);
      assert.equal(status.Total.SlippageExceptions, 1);
      assert.equal(status.Total.WindowExceptions, 0);
      assert.equal(status.Total.WorstSlippageBps, 39.98);
      const [fill] = status.ExceptionFills;
      assert.equal(fill.SignalId, signalId);
      assert.equal(fill.Account, account);
      assert.equal(fill.PersonId, p.people.personA);
      assert.equal(fill.Side, "1");
      assert.equal(fill.Quantity, 10);
      assert.equal(fill.Price, 200.9);
      assert.equal(fill.StrategyAvgFillPrice, 200.1);
      assert.equal(fill.StrategyFilledQuantity, 10);
      assert.equal(fill.Slippage, 0.8);
      assert.equal(fill.SlippageBps, 39.98);
      assert.deepEqual(fill.Reasons, ["Slippage"]);
      assert.equal(fill.ServiceSymbol.FullSymbol, "AAPL");
      assert.equal(Date.parse(fill.WindowEndDate) - Date.parse(fill.StrategyLastFillDate), 60_000);
      assert.equal(Date.parse(fill.FilledDate) - Date.parse(fill.StrategyFirstFillDate), 30_000);
      assert.equal(status.Total.WorstSlippageFillId, fill.Id);
    });

    test("a copy filled after the window is an exception however good its price", async () => {
      const { strategyId, account } = await followed();
      await fault(account, { Fault: "delay", Seconds: 120 });
      await trade(strategyId, "buy", 10);
      await advanceClock(service, 120);
      await settle();
      await fault(account, { Fault: "clear" });
      const status = await statusOf({ StrategyId: String(strategyId) });
      assert.deepEqual(
        status.ExceptionFills.map((f: { Reasons: string[]; Slippage: number }) => [f.Reasons, f.Slippage]),
        [[["OutsideWindow"], 0]],
      );
      assert.equal(status.Total.WindowExceptions, 1);
    });

    test("for a sell copy, worse is lower", async () => {
      const { strategyId, account } = await followed();
      await trade(strategyId, "buy", 10);
      await fault(account, { Fault: "delay", Seconds: 30 });
      await trade(strategyId, "sell", 10);
      await setQuote(service, "AAPL", 199.4, 199.5);
      await advanceClock(service, 30);
      await settle();
      await fault(account, { Fault: "clear" });
      await setQuote(service, "AAPL", 200, 200.1);
      const status = await statusOf({ StrategyId: String(strategyId) });
      assert.equal(status.Total.CopyFills, 2);
      const [fill] = status.ExceptionFills;
      assert.equal(fill.Side, "2");
      assert.equal(fill.Price, 199.4);
      assert.equal(fill.StrategyAvgFillPrice, 200);
      assert.equal(fill.SlippageBps, 30);
      assert.deepEqual(fill.Reasons, ["Slippage"]);
    });

    test("the site's own tolerance and window, set by an operator, decide; default returns to the service's", async () => {
      const runtime = service.app.runtime;
      const all = await statusOf({});
      assert.ok(all.Total.SlippageExceptions >= 2 && all.Total.WindowExceptions >= 1, JSON.stringify(all.Total));
      await setSiteSettings(runtime, p.siteA, { rule575ToleranceBps: decimal("40"), rule575WindowSeconds: 150 });
      try {
        const lenient = await statusOf({});
        assert.equal(lenient.ToleranceBps, 40);
        assert.equal(lenient.WindowSeconds, 150);
        assert.equal(lenient.IsDefaultTolerance, false);
        assert.equal(lenient.IsDefaultWindow, false);
        assert.equal(lenient.Total.CopyFills, all.Total.CopyFills);
        assert.equal(lenient.Total.ExceptionFills, 0, JSON.stringify(lenient.ExceptionFills));
      } finally {
        await setSiteSettings(runtime, p.siteA, { rule575ToleranceBps: null, rule575WindowSeconds: null });
      }
      assert.deepEqual((await statusOf({})).Total, all.Total);
    });

    test("automatic stops are not copies: their fills are not judged", async () => {
      const { strategyId } = await followed({ AutoStopLossDollars: 10 });
      await trade(strategyId, "buy", 10);
      await setQuote(service, "AAPL", 198, 198.1);
      await settle();
      await setQuote(service, "AAPL", 200, 200.1);
      const fills = await service.storage.db
        .selectFrom("account_fills as f")
        .innerJoin("account_orders as o", "o.id", "f.account_order_id")
        .select("o.purpose")
        .where("f.strategy_id", "=", strategyId)
        .orderBy("f.id")
        .execute();
      assert.deepEqual(
        fills.map((f) => f.purpose),
        ["copy", "auto_stop"],
      );
      const status = await statusOf({ StrategyId: String(strategyId) });
      assert.equal(status.Total.CopyFills, 1);
      assert.deepEqual(status.ExceptionFills, []);
    });

    test("pages walk the exception fills; the summaries are the window's on every page", async () => {
      const first = await report({ Limit: "1" });
      assert.equal(first.status, 200, first.text);
      const status = first.json.Results[0];
      assert.equal(status.ExceptionFills.length, 1);
      assert.ok(status.Total.ExceptionFills >= 3);
      const seen = [status.ExceptionFills[0].Id];
      let cursor = first.json.Pagination.next_cursor;
      while (cursor) {
        const next = await report({ Limit: "1", Cursor: cursor });
        assert.equal(next.status, 200, next.text);
        assert.deepEqual(next.json.Results[0].Total, status.Total);
        seen.push(...next.json.Results[0].ExceptionFills.map((f: { Id: number }) => f.Id));
        cursor = next.json.Pagination.next_cursor;
      }
      assert.equal(seen.length, status.Total.ExceptionFills);
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => a - b),
      );
      const newest = await report({ Limit: "1", AscendingOrder: "false" });
      assert.equal(newest.json.Results[0].ExceptionFills[0].Id, seen.at(-1));
    });

    test("the window, the strategy filter and the site bound what is judged", async () => {
      const before = await statusOf({ StartDate: "2026-03-09T00:00:00Z", EndDate: "2026-03-10T00:00:00Z" });
      assert.equal(before.Total.CopyFills, 0);
      assert.deepEqual(before.Strategies, []);
      const none = await statusOf({ StrategyId: "999999" });
      assert.equal(none.Total.CopyFills, 0);
      const siteB = await statusOf({}, p.keys.wlAdminB);
      assert.equal(siteB.WhiteLabelSiteId, p.siteB);
      assert.equal(siteB.Total.CopyFills, 0);
      const byAdmin = await statusOf({ WhiteLabelSiteId: String(p.siteA) }, ADMIN_KEY);
      assert.deepEqual(byAdmin.Total, (await statusOf({})).Total);
      // A later day is summarized apart.
      const { strategyId, account } = await followed();
      await setClock(service, "2026-03-11T14:00:00Z");
      await fault(account, { Fault: "delay", Seconds: 90 });
      await trade(strategyId, "buy", 1);
      await advanceClock(service, 90);
      await settle();
      await fault(account, { Fault: "clear" });
      const twoDays = await statusOf({ EndDate: "2026-03-12T00:00:00Z" });
      assert.deepEqual(
        twoDays.Days.map((d: { Date: string; WindowExceptions: number }) => [d.Date, d.WindowExceptions]),
        [
          ["2026-03-10", 1],
          ["2026-03-11", 1],
        ],
      );
      await setClock(service, MARKET_OPEN);
    });

    test("refusals name the field", async () => {
      assertRefused(await report({ EndDate: DAY.StartDate }), 400, "1101", "EndDate");
      const long = await report({ StartDate: "2026-01-01T00:00:00Z", EndDate: "2026-04-05T00:00:00Z" });
      assertRefused(long, 400, "1101", "EndDate");
      assert.equal(long.json.ResponseStatus.Errors[0].Meta.Limit, 93);
      assertRefused(
        await service.call("WL", "GET", "/Strategies/GetRule575Status", {
          key: p.keys.wlAdminA,
          query: { EndDate: DAY.EndDate },
        }),
        400,
        "1102",
        "StartDate",
      );
      assertRefused(await report({}, ADMIN_KEY), 400, "1102", "WhiteLabelSiteId");
      assertRefused(
        await report({ WhiteLabelSiteId: String(p.siteA) }, p.keys.wlAdminB),
        403,
        "1002",
        "WhiteLabelSiteId",
      );
      assertRefused(await report({ WhiteLabelSiteId: String(p.geo) }, ADMIN_KEY), 404, "2013", "WhiteLabelSiteId");
      assertRefused(await report({}, p.keys.personA), 403, "1002");
      assertRefused(await report({}, p.keys.geoAdmin), 403, "1002");
    });
  });
}
