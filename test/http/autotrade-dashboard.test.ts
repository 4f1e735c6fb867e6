import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { settleAutotrade } from "../helpers/autotrade.js";
import {
  accountQuery,
  accountsService,
  followingAccount,
  startFollowing,
  strategyTrades,
} from "../helpers/autotrade-accounts.js";
import { ADMIN_KEY, BACKENDS, type Population, setClock, type TestService } from "../helpers/service.js";
import { newStrategy, setQuote } from "../helpers/trading.js";

/**
 * GetDashBoard's returns from the account's marks at NYSE closes, against
 * numbers worked by hand (docs/decisions.md, "Autotrade account orders
 * (issue 14)"): B's account of 100,000 dollars follows strategy S1 at 50%
 * (capital 50,000) from Tuesday, and S2 at 20% from Wednesday.
 */
for (const backend of BACKENDS) {
  describe(`the autotrade dashboard (${backend})`, () => {
    let service: TestService;
    let p: Population;

    before(async () => {
      ({ service, p } = await accountsService(backend, [["MSFT", 300, 300.2]]));
    });
    after(() => service.close());

    const dashboard = async (account: string, key = p.keys.personB) => {
      const r = await accountQuery(service, key, "GET", "GetDashBoard", {
        PersonId: p.people.personB,
        Account: account,
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results as {
        StrategyId: number;
        StrategyName: string;
        TodayReturn: number | null;
        TotalReturn: number | null;
        StartDate: string;
      }[];
    };
    const returns = async (account: string) =>
      (await dashboard(account)).map((item) => [item.StrategyId, item.TodayReturn, item.TotalReturn]);
    const marks = async (account: string) =>
      (
        await service.storage.db
          .selectFrom("account_marks as m")
          .innerJoin("broker_accounts as b", "b.account_id", "m.account_id")
          .select(["m.day", "m.value", "m.cash"])
          .where("b.account_number", "=", account)
          .orderBy("m.marked_at")
          .execute()
      ).map((m) => `${m.day} ${m.value} ${m.cash}`);
    // AutoSync off: at each open it would even out the drift of the account's value against the
    // model account's with one-share trades (docs/decisions.md, AutoSync), left out of these numbers.
    const withoutAutoSync = async (account: string) => {
      const r = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        key: ADMIN_KEY,
        body: { PersonId: p.people.personB, Account: account, IsAutoSyncEnabled: false },
      });
      assert.equal(r.status, 200, r.text);
    };
    const closeOf = async (now: string) => {
      await setClock(service, now);
      await settleAutotrade(service);
    };

    test("returns worked by hand, day by day, and through a clock jump over several closes", async () => {
      const s1 = await followingAccount(service, p, { cash: "100000", extra: { ScalingPercentage: 50 } });
      await withoutAutoSync(s1.account);
      await strategyTrades(service, p, s1.strategyId, "buy", 100);
      const [before] = await dashboard(s1.account);
      assert.deepEqual(
        { ...before, StartDate: typeof before?.StartDate },
        {
          PersonId: p.people.personB,
          BrokerName: "Simulated Broker",
          Account: s1.account,
          StrategyId: s1.strategyId,
          StrategyName: before?.StrategyName,
          StartDate: "string",
          TodayReturn: null,
          TotalReturn: null,
        },
      );

      // Tuesday's close: 50 bought at 200.1, marked at 205. P&L 10,250 − 10,005 = 245 over 50,000.
      await setQuote(service, "AAPL", 204.9, 205.1);
      await closeOf("2026-03-10T20:30:00Z");
      assert.deepEqual(await marks(s1.account), ["2026-03-10 100245 89995"]);
      assert.deepEqual(await returns(s1.account), [[s1.strategyId, 0.0049, 0.0049]]);

      // Wednesday: S2 starts at 20% (capital 20% of Tuesday's 100,245 = 20,049) and buys 20 MSFT at 300.2.
      await closeOf("2026-03-11T14:00:00Z");
      const s2 = await newStrategy(service, p.keys.personA, 100_000, `Dashboard S2 ${backend}`);
      await startFollowing(service, p, s2, s1.account, { ScalingPercentage: 20 });
      await withoutAutoSync(s1.account);
      await strategyTrades(service, p, s2, "buy", 100, {}, "MSFT");
      await setQuote(service, "AAPL", 209.9, 210.1);
      await setQuote(service, "MSFT", 300.9, 301.1);
      await closeOf("2026-03-11T20:30:00Z");
      // 89,995 − 6,004 = 83,991 cash; 10,500 + 6,020 held.
      assert.deepEqual((await marks(s1.account)).at(-1), "2026-03-11 100511 83991");
      // S1: 250 over half of 100,245; 495 over 50,000. S2: 16 over 20,049.
      assert.deepEqual(await returns(s1.account), [
        [s1.strategyId, 0.00498778, 0.0099],
        [s2, 0.00079804, 0.00079804],
      ]);

      // Thursday: S1 sells half; the copy sells 25 at 214.9 (5,372.5 received), 25 left marked at 215.
      await closeOf("2026-03-12T14:00:00Z");
      await setQuote(service, "AAPL", 214.9, 215.1);
      await strategyTrades(service, p, s1.strategyId, "sell", 50);
      await closeOf("2026-03-12T20:30:00Z");
      // S1: P&L 742.5; the day's 247.5 over half of 100,511. S2 did not move.
      assert.deepEqual(await returns(s1.account), [
        [s1.strategyId, 0.00492483, 0.01485],
        [s2, 0, 0.00079804],
      ]);

      // The clock jumps to Monday's close: Friday and Monday are each marked, nothing moved.
      await closeOf("2026-03-16T20:30:00Z");
      assert.deepEqual(
        (await marks(s1.account)).map((m) => m.split(" ")[0]),
        ["2026-03-10", "2026-03-11", "2026-03-12", "2026-03-13", "2026-03-16"],
      );
      assert.deepEqual(await returns(s1.account), [
        [s1.strategyId, 0, 0.01485],
        [s2, 0, 0.00079804],
      ]);
      // The owner's administrators read it too, on every server.
      for (const server of ["WL", "GEO"] as const) {
        const r = await service.call(server, "GET", "/Autotrade/GetDashBoard", {
          key: server === "WL" ? p.keys.wlAdminB : ADMIN_KEY,
          query: { PersonId: String(p.people.personB), Account: s1.account },
        });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.Results.length, 2);
      }
    });
  });
}
