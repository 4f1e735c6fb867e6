import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { autotrading, brokerAccount, SIMULATED_BROKER, stopAutotrade } from "../helpers/autotrade.js";
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

/** StopAutotrade on the three servers: a stop requested at once, applied later, safe to repeat. */

for (const backend of BACKENDS) {
  describe(`stopping autotrade (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let strategy = 0;

    const setupOf = (account: string) =>
      service.storage.db
        .selectFrom("autotrade_setups as s")
        .innerJoin("broker_accounts as b", "b.account_id", "s.account_id")
        .selectAll("s")
        .where("b.account_number", "=", account)
        .executeTakeFirstOrThrow();
    const settingsOf = async (personId: number, account: string) => {
      const r = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSettings", {
        query: { PersonId: String(personId), Account: account },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results;
    };
    const noticesOf = (personId: number) =>
      service.storage.db.selectFrom("customer_notices").selectAll().where("person_id", "=", personId).execute();
    const pendingApproval = async (personId: number, account: string) => {
      const made = await service.storage.db
        .insertInto("autotrade_approvals")
        .values({
          site_id: p.siteA,
          person_id: personId,
          strategy_id: strategy,
          broker_id: SIMULATED_BROKER,
          account_number: account,
          request: "{}",
          status: "PendingCustomer",
          status_detail: null,
          nonce: `nonce-${account}`,
          token_hash: `hash-${account}`,
          setup_id: null,
          superseded_by: null,
          created_at: 0,
          updated_at: 0,
          expires_at: Number.MAX_SAFE_INTEGER,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      return made.id;
    };
    const approvalStatus = async (id: number) =>
      (
        await service.storage.db
          .selectFrom("autotrade_approvals")
          .select("status")
          .where("id", "=", id)
          .executeTakeFirstOrThrow()
      ).status;

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      strategy = await newStrategy(service, ADMIN_KEY, p.people.admin);
    });
    after(() => service.close());

    test("GEN: a stop is requested at once, shown as Stop requested, and safe to repeat", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await autotrading(service, person, strategy);
      const stop = { Account: account, PersonId: person, StrategyId: strategy, BrokerId: SIMULATED_BROKER };
      const r = await stopAutotrade(service, ADMIN_KEY, {
        ...stop,
        LeavePositionsOpen: true,
        TerminateStrategySubscription: true,
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.text, "true");
      const [settings] = await settingsOf(person, account);
      assert.equal(settings.IsAutotradeDisabled, true);
      assert.equal(settings.IsAutotradeDisabledReason, "Stop requested");
      const requested = await setupOf(account);
      assert.equal(requested.status, "stop_requested");
      assert.equal(requested.stop_leave_positions_open, 1);
      assert.equal(requested.stop_terminate_subscription, 1);
      const again = await stopAutotrade(service, ADMIN_KEY, { ...stop, LeavePositionsOpen: false });
      assert.equal(again.text, "true");
      assert.equal((await setupOf(account)).stop_leave_positions_open, 1, "the first request's options stand");
      // Once the copier has applied it, a stop still answers true.
      await service.storage.db
        .updateTable("autotrade_setups")
        .set({ status: "stopped", live_key: null })
        .where("id", "=", requested.id)
        .execute();
      assert.equal((await stopAutotrade(service, ADMIN_KEY, stop)).text, "true");
      assert.deepEqual(await noticesOf(person), [], "GEN notifies no one");
    });

    test("defaults: positions closed and the subscription kept; GEO needs no BrokerId, GEN does", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await autotrading(service, person, strategy);
      const stop = { Account: account, PersonId: person, StrategyId: strategy };
      assertRefused(await stopAutotrade(service, ADMIN_KEY, stop, "GEN"), 400, "BrokerId", "1102");
      const r = await stopAutotrade(service, ADMIN_KEY, stop, "GEO");
      assert.equal(r.status, 200, r.text);
      const requested = await setupOf(account);
      assert.equal(requested.stop_leave_positions_open, 0);
      assert.equal(requested.stop_terminate_subscription, 0);
    });

    test("refusals name the field and change nothing", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await autotrading(service, person, strategy);
      const stop = { Account: account, PersonId: person, StrategyId: strategy, BrokerId: SIMULATED_BROKER };
      const other = await newStrategy(service, ADMIN_KEY, p.people.admin);
      for (const server of ["WL", "GEN", "GEO"] as const) {
        assertRefused(
          await stopAutotrade(service, ADMIN_KEY, { ...stop, StrategyId: other }, server),
          404,
          "StrategyId",
        );
        assertRefused(
          await stopAutotrade(service, ADMIN_KEY, { ...stop, LeavePositionsOpen: "maybe" }, server),
          400,
          "LeavePositionsOpen",
        );
        assertRefused(await stopAutotrade(service, ADMIN_KEY, { ...stop, BrokerId: 2 ** 31 }, server), 400, "BrokerId");
        assertRefused(await stopAutotrade(service, p.keys.personB, stop, server), 403, "PersonId");
        assertRefused(await stopAutotrade(service, p.keys.wlAdminB, stop, server), 403, "PersonId");
        const { Account: _, ...noAccount } = stop;
        assertRefused(await stopAutotrade(service, ADMIN_KEY, noAccount, server), 400, "Account", "1102");
      }
      assert.equal((await setupOf(account)).status, "active");
    });

    test("the person and their administrators may stop", async () => {
      for (const key of [p.keys.personA, p.keys.wlAdminA, p.keys.geoAdmin]) {
        const account = await autotrading(service, p.people.personA, strategy);
        const r = await stopAutotrade(service, key, {
          Account: account,
          PersonId: p.people.personA,
          StrategyId: strategy,
          BrokerId: SIMULATED_BROKER,
        });
        assert.equal(r.status, 200, r.text);
        assert.equal((await setupOf(account)).status, "stop_requested");
      }
    });

    test("WL: positions always left open, pending approvals retired, the customer notified once", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await autotrading(service, person, strategy);
      const approval = await pendingApproval(person, account);
      const stop = { Account: account, PersonId: person, StrategyId: strategy, LeavePositionsOpen: false };
      const r = await stopAutotrade(service, p.keys.wlAdminA, stop, "WL");
      assert.equal(r.status, 200, r.text);
      assert.equal(r.text, "true");
      const requested = await setupOf(account);
      assert.equal(requested.status, "stop_requested");
      assert.equal(requested.stop_leave_positions_open, 1, "WL leaves positions open whatever was asked");
      assert.equal(await approvalStatus(approval), "Superseded");
      const notices = await noticesOf(person);
      assert.equal(notices.length, 1);
      assert.equal(notices[0]?.kind, "autotrade_stopped");
      assert.equal(notices[0]?.site_id, p.siteA);
      assert.equal((await stopAutotrade(service, p.keys.wlAdminA, stop, "WL")).text, "true");
      assert.equal((await noticesOf(person)).length, 1, "a repeat notifies no one again");
    });

    test("WL: a customer with only a pending approval is stopped too; with neither ever, 404", async () => {
      const person = await newCustomer(service, p.siteA);
      const account = await brokerAccount(service, person);
      const approval = await pendingApproval(person, account);
      const stop = { Account: account, PersonId: person, StrategyId: strategy };
      const r = await stopAutotrade(service, p.keys.wlAdminA, stop, "WL");
      assert.equal(r.status, 200, r.text);
      assert.equal(await approvalStatus(approval), "Superseded");
      assert.equal((await noticesOf(person)).length, 1);
      assert.equal((await stopAutotrade(service, p.keys.wlAdminA, stop, "WL")).text, "true", "a repeat is safe");
      assert.equal((await noticesOf(person)).length, 1);
      const untouched = await brokerAccount(service, person);
      assertRefused(
        await stopAutotrade(service, p.keys.wlAdminA, { ...stop, Account: untouched }, "WL"),
        404,
        "StrategyId",
      );
    });
  });
}
