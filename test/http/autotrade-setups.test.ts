import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AutotradeSettingsRecord } from "../../src/http/v4/autotrade-records.js";
import {
  autotrading,
  brokerAccount,
  follow,
  SIMULATED_BROKER,
  startAutotrade,
  stopAutotrade,
} from "../helpers/autotrade.js";
import { newCustomer, newStrategy } from "../helpers/commerce.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/** Brokers, starting setups and reading and setting their settings, through the API as clients use them. */

const SERVERS = ["WL", "GEN", "GEO"] as const;

for (const backend of BACKENDS) {
  describe(`autotrade setups (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** A public, free strategy of the service admin's that customers follow. */
    let followed = 0;
    /** Another one. */
    let second = 0;

    const get = (path: string, key: string, query: Record<string, unknown>, server: "WL" | "GEN" | "GEO" = "GEN") =>
      service.call(server, "GET", `/Autotrade/${path}`, {
        key,
        query: Object.fromEntries(Object.entries(query).map(([name, value]) => [name, String(value)])),
      });
    const settingsOf = async (personId: number, account?: string, server: "WL" | "GEN" | "GEO" = "GEN") => {
      const r = await get(
        "GetAutotradeSettings",
        ADMIN_KEY,
        account ? { PersonId: personId, Account: account } : { PersonId: personId },
        server,
      );
      assert.equal(r.status, 200, r.text);
      return r.json.Results;
    };
    const setSettings = (key: string, body: Record<string, unknown>, server: "WL" | "GEN" | "GEO" = "GEN") =>
      service.call(server, "PUT", "/Autotrade/SetAutotradeSettings", { key, body });

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      followed = await newStrategy(service, ADMIN_KEY, p.people.admin);
      second = await newStrategy(service, ADMIN_KEY, p.people.admin);
    });
    after(() => service.close());

    test("GetBrokers lists the simulated broker; a disabled broker only with IncludeDisabled", async () => {
      await service.storage.db
        .insertInto("brokers")
        .values({ name: "Retired Broker", connection_name: "FIX", is_enabled: 0, created_at: 0 })
        .execute();
      for (const server of SERVERS) {
        const enabled = await get("GetBrokers", p.keys.personA, {}, server);
        assert.equal(enabled.status, 200, enabled.text);
        assert.deepEqual(enabled.json.Results, [
          { Id: SIMULATED_BROKER, Name: "Simulated Broker", IsEnabled: true, ConnectionName: "Simulated" },
        ]);
        const every = await get("GetBrokers", p.keys.personA, { IncludeDisabled: true }, server);
        assert.deepEqual(
          every.json.Results.map((b: { Name: string; IsEnabled: boolean }) => [b.Name, b.IsEnabled]),
          [
            ["Simulated Broker", true],
            ["Retired Broker", false],
          ],
        );
      }
      assertRefused(await get("GetBrokers", p.keys.personA, { IncludeDisabled: "maybe" }), 400, "IncludeDisabled");
    });

    test("StartAutotrade needs a live subscription or ownership; then every setting reads back", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await brokerAccount(service, person);
      const start = { Account: account, PersonId: person, StrategyId: followed };
      assertRefused(await startAutotrade(service, ADMIN_KEY, start), 409, "StrategyId", "1202");
      await follow(service, person, followed);
      const started = await startAutotrade(service, ADMIN_KEY, {
        ...start,
        ScalingPercentage: "75.5",
        EnableFutures: true,
        MaxFuturesContracts: 3,
        EnableForex: true,
        MaxForexUnits: 20,
        EnableStocks: true,
        MaxStocksDollars: 25_000,
        EnableOptions: true,
        EnableOptionsShorting: false,
        MaxOptionsContracts: 4,
        AutoStopLossDollars: 500,
        BrokerUsername: "trader7",
      });
      assert.equal(started.status, 200, started.text);
      assert.equal(started.text, "true");
      for (const server of SERVERS) {
        const [settings] = await settingsOf(person, account, server);
        const fields = Object.keys(AutotradeSettingsRecord.properties).filter(
          (field) => server !== "WL" || field !== "BrokerAuthorizationStatus",
        );
        assert.deepEqual(Object.keys(settings).sort(), fields.sort(), server);
        assert.equal(settings.PersonId, person);
        assert.equal(settings.FirstName, "Commerce");
        assert.equal(settings.SiteDomain, "geo.example.com", "site A has no domain of its own: its geo-site's");
        assert.equal(settings.Account, account);
        assert.equal(settings.AccountType, 1);
        assert.equal(settings.BrokerId, SIMULATED_BROKER);
        assert.equal(settings.Connection, "Simulated");
        assert.equal(settings.StrategyId, followed);
        assert.equal(settings.ScalingPercentage, 75.5);
        assert.equal(settings.BrokerUserID, "trader7");
        assert.equal(settings.Currency, "USD");
        assert.equal(settings.IsAutotradeDisabled, false);
        assert.equal(settings.IsAutotradeDisabledReason, null);
        assert.equal(settings.IsSyncEnabled, true);
        assert.equal(settings.IsBrokerEnabled, true);
        assert.equal(settings.Approved, true);
        assert.equal(settings.IntroducingBroker, null);
        assert.equal(settings.SalesRep, null);
        assert.deepEqual(
          [
            settings.EnabledFutures,
            settings.MaxFutures,
            settings.EnabledForex,
            settings.MaxForex,
            settings.ForexLotSize,
          ],
          [true, 3, true, 20, 1000],
        );
        assert.deepEqual([settings.EnabledStocks, settings.MaxStocksDollars], [true, 25_000]);
        assert.deepEqual([settings.EnabledOptions, settings.OptionsShort, settings.MaxOptions], [true, false, 4]);
        assert.equal(settings.WillSyncToOpenStocksUSA, true);
        assert.equal(settings.LastSyncForex, null);
        assert.equal(settings.NetLiquidationValue, 100_000);
        assert.ok(settings.FirstBrokerActivationDate);
        if (server !== "WL") assert.equal(settings.BrokerAuthorizationStatus, "Authorized");
      }
    });

    test("a start on a live setup modifies it; DoNotJoinOpenPositions only on a new one", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await autotrading(service, person, followed, { DoNotJoinOpenPositions: true });
      const [first] = await settingsOf(person, account);
      // AutoSync stays on: it skips only the positions the strategy held at the start (issue 14).
      assert.equal(first.WillSyncToOpenFuturesUSA, true);
      const again = { Account: account, PersonId: person, StrategyId: followed };
      assertRefused(
        await startAutotrade(service, ADMIN_KEY, { ...again, DoNotJoinOpenPositions: true }),
        400,
        "DoNotJoinOpenPositions",
      );
      const modified = await startAutotrade(service, ADMIN_KEY, {
        ...again,
        ScalingPercentage: 150,
        DoNotJoinOpenPositions: false,
      });
      assert.equal(modified.status, 200, modified.text);
      const [now] = await settingsOf(person, account);
      assert.equal(now.Id, first.Id);
      assert.equal(now.ScalingPercentage, 150);
      assert.equal(now.EnabledStocks, false);
    });

    test("the owner autotrades an own strategy without a subscription (IsTradeOwnSystem)", async () => {
      const owner = await newCustomer(service, p.siteA);
      const own = await newStrategy(service, ADMIN_KEY, owner);
      const account = await brokerAccount(service, owner);
      const r = await startAutotrade(service, ADMIN_KEY, { Account: account, PersonId: owner, StrategyId: own }, "GEO");
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json, true);
    });

    test("StartAutotrade refuses bad input, naming the field, and writes nothing", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await brokerAccount(service, person);
      await follow(service, person, followed);
      const other = await brokerAccount(service, p.people.personB);
      const start = { Account: account, PersonId: person, StrategyId: followed };
      for (const scaling of [0, -5, 1000.01, "abc", "1e9"]) {
        assertRefused(
          await startAutotrade(service, ADMIN_KEY, { ...start, ScalingPercentage: scaling }),
          400,
          "ScalingPercentage",
        );
      }
      assertRefused(
        await startAutotrade(service, ADMIN_KEY, { ...start, MaxStocksDollars: -1 }),
        400,
        "MaxStocksDollars",
      );
      assertRefused(
        await startAutotrade(service, ADMIN_KEY, { ...start, MaxFuturesContracts: 1.5 }),
        400,
        "MaxFuturesContracts",
      );
      assertRefused(
        await startAutotrade(service, ADMIN_KEY, { ...start, AutoStopLossDollars: 0 }),
        400,
        "AutoStopLossDollars",
      );
      assertRefused(await startAutotrade(service, ADMIN_KEY, { ...start, BrokerId: 2 ** 31 }), 400, "BrokerId");
      assertRefused(await startAutotrade(service, ADMIN_KEY, { ...start, BrokerId: 99 }), 404, "BrokerId");
      assertRefused(await startAutotrade(service, ADMIN_KEY, { ...start, StrategyId: 999_999 }), 404, "StrategyId");
      assertRefused(await startAutotrade(service, ADMIN_KEY, { ...start, Account: other }), 404, "Account");
      const missing = await service.call("GEN", "POST", "/Autotrade/StartAutotrade", {
        body: { PersonId: person, StrategyId: followed, BrokerId: 1, ScalingPercentage: 100 },
      });
      assertRefused(missing, 400, "Account", "1102");
      await service.storage.db
        .updateTable("broker_accounts")
        .set({ is_linked: 0 })
        .where("account_number", "=", account)
        .execute();
      assertRefused(await startAutotrade(service, ADMIN_KEY, start), 409, "Account");
      assert.deepEqual(await settingsOf(person), []);
    });

    test("who may start: the person and their administrators; WL's StartAutotrade is the approval flow instead", async () => {
      const account = await brokerAccount(service, p.people.personA);
      await follow(service, p.people.personA, second);
      const start = { Account: account, PersonId: p.people.personA, StrategyId: second };
      assertRefused(await startAutotrade(service, p.keys.personB, start), 403, "PersonId");
      assertRefused(await startAutotrade(service, p.keys.wlAdminB, start), 403, "PersonId");
      for (const key of [p.keys.personA, p.keys.wlAdminA, p.keys.geoAdmin]) {
        const r = await startAutotrade(service, key, start);
        assert.equal(r.status, 200, r.text);
      }
      const onWl = await service.call("WL", "POST", "/Autotrade/StartAutotrade", {
        key: p.keys.personA,
        body: { ...start, BrokerId: 1, ScalingPercentage: 100 },
      });
      // On WL a start asks the customer's approval, which only the site's administrators request.
      assertRefused(onWl, 403, "");
    });

    test("SetAutotradeSettings sets the flags of every live setup of the account", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await autotrading(service, person, followed);
      await follow(service, person, second);
      const started = await startAutotrade(service, ADMIN_KEY, {
        Account: account,
        PersonId: person,
        StrategyId: second,
      });
      assert.equal(started.status, 200, started.text);
      for (const server of SERVERS) {
        const off = await setSettings(
          ADMIN_KEY,
          { PersonId: person, Account: account, IsAutotradeEnabled: false, IsAutoSyncEnabled: "false" },
          server,
        );
        assert.equal(off.status, 200, off.text);
        assert.deepEqual(off.json.Results, [true]);
        const disabled = await settingsOf(person, account);
        assert.equal(disabled.length, 2);
        for (const s of disabled) {
          assert.equal(s.IsAutotradeDisabled, true);
          assert.equal(s.IsAutotradeDisabledReason, "Disabled with SetAutotradeSettings");
          assert.equal(s.IsSyncEnabled, false);
          assert.equal(s.SyncDisabledReason, "Disabled with SetAutotradeSettings");
        }
        const on = await setSettings(
          ADMIN_KEY,
          { PersonId: person, Account: account, BrokerId: 1, IsAutotradeEnabled: true, IsAutoSyncEnabled: true },
          server,
        );
        assert.equal(on.status, 200, on.text);
        for (const s of await settingsOf(person, account)) {
          assert.equal(s.IsAutotradeDisabled, false);
          assert.equal(s.IsAutotradeDisabledReason, null);
          assert.equal(s.IsSyncEnabled, true);
          assert.equal(s.SyncDisabledReason, null);
        }
      }
    });

    test("SetAutotradeSettings: the caller by default, refusals named, nothing half-written", async () => {
      const account = await autotrading(service, p.people.personB, followed);
      const own = await setSettings(p.keys.personB, { Account: account, IsAutoSyncEnabled: false });
      assert.equal(own.status, 200, own.text);
      assert.equal((await settingsOf(p.people.personB, account))[0].IsSyncEnabled, false);
      assertRefused(await setSettings(p.keys.personB, { Account: account }), 400, "IsAutotradeEnabled", "1102");
      assertRefused(await setSettings(p.keys.personB, { Account: "NOPE", IsAutotradeEnabled: true }), 404, "Account");
      assertRefused(
        await setSettings(p.keys.personA, { PersonId: p.people.personB, IsAutotradeEnabled: false }),
        403,
        "PersonId",
      );
      assertRefused(
        await setSettings(p.keys.personB, { Account: account, IsAutotradeEnabled: "yes" }),
        400,
        "IsAutotradeEnabled",
      );
      await service.storage.db
        .updateTable("broker_accounts")
        .set({ is_linked: 0 })
        .where("account_number", "=", account)
        .execute();
      assertRefused(
        await setSettings(p.keys.personB, { Account: account, IsAutotradeEnabled: true, IsAutoSyncEnabled: true }),
        409,
        "IsAutotradeEnabled",
      );
      const [unchanged] = await settingsOf(p.people.personB, account);
      assert.equal(unchanged.IsSyncEnabled, false);
      assert.equal(unchanged.IsBrokerEnabled, false);
      assert.equal(unchanged.BrokerAuthorizationStatus, "Delinked");
      await service.storage.db
        .updateTable("broker_accounts")
        .set({ is_linked: 1 })
        .where("account_number", "=", account)
        .execute();
    });

    test("GetAutotradeSettings and GetAutotradedStrategies: the person and their administrators, live setups only", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await autotrading(service, person, followed);
      await follow(service, person, second);
      const secondAccount = await brokerAccount(service, person);
      assert.equal(
        (
          await startAutotrade(service, ADMIN_KEY, {
            Account: secondAccount,
            PersonId: person,
            StrategyId: second,
            ScalingPercentage: 25,
          })
        ).status,
        200,
      );
      for (const server of SERVERS) {
        const all = await get("GetAutotradedStrategies", p.keys.wlAdminA, { PersonId: person }, server);
        assert.equal(all.status, 200, all.text);
        assert.deepEqual(
          all.json.Results.map((r: Record<string, unknown>) => [
            r.Account,
            r.StrategyId,
            r.ScalingPercentage,
            r.BrokerName,
          ]),
          [
            [account, followed, 100, "Simulated Broker"],
            [secondAccount, second, 25, "Simulated Broker"],
          ],
        );
        const first = await get("GetAutotradedStrategies", p.keys.wlAdminA, { PersonId: person, Limit: 1 }, server);
        assert.equal(first.json.Results.length, 1);
        const next = await get(
          "GetAutotradedStrategies",
          p.keys.wlAdminA,
          { PersonId: person, Limit: 1, Cursor: first.json.Pagination.next_cursor },
          server,
        );
        assert.equal(next.json.Results[0].Account, secondAccount);
        const one = await get(
          "GetAutotradedStrategies",
          p.keys.wlAdminA,
          { PersonId: person, Account: secondAccount },
          server,
        );
        assert.deepEqual(
          one.json.Results.map((r: { StrategyId: number }) => r.StrategyId),
          [second],
        );
      }
      for (const key of [p.keys.personB, p.keys.wlAdminB]) {
        assertRefused(await get("GetAutotradedStrategies", key, { PersonId: person }), 403, "PersonId");
        assertRefused(await get("GetAutotradeSettings", key, { PersonId: person }), 403, "PersonId");
      }
      assertRefused(await get("GetAutotradeSettings", ADMIN_KEY, { PersonId: 999_999 }), 404, "PersonId");
      assertRefused(await get("GetAutotradeSettings", ADMIN_KEY, {}), 400, "PersonId", "1102");
      // A stop applied by the copier ends the setup: it is no longer read.
      assert.equal(
        (
          await stopAutotrade(service, ADMIN_KEY, {
            Account: secondAccount,
            PersonId: person,
            StrategyId: second,
            BrokerId: 1,
          })
        ).status,
        200,
      );
      assert.equal((await settingsOf(person)).length, 2);
      await service.storage.db
        .updateTable("autotrade_setups")
        .set({ status: "stopped", live_key: null })
        .where("person_id", "=", person)
        .where("strategy_id", "=", second)
        .execute();
      assert.deepEqual(
        (await settingsOf(person)).map((s: { Account: string }) => s.Account),
        [account],
      );
    });

    test("GetAutotraders: the strategy owner, the site's and geo-site's administrators, service admins", async () => {
      const strategy = await newStrategy(service, ADMIN_KEY, p.people.personB);
      const ofA = await newCustomer(service, p.siteA);
      const ofB = await newCustomer(service, p.siteB);
      await autotrading(service, ofA, strategy);
      await autotrading(service, ofB, strategy);
      const who = async (key: string, query: Record<string, unknown> = { StrategyId: strategy }) => {
        const r = await get("GetAutotraders", key, query);
        assert.equal(r.status, 200, r.text);
        return r.json.Results.map((row: { PersonId: number }) => row.PersonId);
      };
      assert.deepEqual(await who(ADMIN_KEY), [ofA, ofB]);
      assert.deepEqual(await who(p.keys.personB), [ofA, ofB]);
      assert.deepEqual(await who(p.keys.personA), []);
      assert.deepEqual(await who(p.keys.wlAdminA), [ofA]);
      assert.deepEqual(await who(p.keys.geoAdmin), [ofA]);
      assert.deepEqual(await who(p.keys.wlAdminB), [ofB]);
      assert.deepEqual(await who(ADMIN_KEY, { StrategyId: strategy, WhiteLabelSiteId: p.siteB }), [ofB]);
      assert.deepEqual(await who(ADMIN_KEY, { StrategyId: strategy, BrokerId: 2 }), []);
      assertRefused(
        await get("GetAutotraders", p.keys.wlAdminB, { WhiteLabelSiteId: p.siteA }),
        403,
        "WhiteLabelSiteId",
      );
      assertRefused(await get("GetAutotraders", ADMIN_KEY, { StrategyId: "x" }), 400, "StrategyId");
      const paged = await get("GetAutotraders", ADMIN_KEY, { StrategyId: strategy, Limit: 1, AscendingOrder: false });
      assert.deepEqual(
        paged.json.Results.map((r: { PersonId: number }) => r.PersonId),
        [ofB],
      );
      assert.ok(paged.json.Pagination.next_cursor);
    });
  });
}
