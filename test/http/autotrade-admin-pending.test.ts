import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { PendingAccountRecord } from "../../src/http/v4/autotrade-admin-records.js";
import { follower, requested, SIMULATED_BROKER, startBody } from "../helpers/approvals.js";
import { autotrading, brokerAccount, follow, startAutotrade } from "../helpers/autotrade.js";
import { approval, getAutotrade, memberOf, requireApproval } from "../helpers/autotrade-admin.js";
import { newCustomer, newStrategy } from "../helpers/commerce.js";
import { assertRefused } from "../helpers/refusals.js";
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

/**
 * GetPendingAccounts: on WL the approval requests not yet final, on GEO the
 * setups of live accounts waiting for their geo-site's approval.
 */

for (const backend of BACKENDS) {
  describe(`GetPendingAccounts (${backend})`, () => {
    let service: TestService;
    let p: Population;

    const pending = (server: "WL" | "GEO", key: string, filters: Record<string, unknown> = {}) =>
      getAutotrade(service, server, "GetPendingAccounts", key, filters);
    const pendingOf = async (server: "WL" | "GEO", key: string, filters: Record<string, unknown> = {}) => {
      const r = await pending(server, key, filters);
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Record<string, unknown>[];
    };

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await setClock(service, "2026-03-10T14:00:00Z");
    });
    after(() => service.close());

    test("WL: approval requests not yet final, with the customer, strategy and settings asked for", async () => {
      const f = await follower(service, p);
      const made = await requested(service, p, startBody(f, { EnableFutures: true }));
      const [row, ...others] = await pendingOf("WL", p.keys.wlAdminA, { BrokerId: SIMULATED_BROKER });
      assert.deepEqual(others, []);
      assert.deepEqual(Object.keys(row as object).sort(), Object.keys(PendingAccountRecord.properties).sort());
      assert.deepEqual(
        {
          ...row,
          Email: "",
          LastName: "",
          StrategyName: "",
        },
        {
          Id: made.ApprovalRequestId,
          Status: "PendingCustomer",
          DeclinedUTC: null,
          UtcDate: "2026-03-10T14:00:00.000Z",
          Account: f.account,
          PersonId: f.personId,
          BrokerName: "Simulated Broker",
          BrokerId: SIMULATED_BROKER,
          FirstName: "Commerce",
          LastName: "",
          Email: "",
          Country: null,
          State: null,
          Language: null,
          WhiteLabelSiteId: p.siteA,
          GeoSiteId: p.geo,
          SiteDomain: "geo.example.com",
          Connection: "Simulated",
          IntroducingBrokerId: null,
          IntroducingBroker: null,
          StrategyId: f.strategyId,
          StrategyName: "",
          SalesRepId: null,
          SalesRep: null,
          IsTradeLeader: false,
          FirstBrokerActivationDate: null,
          // The account has not reached the service yet.
          NetLiquidationValue: null,
          NetLiquidationValueDate: null,
          EnabledFutures: true,
          EnabledForex: false,
          EnabledStocks: true,
          EnabledOptions: false,
        },
      );
      assert.deepEqual(
        (await pendingOf("WL", p.keys.wlAdminA, { SecurityType: "FUT" })).map((r) => r.Id),
        [made.ApprovalRequestId],
      );
      assert.deepEqual(await pendingOf("WL", p.keys.wlAdminA, { SecurityType: "OPT" }), []);
      assert.deepEqual(await pendingOf("WL", p.keys.wlAdminB), []);
      assert.equal((await pendingOf("WL", p.keys.geoAdmin)).length, 1, "site A lies in the geo-site");
      assert.equal((await pendingOf("WL", ADMIN_KEY, { WhiteLabelSiteId: p.siteA })).length, 1);
      assert.deepEqual(await pendingOf("WL", ADMIN_KEY, { WhiteLabelSiteId: p.siteB }), []);
      assert.equal((await pendingOf("WL", ADMIN_KEY, { GeoSite: "Geo Europe" })).length, 1);
      // Once final (here: expired after 7 days) it waits no more.
      await advanceClock(service, 7 * 86_400 + 1);
      assert.deepEqual(await pendingOf("WL", p.keys.wlAdminA), []);
    });

    test("WL: a paper account is no live account waiting", async () => {
      const f = await follower(service, p);
      await brokerAccount(service, f.personId, { account: f.account, paper: true });
      await requested(service, p, startBody(f));
      assert.deepEqual(await pendingOf("WL", p.keys.wlAdminA), []);
    });

    test("GEO: a geo-site requiring approval lists its members' unapproved live setups until approved", async () => {
      const strategy = await newStrategy(service, ADMIN_KEY, p.people.admin);
      const inSite = await newCustomer(service, p.siteA);
      const direct = await memberOf(service, p.geo);
      const elsewhere = await newCustomer(service, p.siteB);
      const siteAccount = await autotrading(service, inSite, strategy, { EnableStocks: true });
      const directAccount = await autotrading(service, direct, strategy, { EnableOptions: true });
      await autotrading(service, elsewhere, strategy, { EnableStocks: true });
      const paper = await brokerAccount(service, direct, { paper: true });
      await follow(service, direct, strategy);
      assert.equal(
        (await startAutotrade(service, ADMIN_KEY, { Account: paper, PersonId: direct, StrategyId: strategy })).status,
        200,
      );
      assert.deepEqual(await pendingOf("GEO", ADMIN_KEY), [], "nothing is required yet");
      await requireApproval(service, p.geo, true);
      const rows = await pendingOf("GEO", p.keys.geoAdmin);
      assert.deepEqual(
        rows.map((row) => [row.Account, row.Status, row.DeclinedUTC, row.GeoSiteId, row.EnabledOptions]),
        [
          [siteAccount, "PendingApproval", null, p.geo, false],
          [directAccount, "PendingApproval", null, p.geo, true],
        ],
      );
      assert.deepEqual(
        (await pendingOf("GEO", p.keys.wlAdminA)).map((row) => row.Account),
        [siteAccount],
      );
      assert.deepEqual(await pendingOf("GEO", p.keys.wlAdminB), []);
      assert.deepEqual(
        (await pendingOf("GEO", ADMIN_KEY, { SecurityType: "OPT" })).map((row) => row.Account),
        [directAccount],
      );
      assert.deepEqual(
        (await pendingOf("GEO", ADMIN_KEY, { WhiteLabelSiteId: p.siteA })).map((row) => row.Account),
        [siteAccount],
      );
      // Approved: it waits no more; the approval deleted: it waits again, Declined since then.
      const approve = { Account: directAccount, PersonId: direct, BrokerId: SIMULATED_BROKER };
      assert.equal((await approval(service, "POST", p.keys.geoAdmin, approve)).status, 200);
      assert.deepEqual(
        (await pendingOf("GEO", ADMIN_KEY)).map((row) => row.Account),
        [siteAccount],
      );
      await advanceClock(service, 3600);
      assert.equal((await approval(service, "DELETE", p.keys.geoAdmin, { Account: directAccount })).status, 200);
      const declined = (await pendingOf("GEO", ADMIN_KEY)).find((row) => row.Account === directAccount);
      assert.equal(declined?.Status, "Declined");
      assert.equal(declined?.DeclinedUTC, declined?.UtcDate);
      assert.ok(Date.parse(declined?.DeclinedUTC as string) > Date.parse("2026-03-17T14:00:00Z"));
      await requireApproval(service, p.geo, false);
      assert.deepEqual(await pendingOf("GEO", ADMIN_KEY), []);
    });

    test("people are refused; sites not administered and values of the wrong kind name the field", async () => {
      for (const server of ["WL", "GEO"] as const) {
        assertRefused(await pending(server, p.keys.personA), 403, "", "1002");
        assertRefused(await pending(server, p.keys.wlAdminA, { WhiteLabelSiteId: p.siteB }), 403, "WhiteLabelSiteId");
        assertRefused(await pending(server, ADMIN_KEY, { WhiteLabelSiteId: 999_999 }), 404, "WhiteLabelSiteId");
        assertRefused(await pending(server, ADMIN_KEY, { GeoSite: "Nowhere" }), 404, "GeoSite", "2013");
        assertRefused(await pending(server, ADMIN_KEY, { SecurityType: "BOND" }), 400, "SecurityType", "1101");
        assertRefused(await pending(server, ADMIN_KEY, { BrokerId: "one" }), 400, "BrokerId", "1101");
      }
      assertRefused(await getAutotrade(service, "GEN", "GetPendingAccounts", ADMIN_KEY), 404, "", "1004");
    });
  });
}
