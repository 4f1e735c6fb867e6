import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  atBroker,
  confirming,
  copiesOf,
  formTokenOf,
  heldNotices,
  openPage,
  pathOf,
  settle,
  submit,
  trade,
} from "../helpers/confirmations.js";
import { assertRefused } from "../helpers/refusals.js";
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
 * Copies held for the customer's confirmation, over HTTP as a client and a
 * customer's browser would: IsConfirmationNeeded set with
 * SetAutotradeSettings, the notice with the page's address, the page, and
 * its Confirm and Discard forms.
 */

for (const backend of BACKENDS) {
  describe(`confirming held autotrade copies (${backend})`, () => {
    let service: TestService;
    let p: Population;

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      p = await populate(service);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { key: ADMIN_KEY, body: { Now: MARKET_OPEN } });
      await setQuote(service, "AAPL", 200, 200.1);
    });
    after(async () => {
      await service?.close();
    });

    const settingsOf = async (account: string) => {
      const r = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSettings", {
        key: p.keys.personB,
        query: { PersonId: String(p.people.personB), Account: account },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0];
    };

    test("SetAutotradeSettings sets IsConfirmationNeeded alone, and GetAutotradeSettings reads it", async () => {
      const { account } = await confirming(service, p, backend);
      const before = await settingsOf(account);
      assert.equal(before.IsConfirmationNeeded, true);
      const off = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        key: p.keys.personB,
        body: { Account: account, IsConfirmationNeeded: false, IsAutotradeEnabled: null },
      });
      assert.equal(off.status, 200, off.text);
      const after = await settingsOf(account);
      assert.equal(after.IsConfirmationNeeded, false);
      assert.equal(after.IsAutotradeDisabled, before.IsAutotradeDisabled);
      const bad = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
        key: p.keys.personB,
        body: { Account: account, IsConfirmationNeeded: "maybe" },
      });
      assertRefused(bad, 400, "IsConfirmationNeeded");
    });

    test("a held copy is not sent; the notice gives the page, which lists it; Confirm sends it and it fills", async () => {
      const { strategyId, account } = await confirming(service, p, backend);
      await trade(service, p, strategyId, "buy", 100);
      const [held] = await copiesOf(service, account);
      assert.ok(held);
      assert.equal(held.status, "PendingNew");
      assert.equal(held.awaiting_confirmation, 1);
      assert.equal(await atBroker(service, held.idempotency_key), false);

      const [notice] = await heldNotices(service, p, account);
      assert.ok(notice);
      assert.match(notice.message, /buy 50 AAPL/);
      const path = pathOf(notice.message);
      const page = await openPage(service, path);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.headers["referrer-policy"], "no-referrer");
      assert.match(page.text, new RegExp(`data-copy="${held.idempotency_key}"`));
      assert.match(page.text, /<td>AAPL<\/td><td>Buy<\/td><td>50<\/td><td>Market<\/td><td>at the market<\/td>/);
      assert.match(page.text, new RegExp(`Held ${backend}`));
      // The white-label server serves the same page.
      assert.equal((await openPage(service, path, "WL")).status, 200);

      const done = await submit(service, path, "confirm", {
        form_token: formTokenOf(page.text),
        copy: held.idempotency_key,
      });
      assert.equal(done.status, 303, done.text);
      assert.equal(done.headers.location, `${path}?done=confirmed`);
      await settle(service);
      const [sent] = await copiesOf(service, account);
      assert.equal(sent?.status, "Filled");
      assert.equal(sent?.awaiting_confirmation, 0);
      assert.equal(await atBroker(service, held.idempotency_key), true);
      // Nothing waits any more: the link is spent.
      const spent = await openPage(service, `${path}?done=confirmed`);
      assert.equal(spent.status, 410);
      assert.match(spent.text, /confirmed or discarded/);
      assert.match(spent.text, /The copy was confirmed and sent to your broker/);
    });

    test("Discard cancels the copy; it never reaches the broker", async () => {
      const { strategyId, account } = await confirming(service, p, backend);
      await trade(service, p, strategyId, "buy", 100);
      const [held] = await copiesOf(service, account);
      assert.ok(held);
      const path = pathOf((await heldNotices(service, p, account))[0]?.message ?? "");
      const page = await openPage(service, path);
      const done = await submit(service, path, "discard", {
        form_token: formTokenOf(page.text),
        copy: held.idempotency_key,
      });
      assert.equal(done.status, 303, done.text);
      await settle(service);
      const [discarded] = await copiesOf(service, account);
      assert.equal(discarded?.status, "Canceled");
      assert.equal(discarded?.reason, "Discarded by the customer");
      assert.equal(await atBroker(service, held.idempotency_key), false);
    });

    test("refused plainly: an unknown token, a stale form, another account's copy, a copy decided, a spent link", async () => {
      const mine = await confirming(service, p, backend);
      const other = await confirming(service, p, backend);
      await trade(service, p, mine.strategyId, "buy", 100);
      await trade(service, p, mine.strategyId, "buy", 10);
      await trade(service, p, other.strategyId, "buy", 100);
      const [first, second] = await copiesOf(service, mine.account);
      const [others] = await copiesOf(service, other.account);
      assert.ok(first && second && others);
      // One link per account: both holds gave the same address.
      const notices = await heldNotices(service, p, mine.account, 2);
      assert.equal(notices.length, 2);
      const path = pathOf(notices[0]?.message ?? "");
      assert.equal(pathOf(notices[1]?.message ?? ""), path);
      const otherPath = pathOf((await heldNotices(service, p, other.account))[0]?.message ?? "");
      assert.notEqual(otherPath, path);
      const page = await openPage(service, path);
      const formToken = formTokenOf(page.text);
      // The page shows only its account's copies.
      assert.doesNotMatch(page.text, new RegExp(others.idempotency_key));

      const unknown = await openPage(service, `/Confirmations/${"A".repeat(43)}`);
      assert.equal(unknown.status, 404);
      assert.match(unknown.text, /opens no confirmation page/);
      assert.equal((await openPage(service, "/Confirmations/short")).status, 404);
      const unknownPost = await submit(service, `/Confirmations/${"A".repeat(43)}`, "confirm", {
        form_token: formToken,
        copy: first.idempotency_key,
      });
      assert.equal(unknownPost.status, 404);

      // A form of another page (another link's form token) is stale here.
      const stale = await submit(service, path, "confirm", {
        form_token: formTokenOf((await openPage(service, otherPath)).text),
        copy: first.idempotency_key,
      });
      assert.equal(stale.status, 403);
      assert.match(stale.text, /stale/);

      // Another account's copy is not this page's to decide: it stays held.
      const theirs = await submit(service, path, "confirm", { form_token: formToken, copy: others.idempotency_key });
      assert.equal(theirs.status, 409);
      assert.match(theirs.text, /no longer waits for your confirmation/);
      await settle(service);
      assert.equal((await copiesOf(service, other.account))[0]?.status, "PendingNew");
      assert.equal(await atBroker(service, others.idempotency_key), false);
      assert.equal(await atBroker(service, first.idempotency_key), false);

      // A copy decided once is decided: the second click says so, the link stays for the copy still held.
      assert.equal(
        (await submit(service, path, "discard", { form_token: formToken, copy: first.idempotency_key })).status,
        303,
      );
      const again = await submit(service, path, "confirm", { form_token: formToken, copy: first.idempotency_key });
      assert.equal(again.status, 409);
      assert.match(again.text, /no longer waits for your confirmation/);
      assert.match(again.text, new RegExp(`data-copy="${second.idempotency_key}"`));

      // The last one decided: the link is spent, its page and forms refused.
      assert.equal(
        (await submit(service, path, "discard", { form_token: formToken, copy: second.idempotency_key })).status,
        303,
      );
      assert.equal((await openPage(service, path)).status, 410);
      const late = await submit(service, path, "confirm", { form_token: formToken, copy: second.idempotency_key });
      assert.equal(late.status, 410);
      await settle(service);
      assert.deepEqual(
        (await copiesOf(service, mine.account)).map((copy) => copy.status),
        ["Canceled", "Canceled"],
      );

      // A copy held later gets a new address; the spent one opens nothing.
      await trade(service, p, mine.strategyId, "buy", 10);
      const renewed = pathOf((await heldNotices(service, p, mine.account, 3))[2]?.message ?? "");
      assert.notEqual(renewed, path);
      assert.equal((await openPage(service, renewed)).status, 200);
      assert.equal((await openPage(service, path)).status, 404);
    });
  });
}
