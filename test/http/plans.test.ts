import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPlan, setAutotradeFeePolicy, subscribeToPlan } from "../../src/services/plans.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/** Licence plans through the API: a person's investor and manager plans, a site's AutoTrading plans. */

for (const backend of BACKENDS) {
  describe(`licence plans (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let investorPlan = 0;
    let autotradeA = 0;
    let autotradeService = 0;
    const subscriptions: number[] = [];

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await setClock(service, "2026-03-10T14:00:00Z");
      const runtime = service.app.runtime;
      investorPlan = (
        await createPlan(runtime, {
          licenseType: "Investor Basic",
          licenseTypeId: 11,
          kind: "investor",
          monthly: "9.99",
          isRecurring: true,
        })
      ).id;
      const managerPlan = (
        await createPlan(runtime, {
          licenseType: "Manager Pro",
          licenseTypeId: 21,
          kind: "manager",
          monthly: "49",
          isRecurring: false,
        })
      ).id;
      autotradeA = (
        await createPlan(runtime, {
          siteId: p.siteA,
          licenseType: "AutoTrade A",
          licenseTypeId: 31,
          kind: "autotrade",
          monthly: "25.50",
          isRecurring: true,
        })
      ).id;
      autotradeService = (
        await createPlan(runtime, {
          licenseType: "AutoTrade Standard",
          licenseTypeId: 30,
          kind: "autotrade",
          monthly: "30",
          isRecurring: true,
        })
      ).id;
      await createPlan(runtime, {
        siteId: p.siteB,
        licenseType: "AutoTrade B",
        licenseTypeId: 32,
        kind: "autotrade",
        monthly: "20",
        isRecurring: true,
      });
      // An ended one-month investor plan, then an open-ended one; a manager plan for two months.
      subscriptions.push(
        (await subscribeToPlan(runtime, { personId: p.people.personA, planId: investorPlan, months: 1 })).id,
      );
      await setClock(service, "2026-05-01T00:00:00Z");
      subscriptions.push((await subscribeToPlan(runtime, { personId: p.people.personA, planId: investorPlan })).id);
      subscriptions.push(
        (await subscribeToPlan(runtime, { personId: p.people.personA, planId: managerPlan, months: 2 })).id,
      );
    });
    after(() => service?.close());

    const plans = (
      operation: string,
      key: string,
      query: Record<string, string>,
      server: "WL" | "GEN" | "GEO" = "WL",
    ) => service.call(server, "GET", `/General/${operation}`, { key, query });

    test("GetInvestorPlanSubscriptions: live ones by default, the full history with ActiveOnly false", async () => {
      for (const server of ["WL", "GEN", "GEO"] as const) {
        const live = await plans(
          "GetInvestorPlanSubscriptions",
          p.keys.personA,
          { PersonId: String(p.people.personA) },
          server,
        );
        assert.equal(live.status, 200, live.text);
        assert.deepEqual(live.json.Results, [
          {
            Id: subscriptions[1],
            PersonId: p.people.personA,
            LicenseType: "Investor Basic",
            LicenseTypeId: 11,
            StartDate: "2026-05-01T00:00:00.000Z",
            EndDate: null,
            IsRecurring: true,
            Cost: 9.99,
          },
        ]);
        assert.ok(live.json.Pagination, "paginated");
      }
      const all = await plans("GetInvestorPlanSubscriptions", p.keys.personA, {
        PersonId: String(p.people.personA),
        ActiveOnly: "false",
      });
      assert.deepEqual(
        all.json.Results.map((s: { Id: number; EndDate: string | null }) => [s.Id, s.EndDate]),
        [
          [subscriptions[0], "2026-04-10T14:00:00.000Z"],
          [subscriptions[1], null],
        ],
      );
      // Keyset pages: one per page, newest first.
      const first = await plans("GetInvestorPlanSubscriptions", p.keys.personA, {
        PersonId: String(p.people.personA),
        ActiveOnly: "false",
        Limit: "1",
        AscendingOrder: "false",
      });
      assert.deepEqual(
        first.json.Results.map((s: { Id: number }) => s.Id),
        [subscriptions[1]],
      );
      const second = await plans("GetInvestorPlanSubscriptions", p.keys.personA, {
        PersonId: String(p.people.personA),
        ActiveOnly: "false",
        Limit: "1",
        AscendingOrder: "false",
        Cursor: first.json.Pagination.next_cursor,
      });
      assert.deepEqual(
        second.json.Results.map((s: { Id: number }) => s.Id),
        [subscriptions[0]],
      );
    });

    test("GetManagerPlanSubscriptions lists manager plans only", async () => {
      const r = await plans("GetManagerPlanSubscriptions", p.keys.personA, { PersonId: String(p.people.personA) });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.json.Results.map((s: { LicenseType: string; EndDate: string; IsRecurring: boolean; Cost: number }) => [
          s.LicenseType,
          s.EndDate,
          s.IsRecurring,
          s.Cost,
        ]),
        [["Manager Pro", "2026-07-01T00:00:00.000Z", false, 49]],
      );
      const none = await plans("GetManagerPlanSubscriptions", p.keys.personB, { PersonId: String(p.people.personB) });
      assert.deepEqual(none.json.Results, []);
    });

    test("plan subscriptions are private: the person and their administrators", async () => {
      for (const operation of ["GetInvestorPlanSubscriptions", "GetManagerPlanSubscriptions"]) {
        for (const who of ["admin", "wlAdminA", "geoAdmin", "personA"] as const) {
          const r = await plans(operation, p.keys[who], { PersonId: String(p.people.personA) });
          assert.equal(r.status, 200, `${who}: ${r.text}`);
        }
        for (const who of ["wlAdminB", "personB"] as const) {
          assertRefused(await plans(operation, p.keys[who], { PersonId: String(p.people.personA) }), 403, "PersonId");
        }
        assertRefused(await plans(operation, p.keys.personA, { PersonId: "987654" }), 404, "PersonId");
        assertRefused(await plans(operation, p.keys.personA, {}), 400, "PersonId", "1102");
        assertRefused(
          await plans(operation, p.keys.personA, { PersonId: String(p.people.personA), ActiveOnly: "x" }),
          400,
          "ActiveOnly",
        );
      }
    });

    test("GetAutotradePlans: the site's and the service-wide plans, and the fee policy", async () => {
      const r = await service.call("WL", "GET", "/Autotrade/GetAutotradePlans", { key: p.keys.wlAdminA });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.Results, [
        {
          WhiteLabelSiteId: p.siteA,
          AutotradeFeePolicy: "CustomerPays",
          Plans: [
            {
              Id: autotradeA,
              WhiteLabelSiteId: p.siteA,
              LicenseType: "AutoTrade A",
              LicenseTypeId: 31,
              MonthlyCost: 25.5,
              IsRecurring: true,
            },
            {
              Id: autotradeService,
              WhiteLabelSiteId: null,
              LicenseType: "AutoTrade Standard",
              LicenseTypeId: 30,
              MonthlyCost: 30,
              IsRecurring: true,
            },
          ],
        },
      ]);
      await setAutotradeFeePolicy(service.app.runtime, p.siteA, "SitePays");
      const customer = await service.call("WL", "GET", "/Autotrade/GetAutotradePlans", { key: p.keys.personA });
      assert.equal(customer.json.Results[0].AutotradeFeePolicy, "SitePays");
      const named = await service.call("WL", "GET", "/Autotrade/GetAutotradePlans", {
        query: { WhiteLabelSiteId: String(p.siteB) },
      });
      assert.deepEqual(
        named.json.Results[0].Plans.map((plan: { LicenseType: string }) => plan.LicenseType),
        ["AutoTrade Standard", "AutoTrade B"],
      );
    });

    test("GetAutotradePlans refusals: another site, no site, a site that is none", async () => {
      const call = (key: string, query: Record<string, string> = {}) =>
        service.call("WL", "GET", "/Autotrade/GetAutotradePlans", { key, query });
      assertRefused(await call(p.keys.wlAdminA, { WhiteLabelSiteId: String(p.siteB) }), 403, "WhiteLabelSiteId");
      assertRefused(await call(p.keys.personB, { WhiteLabelSiteId: String(p.siteA) }), 403, "WhiteLabelSiteId");
      assertRefused(await call(p.keys.geoAdmin), 403, "WhiteLabelSiteId");
      assertRefused(await call(p.keys.admin), 400, "WhiteLabelSiteId", "1102");
      assertRefused(await call(p.keys.admin, { WhiteLabelSiteId: String(p.geo) }), 404, "WhiteLabelSiteId");
      const gen = await service.call("GEN", "GET", "/Autotrade/GetAutotradePlans", { key: p.keys.wlAdminA });
      assert.equal(gen.status, 404, "a white-label operation");
    });
  });
}
