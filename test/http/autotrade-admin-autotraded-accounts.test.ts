import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AutotradedAccountRecord } from "../../src/http/v4/autotrade-admin-records.js";
import { autotrading, SIMULATED_BROKER, stopAutotrade } from "../helpers/autotrade.js";
import { getAutotrade, memberOf } from "../helpers/autotrade-admin.js";
import { newCustomer, newStrategy } from "../helpers/commerce.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  type PopulationRole,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/** SearchAutotradedAccounts: live setups matching the filters, seen as GetAutotraders sees them. */

for (const backend of BACKENDS) {
  describe(`SearchAutotradedAccounts (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** A public strategy of person A's, followed by a customer of each site and a geo-site member. */
    let strategy = 0;
    const holders = { siteA: 0, siteB: 0, geo: 0 };
    const accounts = { siteA: "", siteB: "", geo: "" };

    const search = (key: string, filters: Record<string, unknown>, server: "WL" | "GEO" = "WL") =>
      getAutotrade(service, server, "SearchAutotradedAccounts", key, filters);
    const accountsOf = async (key: string, filters: Record<string, unknown>, server: "WL" | "GEO" = "WL") => {
      const r = await search(key, filters, server);
      assert.equal(r.status, 200, r.text);
      return r.json.Results.map((row: { Account: string }) => row.Account);
    };
    const setSettings = (body: Record<string, unknown>) =>
      service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", { body });

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      strategy = await newStrategy(service, ADMIN_KEY, p.people.personA);
      holders.siteA = await newCustomer(service, p.siteA);
      holders.siteB = await newCustomer(service, p.siteB);
      holders.geo = await memberOf(service, p.geo);
      await setClock(service, "2026-03-02T10:00:00Z");
      accounts.siteA = await autotrading(service, holders.siteA, strategy, { EnableStocks: true });
      await setClock(service, "2026-03-03T10:00:00Z");
      accounts.siteB = await autotrading(service, holders.siteB, strategy, { EnableStocks: true });
      await setClock(service, "2026-03-04T10:00:00Z");
      accounts.geo = await autotrading(service, holders.geo, strategy, { EnableFutures: true });
    });
    after(() => service.close());

    test("at least one filter: without any, refused naming the first and listing them all", async () => {
      for (const server of ["WL", "GEO"] as const) {
        const r = await search(ADMIN_KEY, {}, server);
        assertRefused(r, 400, "StrategyId", "1102");
        assert.match(r.json.ResponseStatus.Errors[0].Message, /StrategyId, BrokerId, AutoSyncEnabled.*EndDate/);
      }
      // Pagination is no filter.
      assertRefused(await search(ADMIN_KEY, { Limit: 10 }), 400, "StrategyId");
    });

    test("each caller sees the setups it may see among autotraders, on WL and GEO", async () => {
      const all = [accounts.siteA, accounts.siteB, accounts.geo];
      const expected: Partial<Record<PopulationRole, string[]>> = {
        admin: all,
        // The strategy's owner sees every setup on it.
        personA: all,
        wlAdminA: [accounts.siteA],
        wlAdminB: [accounts.siteB],
        geoAdmin: [accounts.siteA, accounts.geo],
        personB: [],
      };
      for (const server of ["WL", "GEO"] as const) {
        for (const [who, list] of Object.entries(expected)) {
          assert.deepEqual(
            await accountsOf(p.keys[who as PopulationRole], { StrategyId: strategy }, server),
            list,
            `${who} on ${server}`,
          );
        }
      }
    });

    test("a setup reads as an AutotradedAccount", async () => {
      const r = await search(p.keys.wlAdminA, { StrategyId: strategy });
      const [row] = r.json.Results;
      assert.deepEqual(Object.keys(row).sort(), Object.keys(AutotradedAccountRecord.properties).sort());
      const setup = await service.storage.db
        .selectFrom("autotrade_setups")
        .select(["id", "updated_at"])
        .where("person_id", "=", holders.siteA)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, {
        Id: setup.id,
        PersonId: holders.siteA,
        Account: accounts.siteA,
        BrokerId: SIMULATED_BROKER,
        FirstName: "Commerce",
        LastName: row.LastName,
        Email: row.Email,
        StrategyId: strategy,
        StrategyName: row.StrategyName,
        IsSyncEnabled: true,
        IsAutotrading: true,
        IsAutotradeDisabled: false,
        IsAutotradeDisabledReason: null,
        SyncDisabledReason: null,
        SettingsLastUpdateUTC: new Date(setup.updated_at).toISOString(),
      });
      assert.match(row.Email, /^commerce\.customer/);
    });

    test("StartDate and EndDate keep setups started in [StartDate, EndDate)", async () => {
      assert.deepEqual(await accountsOf(ADMIN_KEY, { StartDate: "2026-03-03T00:00:00Z" }), [
        accounts.siteB,
        accounts.geo,
      ]);
      assert.deepEqual(await accountsOf(ADMIN_KEY, { EndDate: "2026-03-03T10:00:00Z" }), [accounts.siteA]);
      assert.deepEqual(
        await accountsOf(ADMIN_KEY, { StartDate: "2026-03-03T00:00:00Z", EndDate: "2026-03-04T00:00:00Z" }),
        [accounts.siteB],
      );
      assertRefused(
        await search(ADMIN_KEY, { StartDate: "2026-03-03T00:00:00Z", EndDate: "2026-03-03T00:00:00Z" }),
        400,
        "EndDate",
        "1101",
      );
      assertRefused(await search(ADMIN_KEY, { StartDate: "yesterday" }), 400, "StartDate", "1101");
    });

    test("the flags: disabled, AutoSync off, a stop requested and autotrading now", async () => {
      const disable = await setSettings({
        PersonId: holders.siteA,
        Account: accounts.siteA,
        IsAutotradeEnabled: false,
      });
      assert.equal(disable.status, 200, disable.text);
      const noSync = await setSettings({ PersonId: holders.siteB, Account: accounts.siteB, IsAutoSyncEnabled: false });
      assert.equal(noSync.status, 200, noSync.text);
      const stopped = await stopAutotrade(service, ADMIN_KEY, {
        Account: accounts.geo,
        PersonId: holders.geo,
        StrategyId: strategy,
        BrokerId: SIMULATED_BROKER,
      });
      assert.equal(stopped.status, 200, stopped.text);
      assert.deepEqual(await accountsOf(ADMIN_KEY, { AutoTradeEnabled: false }), [accounts.siteA, accounts.geo]);
      assert.deepEqual(await accountsOf(ADMIN_KEY, { AutoTradeEnabled: true }), [accounts.siteB]);
      assert.deepEqual(await accountsOf(ADMIN_KEY, { AutoSyncEnabled: false }), [accounts.siteB]);
      assert.deepEqual(await accountsOf(ADMIN_KEY, { AutoTradingNow: true }), [accounts.siteB]);
      assert.deepEqual(await accountsOf(ADMIN_KEY, { AutoTradingNow: false, BrokerId: SIMULATED_BROKER }), [
        accounts.siteA,
        accounts.geo,
      ]);
      const rows = (await search(ADMIN_KEY, { StrategyId: strategy })).json.Results;
      const byAccount = new Map(rows.map((row: { Account: string }) => [row.Account, row]));
      assert.deepEqual(
        [accounts.siteA, accounts.siteB, accounts.geo].map((account) => {
          const row = byAccount.get(account) as Record<string, unknown>;
          return [row.IsAutotrading, row.IsAutotradeDisabled, row.IsAutotradeDisabledReason, row.SyncDisabledReason];
        }),
        [
          [false, true, "Disabled with SetAutotradeSettings", null],
          [true, false, null, "Disabled with SetAutotradeSettings"],
          [false, true, "Stop requested", null],
        ],
      );
    });

    test("pages on the setup id", async () => {
      const first = await search(ADMIN_KEY, { StrategyId: strategy, Limit: 2 });
      assert.equal(first.json.Results.length, 2);
      const rest = await search(ADMIN_KEY, {
        StrategyId: strategy,
        Limit: 2,
        Cursor: first.json.Pagination.next_cursor,
      });
      assert.deepEqual(
        rest.json.Results.map((row: { Account: string }) => row.Account),
        [accounts.geo],
      );
      assert.equal(rest.json.Pagination.next_cursor, null);
    });

    test("values of the wrong kind are refused naming them; GEN does not list the operation", async () => {
      assertRefused(await search(ADMIN_KEY, { AutoTradingNow: "sometimes" }), 400, "AutoTradingNow", "1101");
      assertRefused(await search(ADMIN_KEY, { StrategyId: -3 }), 400, "StrategyId", "1101");
      const gen = await getAutotrade(service, "GEN", "SearchAutotradedAccounts", ADMIN_KEY, { StrategyId: strategy });
      assertRefused(gen, 404, "", "1004");
    });
  });
}
