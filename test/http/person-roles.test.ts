import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPerson } from "../../src/services/people.js";
import { createPlan, subscribeToPlan } from "../../src/services/plans.js";
import { subscribe } from "../../src/services/subscriptions.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  statementsDuring,
  type TestService,
} from "../helpers/service.js";

/** IsManager and IsInvestor on Person (GetProfile, SearchProfiles) and site members, from what people hold now. */

for (const backend of BACKENDS) {
  describe(`IsManager and IsInvestor (${backend})`, () => {
    let service: TestService;
    let p: Population;

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await setClock(service, "2026-03-10T14:00:00Z");
    });
    after(() => service?.close());

    /** [IsManager, IsInvestor] of person A as every reader of people shows them. */
    const flags = async () => {
      const profile = await service.call("GEN", "GET", "/General/GetProfile", {
        key: p.keys.personB,
        query: { PersonId: String(p.people.personA) },
      });
      const search = await service.call("WL", "GET", "/General/SearchProfiles", {
        key: p.keys.wlAdminA,
        query: { PersonId: String(p.people.personA) },
      });
      const members = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", { key: p.keys.wlAdminA });
      const member = members.json.Results.find((m: { Id: number }) => m.Id === p.people.personA);
      const seen = [profile.json.Results[0], search.json.Results[0], member].map((r) => [r.IsManager, r.IsInvestor]);
      assert.deepEqual(seen[1], seen[0]);
      assert.deepEqual(seen[2], seen[0]);
      return seen[0];
    };

    test("nobody manages or invests until they own a strategy, subscribe for real or hold a plan", async () => {
      assert.deepEqual(await flags(), [false, false]);
    });

    test("IsManager: owns a live strategy, or holds a live manager plan", async () => {
      const made = await service.call("GEN", "POST", "/Strategies/AddStrategy", {
        key: p.keys.personA,
        body: { StrategyName: "Managed", StartingCapital: 10_000 },
      });
      const strategyId = made.json.Results[0].StrategyId;
      assert.deepEqual(await flags(), [true, false]);
      await service.storage.db.updateTable("strategies").set({ is_alive: 0 }).where("id", "=", strategyId).execute();
      assert.deepEqual(await flags(), [false, false]);
      const runtime = service.app.runtime;
      const plan = await createPlan(runtime, {
        licenseType: "Manager",
        licenseTypeId: 21,
        kind: "manager",
        monthly: "10",
        isRecurring: false,
      });
      await subscribeToPlan(runtime, { personId: p.people.personA, planId: plan.id, months: 1 });
      assert.deepEqual(await flags(), [true, false]);
      await setClock(service, "2026-04-11T00:00:00Z");
      assert.deepEqual(await flags(), [false, false], "the plan ended");
    });

    test("IsInvestor: a live real subscription giving access, or a live investor plan; simulations do not count", async () => {
      const owner = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        body: {
          StrategyName: "Followed",
          StartingCapital: 10_000,
          StrategyOwnerPersonId: p.people.personB,
          InitialSiteVisibility: true,
        },
      });
      const strategyId = owner.json.Results[0].StrategyId;
      const sim = await service.call("WL", "POST", "/Autotrade/StartSim", {
        key: p.keys.wlAdminA,
        body: { PersonId: p.people.personA, StrategyIds: [strategyId] },
      });
      assert.equal(sim.json.Results[0].Started.length, 1, sim.text);
      assert.deepEqual(await flags(), [false, false], "a simulation is not an investment");
      await service.call("WL", "DELETE", "/Autotrade/StopSim", {
        key: p.keys.wlAdminA,
        query: { PersonId: String(p.people.personA), StrategyId: String(strategyId) },
      });
      const guid = await subscribe(service.app.runtime, strategyId, p.people.personA, null);
      assert.deepEqual(await flags(), [false, true]);
      // A term that has run out gives no access.
      await service.storage.db
        .updateTable("subscriptions")
        .set({ paid_until: Date.parse("2026-04-01T00:00:00Z") })
        .where("guid", "=", guid)
        .execute();
      assert.deepEqual(await flags(), [false, false]);
      const plan = await createPlan(service.app.runtime, {
        licenseType: "Investor",
        licenseTypeId: 11,
        kind: "investor",
        monthly: "5",
        isRecurring: true,
      });
      await subscribeToPlan(service.app.runtime, { personId: p.people.personA, planId: plan.id });
      assert.deepEqual(await flags(), [false, true]);
    });

    test("a page of members is read in the same statements however many members it holds", async () => {
      const count = () =>
        statementsDuring(service, async () => {
          const r = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", { key: p.keys.wlAdminA });
          assert.equal(r.status, 200);
        });
      const few = await count();
      for (let i = 0; i < 5; i++) {
        await createPerson(service.app.runtime, {
          email: `member-${i}@example.com`,
          firstName: "Member",
          lastName: String(i),
          role: "person",
          siteId: p.siteA,
        });
      }
      assert.equal(await count(), few);
    });
  });
}
