import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type BrowserContext, chromium } from "playwright-core";
import { accountArrives, approvalStatus, follower, requested, setupsOf, startBody } from "../helpers/approvals.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";

/**
 * The autotrade approval page in headless Chromium, clicked as a customer
 * would. CI installs Chromium from Debian packages (.ci/run); a developer
 * machine without it skips these tests and says so.
 */
const CHROMIUM = "/usr/bin/chromium";
const skip = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is absent: install the Debian package chromium to run this test`;
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

for (const backend of BACKENDS) {
  describe(`the autotrade approval page in Chromium (${backend})`, { skip }, () => {
    let service: TestService;
    let p: Population;
    let base = "";
    let browser: BrowserContext;
    let profile = "";

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await service.app.servers.WL.listen({ host: "127.0.0.1", port: 0 });
      const address = service.app.servers.WL.server.address();
      assert.ok(address && typeof address === "object");
      base = `http://127.0.0.1:${address.port}`;
      profile = mkdtempSync(join(tmpdir(), "approval-chromium-"));
      browser = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: FLAGS,
      });
    });
    after(async () => {
      await browser?.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
      await service?.close();
    });

    test("approve: review the setup, tick consent, approve; trading is on", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f, { EnableOptions: true, MaxOptionsContracts: 2 }));
      const page = await browser.newPage();
      await page.goto(`${base}${made.ApprovalUrl}`);
      assert.equal(await page.textContent("#account"), f.account);
      assert.equal(await page.textContent("#broker"), "Simulated Broker");
      assert.equal(await page.textContent("#site"), "Site A");
      assert.equal(await page.textContent("#options"), "On, no shorting, at most 2 contracts per position");
      // Without consent the browser does not send the form.
      await page.click("#approve");
      assert.equal(await page.getAttribute("#status", "data-status"), "PendingCustomer");
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "PendingCustomer");

      await page.check("#consent");
      await Promise.all([page.waitForURL(`${base}${made.ApprovalUrl}`), page.click("#approve")]);
      await page.waitForSelector('#status[data-status="Completed"]');
      const done = await approvalStatus(service, p, made.ApprovalRequestId);
      assert.equal(done.Status, "Completed");
      assert.equal(await page.textContent("#setup"), String(done.SetupId));
      assert.equal((await setupsOf(service, f)).length, 1);
      await page.close();
    });

    test("decline: the decline button fails the request, nothing starts", async () => {
      const f = await follower(service, p);
      await accountArrives(service, f);
      const made = await requested(service, p, startBody(f));
      const page = await browser.newPage();
      await page.goto(`${base}${made.ApprovalUrl}`);
      await page.click("#decline");
      await page.waitForSelector('#status[data-status="Failed"]');
      assert.equal(await page.locator("#approve").count(), 0);
      assert.equal((await approvalStatus(service, p, made.ApprovalRequestId)).Status, "Failed");
      assert.deepEqual(await setupsOf(service, f), []);
      await page.close();
    });
  });
}
