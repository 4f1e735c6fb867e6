import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { subscribe, unsubscribe } from "../../src/services/subscriptions.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/** GetWlInstrumentationExport's Subscriptions: the site's subscriptions live in the window, with their billing state. */

for (const backend of BACKENDS) {
  describe(`instrumentation export: subscriptions (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let strategyId = 0;
    let otherStrategyId = 0;

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      const made = async (name: string) => {
        const r = await service.call("WL", "POST", "/Strategies/AddStrategy", {
          body: {
            StrategyName: name,
            StartingCapital: 10_000,
            StrategyOwnerPersonId: p.people.personB,
            InitialSiteVisibility: true,
          },
        });
        return r.json.Results[0].StrategyId as number;
      };
      strategyId = await made("Exported");
      otherStrategyId = await made("Exported Too");
    });
    after(() => service?.close());

    const exportOf = (key: string, query: Record<string, string>) =>
      service.call("WL", "GET", "/General/GetWlInstrumentationExport", { key, query });

    test("subscriptions of the site's customers overlapping the window, with kind, lane, price and billing state", async () => {
      const runtime = service.app.runtime;
      // Ended before the window: left out.
      await setClock(service, "2026-02-01T00:00:00Z");
      await subscribe(runtime, otherStrategyId, p.people.personA, null);
      await setClock(service, "2026-02-02T00:00:00Z");
      await unsubscribe(runtime, otherStrategyId, p.people.personA, "immediate");

      await setClock(service, "2026-03-10T14:00:00Z");
      const sim = await service.call("WL", "POST", "/Autotrade/StartSim", {
        key: p.keys.wlAdminA,
        body: { PersonId: p.people.personA, StrategyIds: [strategyId] },
      });
      assert.equal(sim.status, 200, sim.text);
      // Another site's customer: not site A's.
      await subscribe(runtime, strategyId, p.people.personB, null);
      await setClock(service, "2026-03-11T14:00:00Z");
      await subscribe(runtime, otherStrategyId, p.people.personA, null);

      const r = await exportOf(p.keys.wlAdminA, { StartDate: "2026-03-01T00:00:00Z", EndDate: "2026-03-31T00:00:00Z" });
      assert.equal(r.status, 200, r.text);
      const rows = r.json.Results[0].Subscriptions;
      assert.deepEqual(
        rows.map((s: { PersonId: number; StrategyId: number; Kind: string; Lane: string }) => [
          s.PersonId,
          s.StrategyId,
          s.Kind,
          s.Lane,
        ]),
        [
          [p.people.personA, strategyId, "simulated", "free"],
          [p.people.personA, otherStrategyId, "real", "free"],
        ],
      );
      assert.deepEqual(rows[0], {
        SubscriptionId: sim.json.Results[0].Started[0].SubscriptionId,
        PersonId: p.people.personA,
        StrategyId: strategyId,
        Kind: "simulated",
        Lane: "free",
        WhiteLabelSiteId: p.siteA,
        Price: 0,
        BasePrice: 0,
        Markup: 0,
        BillingInterval: null,
        BillingIntervalCount: null,
        StartDate: "2026-03-10T14:00:00.000Z",
        EndDate: null,
        EndReason: null,
        PaidUntil: null,
        NextChargeDate: null,
        NextBillingPrice: null,
        IsCancelPending: false,
        BillingFailureCount: 0,
        LastBillingFailureReason: null,
        LastBillingFailureAt: null,
        LastTransactionDate: null,
        LastTransactionAmount: null,
      });

      const siteB = await exportOf(p.keys.wlAdminB, {
        StartDate: "2026-03-01T00:00:00Z",
        EndDate: "2026-03-31T00:00:00Z",
      });
      assert.deepEqual(
        siteB.json.Results[0].Subscriptions.map((s: { PersonId: number }) => s.PersonId),
        [p.people.personB],
      );
      const before = await exportOf(p.keys.wlAdminA, {
        StartDate: "2026-01-01T00:00:00Z",
        EndDate: "2026-01-31T00:00:00Z",
      });
      assert.deepEqual(before.json.Results[0].Subscriptions, []);
    });
  });
}
