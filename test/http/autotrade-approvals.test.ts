import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  accountArrives,
  answerOnPage,
  approvalEvents,
  approvalStatus,
  type Follower,
  follower,
  openPage,
  requested,
  setupsOf,
  siteEndpoint,
  startBody,
} from "../helpers/approvals.js";
import {
  advanceClock,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * The white-label approval request's transitions through HTTP
 * (docs/decisions.md "White-label autotrade approvals (issue 13)"): created
 * PendingCustomer, approved on its page to Completed, or PendingBroker until
 * the account arrives or the wait runs out; declined, expired, superseded,
 * failed by a refusal of the start; each final status owing the site its
 * completion webhook once.
 */
/** A Monday. */
const NOW = "2027-04-05T10:00:00.000Z";
const DAY = 86_400;

for (const backend of BACKENDS) {
  describe(`white-label autotrade approval requests (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let endpoint: number;
    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await setClock(service, NOW);
      endpoint = await siteEndpoint(service, p);
    });
    after(() => service.close());

    const now = () => new Date(service.app.runtime.clock.nowMs()).toISOString();

    test("StartAutotrade makes a PendingCustomer request with its page for 7 days; nothing starts", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f));
      assert.equal(made.Status, "PendingCustomer");
      assert.match(made.ApprovalUrl, /^\/Approvals\/[A-Za-z0-9_-]{43}$/);
      assert.equal(made.ExpiresAt, new Date(Date.parse(now()) + 7 * DAY * 1000).toISOString());
      assert.equal(made.PersonId, f.personId);
      assert.equal(made.StrategyId, f.strategyId);
      assert.equal(made.Account, f.account);
      assert.equal(made.BrokerId, 1);
      assert.equal(made.WhiteLabelSiteId, p.siteA);
      assert.equal(made.SetupId, null);
      assert.deepEqual(await approvalStatus(service, p, made.ApprovalRequestId), made);
      assert.deepEqual(await setupsOf(service, f), []);
      assert.deepEqual(await approvalEvents(service, endpoint, made.ApprovalRequestId), []);
    });

    test("approved on the page with the account at the service: Completed, the setup on with the request's settings", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(
        service,
        p,
        startBody(f, { AutoStopLossDollars: 1500, DoNotJoinOpenPositions: true }),
      );
      await answerOnPage(service, made.ApprovalUrl, "approve");
      const done = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(done.Status, "Completed", JSON.stringify(done));
      assert.equal(done.ApprovalUrl, null);
      assert.equal(done.ExpiresAt, null);
      const [setup] = await setupsOf(service, f);
      assert.ok(setup);
      assert.equal(done.SetupId, setup.id);
      assert.equal(setup.site_id, p.siteA);
      assert.equal(setup.status, "active");
      assert.equal(setup.scaling_percentage, "50");
      assert.equal(setup.do_not_join_open_positions, 1);
      const settings = JSON.parse(setup.settings);
      assert.equal(settings.stocks.enabled, true);
      assert.equal(settings.stocks.maxDollars, 25_000);
      assert.equal(settings.futures.enabled, false);
      assert.equal(settings.autoStopLossDollars, 1500);
      assert.deepEqual(await approvalEvents(service, endpoint, made.ApprovalRequestId), [
        {
          id: `autotrade_approval.${made.ApprovalRequestId}.Completed`,
          type: "autotrade.approval.completed",
          data: {
            ApprovalRequestId: made.ApprovalRequestId,
            Status: "Completed",
            StatusDetail: "Trading is on",
            PersonId: f.personId,
            StrategyId: f.strategyId,
            BrokerId: 1,
            Account: f.account,
            SetupId: setup.id,
          },
        },
      ]);
      // The page no longer offers anything but says so.
      const page = await openPage(service, made.ApprovalUrl);
      assert.match(page.text, /data-status="Completed"/);
      assert.doesNotMatch(page.text, /form_token/);
    });

    test("approved before the account reaches the service: PendingBroker, then Completed once it does", async () => {
      const f = await follower(service, p);
      const made = await requested(service, p, startBody(f));
      await answerOnPage(service, made.ApprovalUrl, "approve");
      const waiting = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(waiting.Status, "PendingBroker");
      assert.equal(waiting.ApprovalUrl, null);
      // Ten business days: two weeks from a Monday.
      assert.equal(waiting.ExpiresAt, new Date(Date.parse(now()) + 14 * DAY * 1000).toISOString());
      await advanceClock(service, 3 * DAY);
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "PendingBroker");
      await accountArrives(service, f);
      await advanceClock(service, 60);
      const done = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(done.Status, "Completed");
      const [setup] = await setupsOf(service, f);
      assert.equal(done.SetupId, setup?.id);
      assert.deepEqual(
        (await approvalEvents(service, endpoint, made.ApprovalRequestId)).map((e) => e.id),
        [`autotrade_approval.${made.ApprovalRequestId}.Completed`],
      );
    });

    test("PendingBroker past ten business days: Failed, saying why", async () => {
      const f = await follower(service, p);
      const made = await requested(service, p, startBody(f));
      await answerOnPage(service, made.ApprovalUrl, "approve");
      await advanceClock(service, 14 * DAY - 60);
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "PendingBroker");
      await advanceClock(service, 60);
      const failed = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(failed.Status, "Failed");
      assert.match(failed.StatusDetail, /did not reach the service within 10 business days/);
      // The account arriving later changes nothing.
      await accountArrives(service, f);
      await advanceClock(service, 60);
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "Failed");
      assert.deepEqual(await setupsOf(service, f), []);
      assert.deepEqual(
        (await approvalEvents(service, endpoint, made.ApprovalRequestId)).map((e) => e.type),
        ["autotrade.approval.failed"],
      );
    });

    test("declined on the page: Failed, nothing started", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f));
      await answerOnPage(service, made.ApprovalUrl, "decline");
      const declined = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(declined.Status, "Failed");
      assert.equal(declined.StatusDetail, "The customer declined the setup");
      assert.equal(declined.ApprovalUrl, null);
      assert.deepEqual(await setupsOf(service, f), []);
      assert.deepEqual(
        (await approvalEvents(service, endpoint, made.ApprovalRequestId)).map((e) => e.type),
        ["autotrade.approval.failed"],
      );
    });

    test("not approved within 7 days: Expired by the scheduler; its page opens nothing to approve", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f));
      await advanceClock(service, 7 * DAY - 1);
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "PendingCustomer");
      await advanceClock(service, 1);
      const expired = await service.storage.db
        .selectFrom("autotrade_approvals")
        .select("status")
        .where("id", "=", made.ApprovalRequestId)
        .executeTakeFirstOrThrow();
      assert.equal(expired.status, "Expired");
      const read = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(read.Status, "Expired");
      assert.equal(read.ApprovalUrl, null);
      const page = await openPage(service, made.ApprovalUrl);
      assert.match(page.text, /data-status="Expired"/);
      assert.doesNotMatch(page.text, /id="approve"/);
      assert.deepEqual(
        (await approvalEvents(service, endpoint, made.ApprovalRequestId)).map((e) => e.type),
        ["autotrade.approval.expired"],
      );
    });

    test("a newer start supersedes the pending request; the old page can no longer approve", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const first = await requested(service, p, startBody(f));
      const second = await requested(service, p, startBody(f, { ScalingPercentage: 80 }));
      const old = await approvalStatus(service, p, first.ApprovalRequestId);
      assert.equal(old.Status, "Superseded");
      assert.equal(old.SupersededBy, second.ApprovalRequestId);
      assert.equal(old.ApprovalUrl, null);
      assert.equal((await approvalStatus(service, p, second.ApprovalRequestId)).Status, "PendingCustomer");
      const page = await openPage(service, first.ApprovalUrl);
      assert.match(page.text, /data-status="Superseded"/);
      assert.doesNotMatch(page.text, /id="approve"/);
      assert.deepEqual(
        (await approvalEvents(service, endpoint, first.ApprovalRequestId)).map((e) => e.type),
        ["autotrade.approval.superseded"],
      );
      // Another account's or strategy's request is not this setup's.
      const other = await follower(service, p);
      await requested(service, p, startBody(other));
      assert.equal((await approvalStatus(service, p, second.ApprovalRequestId)).Status, "PendingCustomer");
    });

    test("WhiteLabelStartAutotrade on the live setup: the modification waits for fresh approval, then applies", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const first = await requested(service, p, startBody(f));
      await answerOnPage(service, first.ApprovalUrl, "approve");
      const started = await approvalStatus(service, p, first.ApprovalRequestId);
      assert.equal(started.Status, "Completed");

      const modify = await requested(
        service,
        p,
        startBody(f, { ScalingPercentage: "200", EnableFutures: true, MaxFuturesContracts: 3 }),
        "/Autotrade/WhiteLabelStartAutotrade",
      );
      assert.equal(modify.Status, "PendingCustomer");
      assert.equal((await setupsOf(service, f))[0]?.scaling_percentage, "50");
      // The completed request is final: a newer one does not supersede it.
      assert.equal((await approvalStatus(service, p, first.ApprovalRequestId)).Status, "Completed");
      await answerOnPage(service, modify.ApprovalUrl, "approve");
      const modified = await approvalStatus(service, p, modify.ApprovalRequestId);
      assert.equal(modified.Status, "Completed");
      assert.equal(modified.SetupId, started.SetupId);
      const setups = await setupsOf(service, f);
      assert.equal(setups.length, 1);
      assert.equal(setups[0]?.scaling_percentage, "200");
      assert.equal(JSON.parse(setups[0]?.settings ?? "{}").futures.max, 3);
    });

    test("the start refused once approved (the broker delinked the account): Failed with the refusal's reason", async () => {
      const f = await follower(service, p);
      const accountId = await accountArrives(service, f);
      await service.storage.db
        .updateTable("broker_accounts")
        .set({ is_linked: 0 })
        .where("account_id", "=", accountId)
        .execute();
      const made = await requested(service, p, startBody(f));
      await answerOnPage(service, made.ApprovalUrl, "approve");
      const failed = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(failed.Status, "Failed");
      assert.match(failed.StatusDetail, /delinked/);
      assert.deepEqual(await setupsOf(service, f), []);
    });

    test("more requests past their deadline than a pass's batch of 500: one pass expires them all, each owing its webhook once", async () => {
      const f = await follower(service, p);
      const made = await requested(service, p, startBody(f));
      const original = await service.storage.db
        .selectFrom("autotrade_approvals")
        .selectAll()
        .where("id", "=", made.ApprovalRequestId)
        .executeTakeFirstOrThrow();
      const { id: _id, ...row } = original;
      // Copies of the request as other customers' requests would stand, 500 to a statement.
      for (let chunk = 0; chunk < 2; chunk++) {
        await service.storage.db
          .insertInto("autotrade_approvals")
          .values(
            Array.from({ length: 500 }, (_, i) => ({
              ...row,
              nonce: `${row.nonce}-${chunk}-${i}`,
              token_hash: `${row.token_hash}-${chunk}-${i}`,
            })),
          )
          .execute();
      }
      const pending = () =>
        service.storage.db
          .selectFrom("autotrade_approvals")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("status", "=", "PendingCustomer")
          .where("id", ">=", original.id)
          .executeTakeFirstOrThrow();
      assert.equal(Number((await pending()).n), 1_001);
      await advanceClock(service, 7 * DAY);
      assert.equal(Number((await pending()).n), 0);
      const owed = await service.storage.db
        .selectFrom("webhook_deliveries")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("endpoint_id", "=", endpoint)
        .where("event_type", "=", "autotrade.approval.expired")
        .executeTakeFirstOrThrow();
      assert.ok(Number(owed.n) >= 1_001, `${owed.n} expiry webhooks owed`);
      assert.deepEqual(
        (await approvalEvents(service, endpoint, made.ApprovalRequestId)).map((e) => e.type),
        ["autotrade.approval.expired"],
      );
    });

    test("the subscription lapsed before approval: Failed, nothing started", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f));
      await service.storage.db
        .updateTable("subscriptions")
        .set({ ended_at: service.app.runtime.clock.nowMs() })
        .where("person_id", "=", f.personId)
        .execute();
      await answerOnPage(service, made.ApprovalUrl, "approve");
      const failed = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(failed.Status, "Failed");
      assert.match(failed.StatusDetail, /does not follow/);
    });

    test("left Processing (its process stopped after the approval committed): the scheduler switches it on", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f));
      await service.storage.db
        .updateTable("autotrade_approvals")
        .set({ status: "Processing" })
        .where("id", "=", made.ApprovalRequestId)
        .execute();
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "Processing");
      await advanceClock(service, 0);
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "Completed");
      assert.equal((await setupsOf(service, f)).length, 1);
    });

    test("two processes passing over the same waiting requests start each setup once and owe each webhook once", async () => {
      const sibling = await service.sibling();
      try {
        const waiting: { f: Follower; id: number }[] = [];
        for (let i = 0; i < 4; i++) {
          const f = await follower(service, p);
          const made = await requested(service, p, startBody(f));
          await answerOnPage(service, made.ApprovalUrl, "approve");
          await accountArrives(service, f);
          waiting.push({ f, id: made.ApprovalRequestId });
        }
        const passes = [service.app.approvals, sibling.app.approvals, service.app.approvals];
        // SQLite's driver is synchronous: two connections of one test process cannot wait on each other's lock.
        if (backend === "postgres") await Promise.all(passes.map((scheduler) => scheduler.run()));
        else for (const scheduler of passes) await scheduler.run();
        for (const { f, id } of waiting) {
          assert.equal((await approvalStatus(service, p, id)).Status, "Completed");
          assert.equal((await setupsOf(service, f)).length, 1);
          assert.equal((await approvalEvents(service, endpoint, id)).length, 1);
        }
      } finally {
        await sibling.close();
      }
    });
  });
}
