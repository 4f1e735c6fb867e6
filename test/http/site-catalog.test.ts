import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertRefused, fund, newCustomer, newStrategy, only, simulate } from "../helpers/commerce.js";
import {
  BACKENDS,
  type CallOptions,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * A white-label site's resale catalog through HTTP (docs/decisions.md
 * "White-label commerce (issue 12)"): GetSiteCatalog, UpdateSiteCatalog and
 * WhiteLabelUpdateSiteCatalogPricing, their refusals and the site scoping.
 */
for (const backend of BACKENDS) {
  describe(`site catalog through HTTP (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** A public marketplace strategy of person B's (site B) at 49 dollars a month. */
    let market: number;
    /** Another, at 20 dollars, never added to site A's catalog. */
    let other: number;
    let privateOfB: number;
    let freeOfB: number;
    let deadOfB: number;
    /** A strategy site A owns (person A's). */
    let ownedByA: number;

    const catalog = (key: string, query: Record<string, string> = {}) =>
      service.call("WL", "GET", "/Strategies/GetSiteCatalog", { key, query });
    const update = (key: string, body: Record<string, unknown>) =>
      service.call("WL", "POST", "/Strategies/UpdateSiteCatalog", { key, body });
    const price = (key: string, body: Record<string, unknown>) =>
      service.call("WL", "POST", "/Strategies/WhiteLabelUpdateSiteCatalogPricing", { key, body });
    const stop = (options: CallOptions) =>
      service.call("WL", "DELETE", "/Strategies/WhiteLabelStopSubscription", options);

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await setClock(service, "2027-04-01T10:00:00Z");
      market = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 49 });
      other = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 20 });
      privateOfB = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 30, isPublic: false });
      freeOfB = await newStrategy(service, p.keys.wlAdminB, p.people.personB);
      deadOfB = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 10 });
      await service.storage.db.updateTable("strategies").set({ is_alive: 0 }).where("id", "=", deadOfB).execute();
      ownedByA = await newStrategy(service, p.keys.wlAdminA, p.people.personA, { monthly: 15 });
    });
    after(() => service.close());

    test("Add reports each strategy: resellable ones added, the others refused with a reason", async () => {
      const r = await update(p.keys.wlAdminA, {
        StrategyIds: [market, ownedByA, privateOfB, freeOfB, deadOfB, 987654],
        Action: "Add",
      });
      assert.equal(r.status, 200, r.text);
      const byId = new Map(r.json.Results.map((x: { StrategyId: number }) => [x.StrategyId, x]));
      assert.deepEqual(byId.get(market), {
        StrategyId: market,
        Success: true,
        Result: "added",
        Reason: null,
        ActiveSubscriberCount: null,
      });
      for (const [id, reason] of [
        [ownedByA, /owns this strategy/],
        [privateOfB, /No strategy/],
        [freeOfB, /no monthly price/],
        [deadOfB, /no longer alive/],
        [987654, /No strategy 987654/],
      ] as const) {
        const result = byId.get(id) as { Success: boolean; Result: string; Reason: string };
        assert.equal(result.Success, false, `${id}`);
        assert.equal(result.Result, "refused");
        assert.match(result.Reason, reason);
      }
      const again = await update(p.keys.wlAdminA, { StrategyIds: [market], Action: "Add" });
      assert.deepEqual(only(again), {
        StrategyId: market,
        Success: true,
        Result: "already_in_catalog",
        Reason: null,
        ActiveSubscriberCount: null,
      });
    });

    test("GetSiteCatalog: the site's rows with base price, markup and resulting price; each site sees its own", async () => {
      const row = only(await catalog(p.keys.wlAdminA));
      assert.equal(row.StrategyId, market);
      assert.equal(row.WhiteLabelSiteId, p.siteA);
      assert.match(row.StrategyName, /^Commerce /);
      assert.equal(row.DisplayName, null);
      assert.equal(row.BaseMonthlyCost, 49);
      assert.equal(row.MonthlyMarkup, 0);
      assert.equal(row.MonthlyCost, 49);
      assert.equal(row.AddedDate, "2027-04-01T10:00:00.000Z");
      assert.deepEqual((await catalog(p.keys.admin, { WhiteLabelSiteId: String(p.siteA) })).json.Results, [row]);
      assert.deepEqual((await catalog(p.keys.wlAdminB)).json.Results, []);
      assert.ok((await catalog(p.keys.wlAdminA)).json.Pagination, "paginated");
    });

    test("GetSiteCatalog scoping: admins name the site, others may not; no site of that id is 404", async () => {
      assertRefused(await catalog(p.keys.admin), 400, "WhiteLabelSiteId", "1102");
      assertRefused(
        await catalog(p.keys.wlAdminB, { WhiteLabelSiteId: String(p.siteA) }),
        403,
        "WhiteLabelSiteId",
        "1002",
      );
      assertRefused(await catalog(p.keys.admin, { WhiteLabelSiteId: String(p.geo) }), 404, "WhiteLabelSiteId", "2013");
      assert.equal((await catalog(p.keys.personA)).status, 403);
      assert.equal((await catalog(p.keys.geoAdmin)).status, 403);
    });

    test("pricing: markup, display name and descriptions are shown at once, in exact dollars", async () => {
      const priced = only(
        await price(p.keys.wlAdminA, {
          StrategyId: market,
          MonthlyMarkup: "10.07",
          DisplayName: "Alpine Alpha",
          ShortDescription: "Our pick",
          LongDescription: "Line one\nline two",
        }),
      );
      assert.equal(priced.MonthlyMarkup, 10.07);
      assert.equal(priced.MonthlyCost, 59.07);
      assert.equal(priced.DisplayName, "Alpine Alpha");
      assert.equal(priced.ShortDescription, "Our pick");
      assert.equal(priced.LongDescription, "Line one\nline two");
      assert.deepEqual(only(await catalog(p.keys.wlAdminA)), priced);

      // DisplayName is stated every call: omitted shows the original name; descriptions omitted are kept.
      const renamed = only(await price(p.keys.wlAdminA, { StrategyId: market, MonthlyMarkup: 0.1 }));
      assert.equal(renamed.DisplayName, null);
      assert.equal(renamed.ShortDescription, "Our pick");
      assert.equal(renamed.MonthlyCost, 49.1);
      const emptied = only(
        await price(p.keys.wlAdminA, { StrategyId: market, MonthlyMarkup: 0.2, DisplayName: "", ShortDescription: "" }),
      );
      assert.equal(emptied.DisplayName, null);
      assert.equal(emptied.ShortDescription, null, "the strategy's own (none) shows again");
      assert.equal(emptied.LongDescription, "Line one\nline two");
      assert.equal(emptied.MonthlyCost, 49.2);
      // A service admin prices any site's catalog.
      const byAdmin = only(
        await price(p.keys.admin, { StrategyId: market, MonthlyMarkup: 5, WhiteLabelSiteId: p.siteA }),
      );
      assert.equal(byAdmin.MonthlyCost, 54);
    });

    test("pricing refusals: bad markups, owned strategies, strategies not in the catalog, other sites", async () => {
      for (const markup of ["0.001", -1, "-0.01", "ten", 10_000_001]) {
        assertRefused(
          await price(p.keys.wlAdminA, { StrategyId: market, MonthlyMarkup: markup }),
          400,
          "MonthlyMarkup",
          "1101",
        );
      }
      assertRefused(await price(p.keys.wlAdminA, { StrategyId: market }), 400, "MonthlyMarkup", "1102");
      assertRefused(
        await price(p.keys.wlAdminA, { StrategyId: market, MonthlyMarkup: 1, DisplayName: "x".repeat(41) }),
        400,
        "DisplayName",
        "1101",
      );
      assertRefused(
        await price(p.keys.wlAdminA, { StrategyId: ownedByA, MonthlyMarkup: 1 }),
        409,
        "StrategyId",
        "1202",
      );
      assertRefused(await price(p.keys.wlAdminA, { StrategyId: other, MonthlyMarkup: 1 }), 409, "StrategyId", "1202");
      assertRefused(
        await price(p.keys.wlAdminA, { StrategyId: privateOfB, MonthlyMarkup: 1 }),
        404,
        "StrategyId",
        "2013",
      );
      // Site B has not added it: its catalog has nothing to price.
      assertRefused(await price(p.keys.wlAdminB, { StrategyId: market, MonthlyMarkup: 1 }), 409, "StrategyId", "1202");
      assertRefused(
        await price(p.keys.wlAdminB, { StrategyId: market, MonthlyMarkup: 1, WhiteLabelSiteId: p.siteA }),
        403,
        "WhiteLabelSiteId",
        "1002",
      );
      assert.equal(only(await catalog(p.keys.wlAdminA)).MonthlyCost, 54, "nothing changed");
    });

    test("UpdateSiteCatalog input: 1 to 100 distinct ids, Add or Remove", async () => {
      assertRefused(await update(p.keys.wlAdminA, { StrategyIds: [], Action: "Add" }), 400, "StrategyIds", "1101");
      const many = Array.from({ length: 101 }, (_, i) => i + 1);
      assertRefused(await update(p.keys.wlAdminA, { StrategyIds: many, Action: "Add" }), 400, "StrategyIds", "1101");
      assertRefused(
        await update(p.keys.wlAdminA, { StrategyIds: [market, market], Action: "Add" }),
        400,
        "StrategyIds",
        "1101",
      );
      assertRefused(await update(p.keys.wlAdminA, { StrategyIds: [market], Action: "Delete" }), 400, "Action", "1101");
      assertRefused(await update(p.keys.wlAdminA, { StrategyIds: [market] }), 400, "Action", "1102");
      const hundred = Array.from({ length: 100 }, (_, i) => 900_000 + i);
      const r = await update(p.keys.wlAdminA, { StrategyIds: hundred, Action: "Add" });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.Results.length, 100);
      assert.equal(
        r.json.Results.every((x: { Result: string }) => x.Result === "refused"),
        true,
      );
    });

    test("Remove: refused per strategy while site customers hold a live resold subscription; simulated ones never block", async () => {
      await fund(service, p.siteA, 500);
      const extra = await newStrategy(service, p.keys.wlAdminB, p.people.personB, { monthly: 5 });
      only(await update(p.keys.wlAdminA, { StrategyIds: [extra], Action: "Add" }));
      const customer = await newCustomer(service, p.siteA);
      const watcher = await newCustomer(service, p.siteA);
      await simulate(service, watcher, market);
      const started = only(
        await service.call("WL", "POST", "/Strategies/WhiteLabelStartSubscription", {
          key: p.keys.wlAdminA,
          body: { PersonId: customer, StrategyId: market, IdempotencyKey: "catalog-remove-1" },
        }),
      );
      const r = await update(p.keys.wlAdminA, { StrategyIds: [market, extra, other], Action: "Remove" });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.Results[0], {
        StrategyId: market,
        Success: false,
        Result: "refused",
        Reason: r.json.Results[0].Reason,
        ActiveSubscriberCount: 1,
      });
      assert.deepEqual(r.json.Results.slice(1), [
        { StrategyId: extra, Success: true, Result: "removed", Reason: null, ActiveSubscriberCount: 0 },
        { StrategyId: other, Success: true, Result: "not_in_catalog", Reason: null, ActiveSubscriberCount: 0 },
      ]);
      assert.equal(only(await catalog(p.keys.wlAdminA)).StrategyId, market, "still in the catalog");

      // Stopped at the end of the term, the subscriber is still live until then: removal still refused.
      const query = { PersonId: String(customer), StrategyId: String(market) };
      assert.equal(only(await stop({ key: p.keys.wlAdminA, query })).IsCancelPending, true);
      const stillRefused = await update(p.keys.wlAdminA, { StrategyIds: [market], Action: "Remove" });
      assert.equal(only(stillRefused).ActiveSubscriberCount, 1);
      assert.equal(
        only(await stop({ key: p.keys.wlAdminA, query: { ...query, Mode: "Immediate" } })).SubscriptionId,
        started.SubscriptionId,
      );
      assert.deepEqual(only(await update(p.keys.wlAdminA, { StrategyIds: [market], Action: "Remove" })), {
        StrategyId: market,
        Success: true,
        Result: "removed",
        Reason: null,
        ActiveSubscriberCount: 0,
      });
      assert.deepEqual((await catalog(p.keys.wlAdminA)).json.Results, []);
      assert.equal(
        only(await update(p.keys.wlAdminA, { StrategyIds: [market], Action: "Remove" })).Result,
        "not_in_catalog",
      );
    });

    test("UpdateSiteCatalog scoping: other sites and non-administrators are refused, nothing changes", async () => {
      assertRefused(
        await update(p.keys.wlAdminB, { StrategyIds: [other], Action: "Add", WhiteLabelSiteId: p.siteA }),
        403,
        "WhiteLabelSiteId",
        "1002",
      );
      assertRefused(
        await update(p.keys.admin, { StrategyIds: [other], Action: "Add" }),
        400,
        "WhiteLabelSiteId",
        "1102",
      );
      assert.equal((await update(p.keys.personA, { StrategyIds: [other], Action: "Add" })).status, 403);
      assert.deepEqual((await catalog(p.keys.wlAdminA)).json.Results, []);
      // Site B adds its own customer's strategy? It owns it: refused.
      assert.equal(only(await update(p.keys.wlAdminB, { StrategyIds: [other], Action: "Add" })).Result, "refused");
      const added = await update(p.keys.admin, { StrategyIds: [other], Action: "Add", WhiteLabelSiteId: p.siteA });
      assert.equal(only(added).Result, "added");
      assert.equal(only(await catalog(p.keys.wlAdminA)).StrategyId, other);
    });
  });
}
