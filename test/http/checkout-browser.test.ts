import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type BrowserContext, chromium } from "playwright-core";
import { pricedStrategy } from "../helpers/checkout.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";

/**
 * The checkout page in headless Chromium, clicked as a customer would. CI
 * installs Chromium from Debian packages (.ci/run); a developer machine
 * without it skips these tests and says so.
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
  describe(`the checkout page in Chromium (${backend})`, { skip }, () => {
    let service: TestService;
    let p: Population;
    let base = "";
    let browser: BrowserContext;
    let profile = "";
    let skewMs = 0;
    let strategies = 0;

    before(async () => {
      service = await startTestService(backend, { systemNow: () => Date.now() + skewMs });
      p = await populate(service);
      await service.app.servers.GEN.listen({ host: "127.0.0.1", port: 0 });
      const address = service.app.servers.GEN.server.address();
      assert.ok(address && typeof address === "object");
      base = `http://127.0.0.1:${address.port}`;
      profile = mkdtempSync(join(tmpdir(), "checkout-chromium-"));
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

    /** A fresh priced strategy and person B's checkout of it, with the provider answering `outcome`. */
    async function checkout(outcome: string) {
      strategies += 1;
      const strategyId = await pricedStrategy(service, p, `Browser Pick ${strategies}`);
      const set = await service.call("GEN", "POST", "/Sandbox/SetPaymentOutcome", { body: { Outcome: outcome } });
      assert.equal(set.status, 200, set.text);
      const r = await service.call("GEN", "POST", "/General/CreateSubscriptionCheckout", {
        key: p.keys.personB,
        body: { StrategyId: strategyId },
      });
      assert.equal(r.status, 200, r.text);
      return { strategyId, ...(r.json.Results[0] as { IntentId: number; ApprovalUrl: string }) };
    }
    const status = async (intentId: number) => {
      skewMs += 3_000;
      const r = await service.call("GEN", "GET", "/General/GetSubscriptionCheckoutStatus", {
        key: p.keys.personB,
        query: { IntentId: String(intentId) },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0];
    };
    const chargesOf = (strategyId: number) =>
      service.storage.db
        .selectFrom("ledger_transactions")
        .innerJoin("subscriptions", "subscriptions.id", "ledger_transactions.subscription_id")
        .select("ledger_transactions.reference")
        .where("subscriptions.strategy_id", "=", strategyId)
        .execute();

    test("approve: review, tick consent, pay; the subscription is active", async () => {
      const { strategyId, IntentId, ApprovalUrl } = await checkout("approve");
      const page = await browser.newPage();
      await page.goto(`${base}${ApprovalUrl}`);
      assert.equal(await page.textContent("#strategy"), `Browser Pick ${strategies}`);
      assert.equal(await page.textContent("#price"), "$49.50 USD every month");
      // Without consent the browser does not send the form.
      await page.click("#pay");
      assert.equal(await page.getAttribute("#status", "data-status"), "PendingCustomer");
      assert.equal((await status(IntentId)).Status, "PendingCustomer");

      await page.check("#consent");
      await Promise.all([page.waitForURL(`${base}${ApprovalUrl}`), page.click("#pay")]);
      await page.waitForSelector('#status[data-status="Active"]');
      const active = await status(IntentId);
      assert.equal(active.Status, "Active");
      assert.equal(await page.textContent("#subscription"), String(active.SubscriptionId));
      assert.deepEqual(await chargesOf(strategyId), [{ reference: `charge:${active.SubscriptionId}:1` }]);
      await page.close();
    });

    test("decline: the decline button cancels, nothing is charged", async () => {
      const { strategyId, IntentId, ApprovalUrl } = await checkout("approve");
      const page = await browser.newPage();
      await page.goto(`${base}${ApprovalUrl}`);
      await page.click("#decline");
      await page.waitForSelector('#status[data-status="Canceled"]');
      assert.equal(await page.locator("#pay").count(), 0);
      const canceled = await status(IntentId);
      assert.equal(canceled.Status, "Canceled");
      assert.equal(canceled.SubscriptionId, null);
      assert.deepEqual(await chargesOf(strategyId), []);
      await page.close();
    });

    test("require action: pay, then the further step's confirm button, then active", async () => {
      const { strategyId, IntentId, ApprovalUrl } = await checkout("require_action");
      const page = await browser.newPage();
      await page.goto(`${base}${ApprovalUrl}`);
      await page.check("#consent");
      await page.click("#pay");
      await page.waitForSelector('#status[data-status="RequiresAction"]');
      assert.equal((await status(IntentId)).Status, "RequiresAction");
      assert.deepEqual(await chargesOf(strategyId), []);
      await page.click("#confirm");
      await page.waitForSelector('#status[data-status="Active"]');
      const active = await status(IntentId);
      assert.equal(active.Status, "Active");
      assert.deepEqual(await chargesOf(strategyId), [{ reference: `charge:${active.SubscriptionId}:1` }]);
      await page.close();
    });
  });
}
