import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  accountArrives,
  answerOnPage,
  approvalStatus,
  follower,
  formTokenOf,
  openPage,
  requested,
  requestStart,
  setupsOf,
  startBody,
  submitForm,
} from "../helpers/approvals.js";
import { newCustomer } from "../helpers/commerce.js";
import { assertRefused } from "../helpers/refusals.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";

/**
 * What the approval flow refuses, and that a refusal writes nothing: the
 * operations' sites, customers, strategies, brokers, accounts and fields;
 * the page's unknown tokens, stale forms and missing consent.
 */
for (const backend of BACKENDS) {
  describe(`white-label autotrade approval refusals (${backend})`, () => {
    let service: TestService;
    let p: Population;
    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
    });
    after(() => service.close());

    const requestCount = async () =>
      Number(
        (
          await service.storage.db
            .selectFrom("autotrade_approvals")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );

    test("the request's body: each bad field refused naming it, nothing written", async () => {
      const f = await follower(service, p);
      const before = await requestCount();
      const cases: [Record<string, unknown>, string, string][] = [
        [{ Account: undefined }, "Account", "1102"],
        [{ Account: "" }, "Account", "1101"],
        [{ PersonId: undefined }, "PersonId", "1102"],
        [{ StrategyId: "x" }, "StrategyId", "1101"],
        [{ BrokerId: 0 }, "BrokerId", "1101"],
        [{ BrokerId: 2_147_483_648 }, "BrokerId", "1101"],
        [{ ScalingPercentage: undefined }, "ScalingPercentage", "1102"],
        [{ ScalingPercentage: 0 }, "ScalingPercentage", "1101"],
        [{ ScalingPercentage: -5 }, "ScalingPercentage", "1101"],
        [{ ScalingPercentage: 1000.01 }, "ScalingPercentage", "1101"],
        [{ ScalingPercentage: "lots" }, "ScalingPercentage", "1101"],
        [{ MaxStocksDollars: -1 }, "MaxStocksDollars", "1101"],
        [{ MaxStocksDollars: 10.5 }, "MaxStocksDollars", "1101"],
        [{ MaxFuturesContracts: -1 }, "MaxFuturesContracts", "1101"],
        [{ AutoStopLossDollars: -1 }, "AutoStopLossDollars", "1101"],
        [{ EnableFutures: "maybe" }, "EnableFutures", "1101"],
        [{ BrokerUsername: "u".repeat(129) }, "BrokerUsername", "1101"],
        [{ AutoStopLossDollars: 0 }, "AutoStopLossDollars", "1101"],
      ];
      for (const [change, field, code] of cases) {
        const r = await requestStart(service, p, startBody(f, change));
        assertRefused(r, 400, field, code);
      }
      assert.equal(await requestCount(), before);
    });

    test("numbers and booleans as text, and names in any case, are read as the wire allows", async () => {
      const f = await follower(service, p);
      const made = await requested(service, p, {
        account: f.account,
        personid: String(f.personId),
        StrategyId: String(f.strategyId),
        BrokerId: "1",
        ScalingPercentage: "12.5",
        EnableStocks: "true",
      });
      assert.equal(made.Status, "PendingCustomer");
      const stored = await service.storage.db
        .selectFrom("autotrade_approvals")
        .select("request")
        .where("id", "=", made.ApprovalRequestId)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(stored.request).ScalingPercentage, "12.5");
    });

    test("customers, strategies, brokers and accounts the request cannot name", async () => {
      const f = await follower(service, p);
      const before = await requestCount();
      // A customer of another site, or no one, is no one to site A.
      const ofB = await newCustomer(service, p.siteB);
      assertRefused(await requestStart(service, p, startBody(f, { PersonId: ofB })), 404, "PersonId", "2013");
      assertRefused(await requestStart(service, p, startBody(f, { PersonId: 9_999_999 })), 404, "PersonId", "2013");
      assertRefused(await requestStart(service, p, startBody(f, { StrategyId: 9_999_999 })), 404, "StrategyId", "2013");
      // A strategy the customer neither follows nor owns.
      const stranger = await follower(service, p);
      assertRefused(
        await requestStart(service, p, startBody(f, { StrategyId: stranger.strategyId })),
        409,
        "StrategyId",
        "1202",
      );
      assertRefused(await requestStart(service, p, startBody(f, { BrokerId: 77 })), 404, "BrokerId", "2013");
      // An account of someone else at that broker.
      await accountArrives(service, stranger);
      assertRefused(
        await requestStart(service, p, startBody(f, { Account: stranger.account })),
        404,
        "Account",
        "2013",
      );
      assert.equal(await requestCount(), before);
    });

    test("DoNotJoinOpenPositions on a modification of the live setup is refused", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f));
      await answerOnPage(service, made.ApprovalUrl, "approve");
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "Completed");
      const r = await requestStart(
        service,
        p,
        startBody(f, { DoNotJoinOpenPositions: true }),
        "/Autotrade/WhiteLabelStartAutotrade",
      );
      assertRefused(r, 400, "DoNotJoinOpenPositions", "1101");
    });

    test("sites: another site's administrator, a service admin without a site, a customer's own key", async () => {
      const f = await follower(service, p);
      const body = startBody(f);
      assertRefused(
        await service.call("WL", "POST", "/Autotrade/StartAutotrade", { key: p.keys.wlAdminB, body }),
        404,
        "PersonId",
      );
      assertRefused(
        await service.call("WL", "POST", "/Autotrade/StartAutotrade", {
          key: p.keys.wlAdminB,
          body: { ...body, WhiteLabelSiteId: p.siteA },
        }),
        403,
        "WhiteLabelSiteId",
      );
      assertRefused(
        await service.call("WL", "POST", "/Autotrade/StartAutotrade", { body }),
        400,
        "WhiteLabelSiteId",
        "1102",
      );
      assertRefused(await service.call("WL", "POST", "/Autotrade/StartAutotrade", { key: p.keys.personA, body }), 403);
      const admin = await service.call("WL", "POST", "/Autotrade/StartAutotrade", {
        body: { ...body, WhiteLabelSiteId: p.siteA },
      });
      assert.equal(admin.status, 200, admin.text);
      const id = admin.json.Results[0].ApprovalRequestId as number;
      const read = (key: string | undefined, query: Record<string, string>) =>
        service.call("WL", "GET", "/Autotrade/GetAutotradeApprovalStatus", { ...(key ? { key } : {}), query });
      assertRefused(await read(p.keys.wlAdminB, { ApprovalRequestId: String(id) }), 404, "ApprovalRequestId", "2013");
      assertRefused(await read(p.keys.wlAdminA, { ApprovalRequestId: "9999999" }), 404, "ApprovalRequestId", "2013");
      assertRefused(await read(p.keys.wlAdminA, {}), 400, "ApprovalRequestId", "1102");
      assertRefused(await read(p.keys.personA, { ApprovalRequestId: String(id) }), 403);
      const byAdmin = await read(undefined, { ApprovalRequestId: String(id), WhiteLabelSiteId: String(p.siteA) });
      assert.equal(byAdmin.status, 200, byAdmin.text);
      assert.equal(byAdmin.json.Results[0].Status, "PendingCustomer");
    });

    test("the operations are on the white-label server only", async () => {
      for (const server of ["GEN", "GEO"] as const) {
        for (const path of ["/Autotrade/WhiteLabelStartAutotrade", "/Autotrade/GetAutotradeApprovalStatus"]) {
          const r = await service.call(server, path.includes("Get") ? "GET" : "POST", path, { body: {} });
          assert.equal(r.status, 404, `${server} ${path}: ${r.text}`);
        }
        const page = await service.call(server, "GET", `/Approvals/${"a".repeat(43)}`, { key: null });
        assert.equal(page.status, 404);
      }
    });

    test("the page: unknown tokens open nothing; a stale form is refused; approval needs consent", async () => {
      for (const token of ["a".repeat(43), "short", "%3Cscript%3E"]) {
        const r = await openPage(service, `/Approvals/${token}`);
        assert.equal(r.status, 404);
        assert.match(String(r.headers["content-type"]), /text\/html/);
      }
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f));
      const page = await openPage(service, made.ApprovalUrl);
      assert.equal(page.status, 200);
      assert.equal(page.headers["referrer-policy"], "no-referrer");
      assert.equal(page.headers["cache-control"], "no-store");
      assert.equal(page.headers["x-frame-options"], "DENY");
      assert.match(page.text, /id="scaling">50%/);
      assert.match(page.text, /id="stocks">On, at most \$25000 per position/);
      assert.match(page.text, /id="futures">Off/);

      // A form posted from elsewhere (no or another token): 403, nothing happens.
      for (const token of ["", "x".repeat(43)]) {
        const r = await submitForm(service, made.ApprovalUrl, "approve", { form_token: token, consent: "yes" });
        assert.equal(r.status, 403, r.text);
        const d = await submitForm(service, made.ApprovalUrl, "decline", { form_token: token });
        assert.equal(d.status, 403, d.text);
      }
      // Without the consent box: 400 on the page, still pending.
      const r = await submitForm(service, made.ApprovalUrl, "approve", { form_token: formTokenOf(page.text) });
      assert.equal(r.status, 400);
      assert.match(r.text, /Tick the consent box/);
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "PendingCustomer");
      assert.deepEqual(await setupsOf(service, f), []);

      // Approving twice (a double click) starts one setup; declining afterwards changes nothing.
      const form = { form_token: formTokenOf(page.text), consent: "yes" };
      const [one, two] = await Promise.all([
        submitForm(service, made.ApprovalUrl, "approve", form),
        submitForm(service, made.ApprovalUrl, "approve", form),
      ]);
      assert.deepEqual([one.status, two.status], [303, 303]);
      const late = await submitForm(service, made.ApprovalUrl, "decline", form);
      assert.equal(late.status, 303);
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "Completed");
      assert.equal((await setupsOf(service, f)).length, 1);
    });
  });
}
