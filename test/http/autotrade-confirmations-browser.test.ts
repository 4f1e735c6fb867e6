import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type BrowserContext, chromium } from "playwright-core";
import { atBroker, confirming, copiesOf, heldNotices, pathOf, settle, trade } from "../helpers/confirmations.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, setQuote } from "../helpers/trading.js";

/**
 * The page confirming held autotrade copies in headless Chromium, clicked as
 * a customer would. CI installs Chromium from Debian packages (.ci/run); a
 * developer machine without it skips these tests and says so.
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
  describe(`the held copies' confirmation page in Chromium (${backend})`, { skip }, () => {
    let service: TestService;
    let p: Population;
    let base = "";
    let browser: BrowserContext;
    let profile = "";

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      p = await populate(service);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { key: ADMIN_KEY, body: { Now: MARKET_OPEN } });
      await setQuote(service, "AAPL", 200, 200.1);
      await service.app.servers.GEN.listen({ host: "127.0.0.1", port: 0 });
      const address = service.app.servers.GEN.server.address();
      assert.ok(address && typeof address === "object");
      base = `http://127.0.0.1:${address.port}`;
      profile = mkdtempSync(join(tmpdir(), "confirmation-chromium-"));
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

    test("confirm: the page lists the held copy, Confirm sends it, and it fills at the broker", async () => {
      const { strategyId, account } = await confirming(service, p, `Browser${backend}`);
      await trade(service, p, strategyId, "buy", 100);
      const [held] = await copiesOf(service, account);
      assert.ok(held);
      const path = pathOf((await heldNotices(service, p, account))[0]?.message ?? "");
      const page = await browser.newPage();
      await page.goto(`${base}${path}`);
      assert.equal(await page.textContent("#account"), account);
      const row = `tr[data-copy="${held.idempotency_key}"]`;
      assert.match((await page.textContent(row)) ?? "", /AAPL\s*Buy\s*50\s*Market/);

      await Promise.all([
        page.waitForURL(`${base}${path}?done=confirmed`),
        page.click(`${row} [data-action="confirm"]`),
      ]);
      assert.match((await page.textContent("#note")) ?? "", /confirmed and sent to your broker/);
      assert.equal(await page.locator(row).count(), 0);
      await settle(service);
      assert.equal((await copiesOf(service, account))[0]?.status, "Filled");
      assert.equal(await atBroker(service, held.idempotency_key), true);
      await page.close();
    });
  });
}
