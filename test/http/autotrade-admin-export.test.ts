import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { SIMULATED_BROKER, settleAutotrade } from "../helpers/autotrade.js";
import { approval, autotradingAtBroker } from "../helpers/autotrade-admin.js";
import { newCustomer } from "../helpers/commerce.js";
import {
  ADMIN_KEY,
  advanceClock,
  BACKENDS,
  freshStorage,
  type Population,
  populate,
  startTestService,
  type TestService,
  type TestStorage,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * GetWlInstrumentationExport's AutotradeAccountStability (the site's
 * customers' brokerage account events, stored as they happen) and Executions
 * (their accounts' fills) in the window.
 */

/** The storage, left open when a service on it closes (a restart opens another service on it). */
const kept = (storage: TestStorage): TestStorage => ({ ...storage, dispose: async () => {} });

for (const backend of BACKENDS) {
  describe(`instrumentation export: account stability and executions (${backend})`, () => {
    let fresh: TestStorage;
    let service: TestService;
    let p: Population;
    let strategy = 0;
    let customer = 0;
    let account = "";
    let other = "";

    const exported = async (startDate: string, endDate: string) => {
      const r = await service.call("WL", "GET", "/General/GetWlInstrumentationExport", {
        key: p.keys.wlAdminA,
        query: { StartDate: startDate, EndDate: endDate },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0];
    };
    const eventsOf = async (startDate = "2026-03-01T00:00:00Z", endDate = "2026-04-01T00:00:00Z") =>
      (await exported(startDate, endDate)).AutotradeAccountStability.map(
        (event: { Account: string; EventType: string; Reason: string | null }) =>
          `${event.Account === account ? "A" : event.Account} ${event.EventType}: ${event.Reason}`,
      );
    const settings = async (body: Record<string, unknown>) => {
      const r = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        body: { PersonId: customer, Account: account, ...body },
      });
      assert.equal(r.status, 200, r.text);
      await settleAutotrade(service);
    };
    const fault = async (target: string, body: Record<string, unknown>) => {
      const r = await service.call("GEN", "POST", "/Sandbox/SetBrokerFault", { body: { Account: target, ...body } });
      assert.equal(r.status, 200, r.text);
      await settleAutotrade(service);
    };
    const autotrades = (personId: number) => autotradingAtBroker(service, personId, strategy);

    before(async () => {
      fresh = await freshStorage(backend);
      service = await startTestService(backend, { storage: kept(fresh), marketFeed: { kind: "manual" } });
      p = await populate(service);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: MARKET_OPEN } });
      await setQuote(service, "AAPL", 200, 200.1);
      strategy = await newStrategy(service, p.keys.personA, 100_000, "Exported Strategy");
      customer = await newCustomer(service, p.siteA);
      account = await autotrades(customer);
      other = await autotrades(await newCustomer(service, p.siteB));
      await settleAutotrade(service);
    });
    after(async () => {
      await service.close();
      await fresh.dispose();
    });

    test("flag changes, restrictions, external executions, delinks and approvals are recorded as they happen", async () => {
      await settings({ IsAutotradeEnabled: false });
      await settings({ IsAutotradeEnabled: false });
      await settings({ IsAutotradeEnabled: true, IsAutoSyncEnabled: true });
      await advanceClock(service, 60);
      await fault(account, { Fault: "patternDayTrader", Reason: "Four day trades in five days" });
      await fault(account, { Fault: "clear" });
      await settings({ IsAutotradeEnabled: true });
      await fault(account, { Fault: "externalExecution", Symbol: "AAPL", Side: "buy", Quantity: 5 });
      await fault(account, { Fault: "delink", Reason: "Authorization revoked" });
      await fault(other, { Fault: "delink", Reason: "Site B's account" });
      const approved = await approval(service, "POST", p.keys.geoAdmin, {
        Account: account,
        PersonId: customer,
        BrokerId: SIMULATED_BROKER,
        IsCFD: true,
      });
      assert.equal(approved.status, 200, approved.text);
      assert.equal((await approval(service, "DELETE", ADMIN_KEY, { Account: account })).status, 200);
      assert.deepEqual(await eventsOf(), [
        "A Linked: null",
        "A AutotradeDisabled: Disabled with SetAutotradeSettings",
        "A AutotradeEnabled: Enabled with SetAutotradeSettings",
        "A Restricted: Four day trades in five days",
        "A AutotradeDisabled: The broker restricted the account: Four day trades in five days",
        "A AutotradeEnabled: Enabled with SetAutotradeSettings",
        "A AutoSyncDisabled: An order the service did not send executed in the account (buy 5 AAPL)",
        "A Delinked: Authorization revoked",
        "A AutotradeDisabled: The broker delinked the account: Authorization revoked",
        "A ApprovalGranted: Approved for autotrading by Geo Europe (CFDs allowed)",
        "A ApprovalDeleted: Approval deleted by Geo Europe",
      ]);
      const [linked] = (await exported("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")).AutotradeAccountStability;
      assert.deepEqual(Object.keys(linked).sort(), [
        "Account",
        "BrokerId",
        "EventDate",
        "EventId",
        "EventType",
        "PersonId",
        "Reason",
      ]);
      assert.deepEqual(
        [linked.PersonId, linked.BrokerId, linked.EventDate],
        [customer, SIMULATED_BROKER, "2026-03-10T14:00:00.000Z"],
      );
      // The window: [StartDate, EndDate).
      assert.deepEqual(await eventsOf("2026-03-10T14:00:00Z", "2026-03-10T14:01:00Z"), [
        "A Linked: null",
        "A AutotradeDisabled: Disabled with SetAutotradeSettings",
        "A AutotradeEnabled: Enabled with SetAutotradeSettings",
      ]);
      assert.equal((await eventsOf("2026-03-10T14:01:00Z", "2026-03-11T00:00:00Z")).length, 8);
    });

    test("a delink the broker repeats after a restart is not recorded again", async () => {
      const before = await eventsOf();
      service = await service.restart();
      await settleAutotrade(service);
      assert.deepEqual(await eventsOf(), before);
    });

    test("the site's customers' fills are its executions", async () => {
      // The hand quotes went with the restart.
      await setQuote(service, "AAPL", 200, 200.1);
      const fresh = await autotrades(customer);
      await settleAutotrade(service);
      await advanceClock(service, 60);
      const order = await placed(service, p.keys.personA, stockOrder(strategy, "AAPL", "buy", 100));
      await settleAutotrade(service);
      const { Executions } = await exported("2026-03-10T14:02:00Z", "2026-03-11T00:00:00Z");
      const fill = await service.storage.db
        .selectFrom("account_fills as f")
        .innerJoin("broker_accounts as b", "b.account_id", "f.account_id")
        .select(["f.id", "f.broker_fill_id"])
        .where("b.account_number", "=", fresh)
        .executeTakeFirstOrThrow();
      assert.deepEqual(Executions, [
        {
          ExecutionId: fill.id,
          PersonId: customer,
          Account: fresh,
          BrokerId: SIMULATED_BROKER,
          StrategyId: strategy,
          SignalId: order.SignalId,
          OrderPurpose: "copy",
          Symbol: "AAPL",
          SymbolType: "stock",
          Side: "buy",
          Quantity: 50,
          Price: 200.1,
          BrokerExecutionId: fill.broker_fill_id,
          ExecutionDate: "2026-03-10T14:02:00.000Z",
        },
      ]);
      // Site B's customer's account was delinked: site A's export shows none of site B's anyway.
      assert.deepEqual((await exported("2026-03-10T14:03:00Z", "2026-03-11T00:00:00Z")).Executions, []);
    });
  });
}
