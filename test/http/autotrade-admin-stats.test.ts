import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AutotradeStatsRecord } from "../../src/http/v4/autotrade-admin-records.js";
import { MAX_STATS_ROWS } from "../../src/services/autotrade-stats.js";
import { applyClockSetting } from "../../src/services/clock.js";
import { autotrading, brokerAccount, follow, SIMULATED_BROKER, startAutotrade } from "../helpers/autotrade.js";
import { getAutotrade, memberOf } from "../helpers/autotrade-admin.js";
import { newCustomer, newStrategy } from "../helpers/commerce.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  advanceClock,
  BACKENDS,
  type Population,
  type PopulationRole,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * GetAutotradeStats and the scheduled job that takes the accounts' daily
 * snapshots on the service clock: once a day per account, whoever runs it.
 */

const DAY = 86_400_000;
const FIRST_DAY = "2026-03-10T00:00:00.000Z";
const SECOND_DAY = "2026-03-11T00:00:00.000Z";

for (const backend of BACKENDS) {
  describe(`GetAutotradeStats and the daily snapshots (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let first = 0;
    let second = 0;
    const holders = { siteA: 0, siteB: 0, geo: 0 };
    const accounts = { siteA: "", siteB: "", geo: "" };

    const stats = (key: string, filters: Record<string, unknown> = {}, server: "WL" | "GEO" = "WL") =>
      getAutotrade(service, server, "GetAutotradeStats", key, filters);
    const rowsOf = async (key: string, filters: Record<string, unknown> = {}, server: "WL" | "GEO" = "WL") => {
      const r = await stats(key, filters, server);
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Record<string, unknown>[];
    };
    const accountsOn = async (key: string, filters: Record<string, unknown> = {}, server: "WL" | "GEO" = "WL") =>
      (await rowsOf(key, filters, server)).map((row) => `${row.Account} ${row.DateUtc}`);
    const snapshotCount = async () =>
      Number(
        (
          await service.storage.db
            .selectFrom("autotrade_stats")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await setClock(service, "2026-03-10T14:00:00Z");
      first = await newStrategy(service, ADMIN_KEY, p.people.admin);
      second = await newStrategy(service, ADMIN_KEY, p.people.admin);
      holders.siteA = await newCustomer(service, p.siteA);
      holders.siteB = await newCustomer(service, p.siteB);
      holders.geo = await memberOf(service, p.geo);
      // Site A's customer follows both strategies in one account.
      accounts.siteA = await autotrading(service, holders.siteA, first, { EnableStocks: true, EnableFutures: true });
      await follow(service, holders.siteA, second);
      const both = await startAutotrade(service, ADMIN_KEY, {
        Account: accounts.siteA,
        PersonId: holders.siteA,
        StrategyId: second,
        EnableStocks: true,
      });
      assert.equal(both.status, 200, both.text);
      accounts.siteB = await autotrading(service, holders.siteB, first, { EnableForex: true });
      accounts.geo = await autotrading(service, holders.geo, second, { EnableOptions: true });
      const confirm = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        body: { PersonId: holders.geo, IsConfirmationNeeded: true },
      });
      assert.equal(confirm.status, 200, confirm.text);
      // An account without a live setup has no snapshot.
      await brokerAccount(service, holders.siteB);
    });
    after(() => service.close());

    test("the clock's move takes each autotrading account's snapshot of the day, once", async () => {
      assert.equal(await snapshotCount(), 0);
      await advanceClock(service, 60);
      assert.equal(await snapshotCount(), 3);
      assert.deepEqual(await service.app.snapshots.run(), { day: new Date(FIRST_DAY), taken: 0 });
      await advanceClock(service, 3600);
      assert.equal(await snapshotCount(), 3, "one snapshot a day");
      const days = await service.storage.db.selectFrom("autotrade_stats").select(["day_at", "taken_at"]).execute();
      for (const row of days) {
        assert.equal(row.day_at, Date.parse(FIRST_DAY));
        assert.equal(row.taken_at, Date.parse("2026-03-10T14:01:00Z"), "taken by the first pass of the day");
      }
    });

    test("two processes passing at once on a new day take one snapshot per account", async () => {
      // The clock moves without a pass; the second process reads it at its start.
      await applyClockSetting(service.storage, service.app.runtime.clock, {
        kind: "fixed",
        atMs: Date.parse("2026-03-11T09:00:00Z"),
      });
      const sibling = await service.sibling();
      try {
        const schedulers = [service.app.snapshots, sibling.app.snapshots, service.app.snapshots];
        // SQLite's driver is synchronous: two connections of one test process cannot wait on each other's lock.
        const passes =
          backend === "postgres"
            ? await Promise.all(schedulers.map((scheduler) => scheduler.run()))
            : await schedulers.reduce<Promise<{ taken: number }[]>>(
                async (done, scheduler) => [...(await done), await scheduler.run()],
                Promise.resolve([]),
              );
        assert.equal(
          passes.reduce((sum, pass) => sum + pass.taken, 0),
          3,
        );
        assert.equal(await snapshotCount(), 6);
      } finally {
        await sibling.close();
      }
    });

    test("a snapshot reads as AutotradeStats: counts by class, uniques, flags, the account's value", async () => {
      const rows = await rowsOf(ADMIN_KEY, { StartDate: FIRST_DAY, EndDate: SECOND_DAY });
      assert.deepEqual(
        rows.map((row) => row.Account),
        [accounts.siteA, accounts.siteB, accounts.geo],
      );
      const [siteA, siteB, geo] = rows as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
      assert.deepEqual(Object.keys(siteA).sort(), Object.keys(AutotradeStatsRecord.properties).sort());
      const stored = await service.storage.db
        .selectFrom("autotrade_stats as t")
        .innerJoin("broker_accounts as b", "b.account_id", "t.account_id")
        .select(["t.id", "b.net_liquidation_at", "b.first_activation_at"])
        .where("b.account_number", "=", accounts.siteA)
        .where("t.day_at", "=", Date.parse(FIRST_DAY))
        .executeTakeFirstOrThrow();
      const zeros = (kind: string) =>
        Object.fromEntries(
          ["Stocks", "Futures", "Options", "Forex", "Crypto"].map((c) => [`${kind}${c}Strategies`, 0]),
        );
      assert.deepEqual(siteA, {
        Id: stored.id,
        DateUtc: FIRST_DAY,
        Account: accounts.siteA,
        PersonId: holders.siteA,
        BrokerId: SIMULATED_BROKER,
        IB: null,
        SalesRep: null,
        WhiteLabelSiteId: p.siteA,
        GeoSiteId: p.geo,
        NetLiquidationValue: 100000,
        LastBrokerNetLiquidationUpdateUtc: new Date(stored.net_liquidation_at as number).toISOString(),
        FirstBrokerActivationDateUTC: new Date(stored.first_activation_at as number).toISOString(),
        AutotradedStocksStrategies: 2,
        AutotradedFuturesStrategies: 1,
        AutotradedOptionsStrategies: 0,
        AutotradedForexStrategies: 0,
        AutotradedCryptoStrategies: 0,
        ...zeros("Brokertransmit"),
        ...zeros("Platformtransmit"),
        UniqueAutotradedStrategies: 2,
        UniqueBrokertransmitStrategies: 0,
        UniquePlatformtransmitStrategies: 0,
        IsSyncEnabled: true,
        IsManualConfirmationEnabled: false,
        IsDisabled: false,
        Currency: "USD",
        Email: siteA.Email,
        FirstName: "Commerce",
        LastName: siteA.LastName,
        IsBrokerEnabled: true,
      });
      assert.deepEqual(
        [siteB.WhiteLabelSiteId, siteB.GeoSiteId, siteB.AutotradedForexStrategies, siteB.UniqueAutotradedStrategies],
        [p.siteB, null, 1, 1],
      );
      assert.deepEqual(
        [geo.WhiteLabelSiteId, geo.GeoSiteId, geo.AutotradedOptionsStrategies, geo.IsManualConfirmationEnabled],
        [null, p.geo, 1, true],
      );
    });

    test("without dates the latest day's; with them the days in [StartDate, EndDate), oldest first", async () => {
      const latest = await accountsOn(ADMIN_KEY);
      assert.deepEqual(latest, [
        `${accounts.siteA} ${SECOND_DAY}`,
        `${accounts.siteB} ${SECOND_DAY}`,
        `${accounts.geo} ${SECOND_DAY}`,
      ]);
      assert.equal((await accountsOn(ADMIN_KEY, { StartDate: FIRST_DAY })).length, 6);
      assert.deepEqual(await accountsOn(ADMIN_KEY, { EndDate: SECOND_DAY, BrokerId: SIMULATED_BROKER }), [
        `${accounts.siteA} ${FIRST_DAY}`,
        `${accounts.siteB} ${FIRST_DAY}`,
        `${accounts.geo} ${FIRST_DAY}`,
      ]);
      assert.deepEqual(
        await accountsOn(ADMIN_KEY, { StartDate: new Date(Date.parse(SECOND_DAY) + DAY).toISOString() }),
        [],
      );
    });

    test("each administrator sees its site's accounts; people are refused", async () => {
      const expected: Partial<Record<PopulationRole, string[]>> = {
        admin: [accounts.siteA, accounts.siteB, accounts.geo],
        wlAdminA: [accounts.siteA],
        wlAdminB: [accounts.siteB],
        geoAdmin: [accounts.siteA, accounts.geo],
      };
      for (const server of ["WL", "GEO"] as const) {
        for (const [who, list] of Object.entries(expected)) {
          const rows = await rowsOf(p.keys[who as PopulationRole], {}, server);
          assert.deepEqual(
            rows.map((row) => row.Account),
            list,
            `${who} on ${server}`,
          );
        }
        assertRefused(await stats(p.keys.personA, {}, server), 403, "", "1002");
      }
      const gen = await getAutotrade(service, "GEN", "GetAutotradeStats", ADMIN_KEY);
      assertRefused(gen, 404, "", "1004");
    });

    test("filters narrow: sites, class, the flags", async () => {
      const cases: [Record<string, unknown>, string[]][] = [
        [{ WhiteLabelSiteId: p.siteA }, [accounts.siteA]],
        [{ GeoSite: "geo europe" }, [accounts.siteA, accounts.geo]],
        [{ GeoSite: "GEO.example.com", WhiteLabelSiteId: p.siteA }, [accounts.siteA]],
        [{ SecurityType: "CS" }, [accounts.siteA]],
        [{ SecurityType: "FUT" }, [accounts.siteA]],
        [{ SecurityType: "FOR" }, [accounts.siteB]],
        [{ SecurityType: "OPT" }, [accounts.geo]],
        [{ ManualConfirmation: true }, [accounts.geo]],
        [{ ManualConfirmation: false, AutoSync: true }, [accounts.siteA, accounts.siteB]],
        [{ Disabled: true }, []],
        [{ BrokerEnabled: true }, [accounts.siteA, accounts.siteB, accounts.geo]],
        [{ BrokerId: 2 }, []],
      ];
      for (const [filters, list] of cases) {
        assert.deepEqual(
          (await rowsOf(ADMIN_KEY, filters)).map((row) => row.Account),
          list,
          JSON.stringify(filters),
        );
      }
      // A white-label administrator naming a geo-site only narrows to its own customers there.
      assert.deepEqual(
        (await rowsOf(p.keys.wlAdminB, { GeoSite: "Geo Europe" })).map((row) => row.Account),
        [],
      );
    });

    test("a change shows in the next day's snapshot, not in the day's taken", async () => {
      const off = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        body: { PersonId: holders.siteB, IsAutotradeEnabled: false, IsAutoSyncEnabled: false },
      });
      assert.equal(off.status, 200, off.text);
      await setClock(service, "2026-03-12T00:00:30Z");
      assert.deepEqual(
        (await rowsOf(ADMIN_KEY, { Disabled: true })).map(
          (row) => `${row.Account} ${row.DateUtc} ${row.IsSyncEnabled}`,
        ),
        [`${accounts.siteB} 2026-03-12T00:00:00.000Z false`],
      );
      assert.deepEqual(await accountsOn(ADMIN_KEY, { Disabled: true, StartDate: FIRST_DAY }), [
        `${accounts.siteB} 2026-03-12T00:00:00.000Z`,
      ]);
    });

    test("refusals name the field", async () => {
      assertRefused(await stats(ADMIN_KEY, { SecurityType: "ETF" }), 400, "SecurityType", "1101");
      assertRefused(await stats(ADMIN_KEY, { StartDate: SECOND_DAY, EndDate: FIRST_DAY }), 400, "EndDate", "1101");
      assertRefused(await stats(ADMIN_KEY, { Disabled: "perhaps" }), 400, "Disabled", "1101");
      assertRefused(await stats(p.keys.wlAdminA, { WhiteLabelSiteId: p.siteB }), 403, "WhiteLabelSiteId", "1002");
      assertRefused(await stats(p.keys.geoAdmin, { WhiteLabelSiteId: p.siteB }), 403, "WhiteLabelSiteId", "1002");
      assertRefused(await stats(ADMIN_KEY, { WhiteLabelSiteId: 999_999 }), 404, "WhiteLabelSiteId", "2013");
      assertRefused(await stats(ADMIN_KEY, { GeoSite: "Atlantis" }), 404, "GeoSite", "2013");
      const elsewhere = await service.call("GEO", "GET", "/General/GetGeoSites", { key: ADMIN_KEY });
      assert.equal(elsewhere.status, 200);
      await service.storage.db
        .insertInto("sites")
        .values({ kind: "geo", name: "Geo Asia", domain: null, geo_site_id: null, created_at: 0 })
        .execute();
      assertRefused(await stats(p.keys.geoAdmin, { GeoSite: "Geo Asia" }), 403, "GeoSite", "1002");
    });

    test(`an answer of more than ${MAX_STATS_ROWS} snapshots is refused, not cut short`, async () => {
      const account = await service.storage.db
        .selectFrom("broker_accounts")
        .select(["account_id", "person_id"])
        .where("account_number", "=", accounts.siteB)
        .executeTakeFirstOrThrow();
      // One account's snapshots of MAX_STATS_ROWS + 1 days long past (1950 on).
      const from = Date.parse("1950-01-01T00:00:00Z");
      const rows = Array.from({ length: MAX_STATS_ROWS + 1 }, (_, i) => ({
        account_id: account.account_id,
        day_at: from + i * DAY,
        taken_at: from + i * DAY,
        person_id: account.person_id,
        broker_id: SIMULATED_BROKER,
        white_label_site_id: p.siteB,
        geo_site_id: null,
        net_liquidation: null,
        net_liquidation_at: null,
        first_activation_at: null,
        currency: "USD",
        autotraded_stocks: 0,
        autotraded_futures: 0,
        autotraded_options: 0,
        autotraded_forex: 1,
        autotraded_crypto: 0,
        autotraded_unique: 1,
        is_sync_enabled: 1,
        is_manual_confirmation: 0,
        is_disabled: 0,
        is_broker_enabled: 1,
      }));
      for (let i = 0; i < rows.length; i += 500) {
        await service.storage.db
          .insertInto("autotrade_stats")
          .values(rows.slice(i, i + 500))
          .execute();
      }
      const r = await stats(ADMIN_KEY, { StartDate: "1949-01-01T00:00:00Z", EndDate: "2010-01-01T00:00:00Z" });
      assertRefused(r, 400, "StartDate", "1101");
      assert.equal(r.json.ResponseStatus.Errors[0].Meta.MaxRows, MAX_STATS_ROWS);
      const narrower = await rowsOf(ADMIN_KEY, { StartDate: "1950-01-01T00:00:00Z", EndDate: "1950-02-01T00:00:00Z" });
      assert.equal(narrower.length, 31);
    });
  });
}
