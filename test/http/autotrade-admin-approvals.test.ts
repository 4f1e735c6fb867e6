import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { SIMULATED_BROKER, settleAutotrade } from "../helpers/autotrade.js";
import { approval, autotradingAtBroker, memberOf, openedAccount, requireApproval } from "../helpers/autotrade-admin.js";
import { newCustomer } from "../helpers/commerce.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * The geo-sites' approvals of brokerage accounts (ApprovedAutotradeAccount,
 * ApprovedBrokerTransmitAccount on GEO), the person's ApprovedAccounts, and
 * the rule they feed: where a geo-site requires approval, an unapproved live
 * account's setups copy closing orders only.
 */

for (const backend of BACKENDS) {
  describe(`geo-site account approvals (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let strategy = 0;

    const openAccount = (personId: number) => openedAccount(service, personId);
    /** The person autotrades the strategy in a new account (stocks). */
    const autotrades = async (personId: number, extra: Record<string, unknown> = {}, paper = false) => {
      const account = await autotradingAtBroker(service, personId, strategy, { extra, paper });
      await settleAutotrade(service);
      return account;
    };
    const trade = async (side: "buy" | "sell", quantity: number) => {
      const order = await placed(service, p.keys.personA, stockOrder(strategy, "AAPL", side, quantity));
      await settleAutotrade(service);
      return order.SignalId as number;
    };
    const copiesOf = (account: string) =>
      service.storage.db
        .selectFrom("account_orders as o")
        .innerJoin("broker_accounts as b", "b.account_id", "o.account_id")
        .select(["o.side", "o.quantity", "o.status", "o.open_close"])
        .where("b.account_number", "=", account)
        .orderBy("o.id")
        .execute();
    const skipsOf = (account: string) =>
      service.storage.db
        .selectFrom("copy_skips as s")
        .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
        .select(["s.reason", "s.source_order_id"])
        .where("b.account_number", "=", account)
        .orderBy("s.id")
        .execute();
    const approvedSetting = async (personId: number, account: string) => {
      const r = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSettings", {
        query: { PersonId: String(personId), Account: account },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0].Approved as boolean;
    };
    const approvalCount = async () =>
      Number(
        (
          await service.storage.db
            .selectFrom("approved_accounts")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const profileOf = async (personId: number, key: string) => {
      const r = await service.call("GEN", "GET", "/General/GetProfile", { key, query: { PersonId: String(personId) } });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0];
    };

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      p = await populate(service);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: MARKET_OPEN } });
      await setQuote(service, "AAPL", 200, 200.1);
      strategy = await newStrategy(service, p.keys.personA, 100_000, "Approved Strategy");
      await service.storage.db
        .insertInto("sites")
        .values({ kind: "geo", name: "Geo Asia", domain: null, geo_site_id: null, created_at: 0 })
        .execute();
    });
    after(() => service.close());

    test("POST approves a member's account; the person's ApprovedAccounts show it to those entitled", async () => {
      const customer = await newCustomer(service, p.siteA);
      const account = await openAccount(customer);
      const body = { Account: account, PersonId: customer, BrokerId: SIMULATED_BROKER };
      const made = await approval(service, "POST", p.keys.geoAdmin, body);
      assert.equal(made.status, 200, made.text);
      const [dto] = made.json.Results;
      assert.deepEqual(dto, {
        Id: dto.Id,
        Account: account,
        PersonId: customer,
        BrokerId: SIMULATED_BROKER,
        WhiteLabelSiteId: p.siteA,
        GeoSite: "Geo Europe",
        IsCFD: false,
        IsDeleted: false,
      });
      // Again: the same approval; IsCFD when sent is set, when omitted kept.
      const cfd = await approval(service, "POST", ADMIN_KEY, { ...body, IsCFD: true, GeoSite: "GEO.EXAMPLE.COM" });
      assert.deepEqual([cfd.json.Results[0].Id, cfd.json.Results[0].IsCFD], [dto.Id, true]);
      const again = await approval(service, "POST", p.keys.geoAdmin, { ...body, WhiteLabelSiteId: p.siteA });
      assert.deepEqual([again.json.Results[0].Id, again.json.Results[0].IsCFD], [dto.Id, true]);
      const transmit = await approval(service, "POST", p.keys.geoAdmin, body, "ApprovedBrokerTransmitAccount");
      assert.equal(transmit.status, 200, transmit.text);
      assert.notEqual(transmit.json.Results[0].Id, dto.Id);

      const shown = await profileOf(customer, p.keys.wlAdminA);
      assert.deepEqual(shown.ApprovedAccounts, [
        {
          PersonId: customer,
          AddedDate: MARKET_OPEN.replace("Z", ".000Z"),
          Account: account,
          BrokerId: SIMULATED_BROKER,
          ConnectionType: 0,
          AddedByPersonId: p.people.geoAdmin,
        },
        {
          PersonId: customer,
          AddedDate: MARKET_OPEN.replace("Z", ".000Z"),
          Account: account,
          BrokerId: SIMULATED_BROKER,
          ConnectionType: 1,
          AddedByPersonId: p.people.geoAdmin,
        },
      ]);
      assert.equal((await profileOf(customer, p.keys.personB)).ApprovedAccounts, null, "private");
      const searched = await service.call("GEO", "GET", "/General/SearchProfiles", {
        key: p.keys.geoAdmin,
        query: { PersonId: String(customer) },
      });
      assert.equal(searched.json.Results[0].ApprovedAccounts.length, 2);

      // DELETE answers what it deleted; a second time there is nothing to delete.
      const deleted = await approval(service, "DELETE", p.keys.geoAdmin, { Account: account });
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(deleted.json.Results, [{ ...dto, IsCFD: true, IsDeleted: true }]);
      assert.deepEqual(
        (await profileOf(customer, ADMIN_KEY)).ApprovedAccounts.map(
          (a: { ConnectionType: number }) => a.ConnectionType,
        ),
        [1],
      );
      assertRefused(await approval(service, "DELETE", p.keys.geoAdmin, { Account: account }), 404, "Account", "2013");
      const narrowed = await approval(
        service,
        "DELETE",
        ADMIN_KEY,
        { Account: account, GeoSite: "Geo Europe", PersonId: customer, BrokerId: SIMULATED_BROKER, IsCFD: true },
        "ApprovedBrokerTransmitAccount",
      );
      assertRefused(narrowed, 404, "Account");
      const gone = await approval(
        service,
        "DELETE",
        ADMIN_KEY,
        { Account: account, IsCFD: false },
        "ApprovedBrokerTransmitAccount",
      );
      assert.equal(gone.status, 200, gone.text);
      assert.deepEqual((await profileOf(customer, ADMIN_KEY)).ApprovedAccounts, []);
      // Deleted approvals are kept, marked.
      assert.equal(await approvalCount(), 2);
    });

    test("refusals name the field and write nothing", async () => {
      const customer = await newCustomer(service, p.siteA);
      const account = await openAccount(customer);
      const outsider = await openAccount(p.people.personB);
      const body = { Account: account, PersonId: customer, BrokerId: SIMULATED_BROKER };
      const before = await approvalCount();
      const post = (key: string, values: Record<string, unknown>) => approval(service, "POST", key, values);
      assertRefused(await post(ADMIN_KEY, { Account: account, BrokerId: 1 }), 400, "PersonId", "1102");
      assertRefused(await post(ADMIN_KEY, { Account: account, PersonId: customer }), 400, "BrokerId", "1102");
      assertRefused(await post(ADMIN_KEY, { PersonId: customer, BrokerId: 1 }), 400, "Account", "1102");
      assertRefused(await post(ADMIN_KEY, { ...body, IsCFD: "maybe" }), 400, "IsCFD", "1101");
      assertRefused(await post(ADMIN_KEY, { ...body, PersonId: 999_999 }), 404, "PersonId", "2013");
      // Person B belongs to site B, which lies in no geo-site.
      assertRefused(
        await post(p.keys.geoAdmin, { ...body, Account: outsider, PersonId: p.people.personB }),
        403,
        "PersonId",
      );
      assertRefused(await post(ADMIN_KEY, { ...body, Account: outsider, PersonId: p.people.personB }), 409, "PersonId");
      assertRefused(await post(ADMIN_KEY, { ...body, GeoSite: "Atlantis" }), 404, "GeoSite", "2013");
      assertRefused(await post(p.keys.geoAdmin, { ...body, GeoSite: "Geo Asia" }), 403, "GeoSite", "1002");
      assertRefused(await post(ADMIN_KEY, { ...body, GeoSite: "Geo Asia" }), 400, "GeoSite", "1101");
      assertRefused(await post(ADMIN_KEY, { ...body, WhiteLabelSiteId: p.siteB }), 400, "WhiteLabelSiteId", "1101");
      assertRefused(await post(ADMIN_KEY, { ...body, BrokerId: 77 }), 404, "BrokerId", "2013");
      assertRefused(await post(ADMIN_KEY, { ...body, Account: outsider }), 404, "Account", "2013");
      assertRefused(await post(ADMIN_KEY, { ...body, Account: "NO-SUCH-ACCOUNT" }), 404, "Account", "2013");
      for (const who of ["wlAdminA", "personA"] as const) {
        assertRefused(await post(p.keys[who], body), 403, "", "1002");
      }
      for (const server of ["WL", "GEN"] as const) {
        const r = await service.call(server, "POST", "/Autotrade/ApprovedAutotradeAccount", { body });
        assertRefused(r, 404, "", "1004");
      }
      const del = (key: string, values: Record<string, unknown>) => approval(service, "DELETE", key, values);
      assertRefused(await del(ADMIN_KEY, {}), 400, "Account", "1102");
      assertRefused(await del(p.keys.geoAdmin, { Account: account, GeoSite: "Geo Asia" }), 403, "GeoSite");
      assertRefused(await del(ADMIN_KEY, { Account: account, GeoSite: "Atlantis" }), 404, "GeoSite");
      assertRefused(await del(ADMIN_KEY, { Account: account }), 404, "Account");
      assert.equal(await approvalCount(), before, "nothing written");
    });

    test("where approval is required an unapproved account copies closes only; approval lets it open", async () => {
      await requireApproval(service, p.geo, true);
      try {
        const customer = await memberOf(service, p.geo);
        const account = await autotrades(customer);
        assert.equal(await approvedSetting(customer, account), false);
        const refused = await trade("buy", 100);
        assert.deepEqual(await copiesOf(account), []);
        assert.deepEqual(await skipsOf(account), [{ reason: "not_approved", source_order_id: refused }]);

        const body = { Account: account, PersonId: customer, BrokerId: SIMULATED_BROKER };
        assert.equal((await approval(service, "POST", p.keys.geoAdmin, body)).status, 200);
        await settleAutotrade(service);
        assert.equal(await approvedSetting(customer, account), true);
        await trade("buy", 100);
        assert.deepEqual(await copiesOf(account), [
          { side: "buy", quantity: "50", status: "Filled", open_close: "open" },
        ]);

        // Withdrawn: no new position, but the follower still exits with the strategy.
        assert.equal((await approval(service, "DELETE", p.keys.geoAdmin, { Account: account })).status, 200);
        await settleAutotrade(service);
        assert.equal(await approvedSetting(customer, account), false);
        const skipped = await trade("buy", 100);
        assert.deepEqual((await skipsOf(account)).at(-1), { reason: "not_approved", source_order_id: skipped });
        await trade("sell", 300);
        assert.deepEqual(await copiesOf(account), [
          { side: "buy", quantity: "50", status: "Filled", open_close: "open" },
          { side: "sell", quantity: "50", status: "Filled", open_close: "close" },
        ]);

        // Paper accounts risk nothing: no approval needed.
        const paper = await autotrades(customer, {}, true);
        await trade("buy", 10);
        await trade("sell", 10);
        assert.deepEqual(
          (await copiesOf(paper)).map((copy) => `${copy.side} ${copy.quantity} ${copy.status}`),
          ["buy 5 Filled", "sell 5 Filled"],
        );
      } finally {
        await requireApproval(service, p.geo, false);
      }
    });

    test("stocks traded as CFDs need the approval's IsCFD where approval is required", async () => {
      await requireApproval(service, p.geo, true);
      try {
        const customer = await newCustomer(service, p.siteA);
        const account = await autotrades(customer, { TradeStocksAsCFD: true });
        const settings = await service.call("WL", "GET", "/Autotrade/GetAutotradeSettings", {
          query: { PersonId: String(customer) },
        });
        assert.equal(settings.json.Results[0].TradeStocksAsCFD, true);
        const body = { Account: account, PersonId: customer, BrokerId: SIMULATED_BROKER };
        assert.equal((await approval(service, "POST", p.keys.geoAdmin, body)).status, 200);
        await settleAutotrade(service);
        const refused = await trade("buy", 10);
        assert.deepEqual(await skipsOf(account), [{ reason: "cfd_not_approved", source_order_id: refused }]);
        assert.equal((await approval(service, "POST", p.keys.geoAdmin, { ...body, IsCFD: true })).status, 200);
        await settleAutotrade(service);
        await trade("buy", 10);
        assert.deepEqual(
          (await copiesOf(account)).map((copy) => `${copy.side} ${copy.quantity} ${copy.status}`),
          ["buy 5 Filled"],
        );
        await trade("sell", 20);
      } finally {
        await requireApproval(service, p.geo, false);
      }
    });

    test("the operator's switch reaches a running copier on its next pass", async () => {
      const customer = await newCustomer(service, p.siteA);
      const account = await autotrades(customer);
      await requireApproval(service, p.geo, true);
      await service.app.desk.run();
      const skipped = await trade("buy", 10);
      assert.deepEqual(await skipsOf(account), [{ reason: "not_approved", source_order_id: skipped }]);
      await requireApproval(service, p.geo, false);
      await service.app.desk.run();
      await trade("buy", 10);
      assert.equal((await copiesOf(account)).length, 1);
      await trade("sell", 20);
    });
  });
}
