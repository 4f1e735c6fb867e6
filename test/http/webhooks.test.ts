import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { probeServer } from "../helpers/probe.js";
import { assertRefused } from "../helpers/refusals.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";

/**
 * Registering and removing a white-label site's webhook endpoints
 * (POST and DELETE /Webhooks/Register on WL): who may, which URLs, what
 * a second registration of a URL does, and what removing one does.
 */

for (const backend of BACKENDS) {
  describe(`webhook registration (${backend})`, () => {
    let service: TestService;
    let p: Population;
    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
    });
    after(() => service.close());

    const register = (key: string, body: Record<string, unknown>) =>
      service.call("WL", "POST", "/Webhooks/Register", { key, body });
    const unregister = (key: string, query: Record<string, string>) =>
      service.call("WL", "DELETE", "/Webhooks/Register", { key, query });

    test("a site admin registers a URL and gets its secret once; again, the secret is rotated", async () => {
      const first = await register(p.keys.wlAdminA, { Url: "https://Hooks.Example.COM/a?x=1" });
      assert.equal(first.status, 200, first.text);
      const [made] = first.json.Results;
      assert.equal(made.Url, "https://hooks.example.com/a?x=1", "kept in canonical form");
      assert.equal(made.WhiteLabelSiteId, p.siteA);
      assert.match(made.Secret, /^whsec_[A-Za-z0-9_-]{43}$/);
      assert.equal(made.IsSecretRotated, false);
      assert.ok(!Number.isNaN(Date.parse(made.CreatedAt)));

      const again = await register(p.keys.wlAdminA, { url: "https://hooks.example.com/a?x=1" });
      assert.equal(again.status, 200, again.text);
      const [rotated] = again.json.Results;
      assert.equal(rotated.IsSecretRotated, true);
      assert.notEqual(rotated.Secret, made.Secret);
      assert.equal(rotated.CreatedAt, made.CreatedAt);
      const rows = await service.storage.db
        .selectFrom("webhook_endpoints")
        .select(["secret", "deleted_at"])
        .where("url", "=", made.Url)
        .execute();
      assert.deepEqual(rows, [{ secret: rotated.Secret, deleted_at: null }], "one endpoint, holding the new secret");
    });

    test("a service admin names the site; without one it is refused", async () => {
      assertRefused(
        await register(p.keys.admin, { Url: "https://admin.example.com/" }),
        400,
        "WhiteLabelSiteId",
        "1102",
      );
      const named = await register(p.keys.admin, { Url: "https://admin.example.com/", WhiteLabelSiteId: p.siteB });
      assert.equal(named.status, 200, named.text);
      assert.equal(named.json.Results[0].WhiteLabelSiteId, p.siteB);
      assertRefused(
        await register(p.keys.admin, { Url: "https://admin.example.com/", WhiteLabelSiteId: p.geo }),
        404,
        "WhiteLabelSiteId",
      );
    });

    test("not a site admin, or another site's: refused", async () => {
      for (const who of ["personA", "geoAdmin"] as const) {
        assertRefused(await register(p.keys[who], { Url: "https://nope.example.com/" }), 403, undefined, "1002");
      }
      assertRefused(
        await register(p.keys.wlAdminB, { Url: "https://nope.example.com/", WhiteLabelSiteId: p.siteA }),
        403,
        "WhiteLabelSiteId",
        "1002",
      );
      assertRefused(await register(p.keys.expired, { Url: "https://nope.example.com/" }), 401);
      for (const server of ["GEN", "GEO"] as const) {
        const r = await service.call(server, "POST", "/Webhooks/Register", {
          key: p.keys.wlAdminA,
          body: { Url: "https://nope.example.com/" },
        });
        assert.equal(r.status, 404, `${server}: ${r.text}`);
      }
      const rows = await service.storage.db
        .selectFrom("webhook_endpoints")
        .select("id")
        .where("url", "=", "https://nope.example.com/")
        .execute();
      assert.deepEqual(rows, []);
    });

    test("bad URLs are refused, naming Url", async () => {
      for (const Url of [
        "not a url",
        "/relative/path",
        "ftp://files.example.com/",
        "javascript:alert(1)",
        "https://user:pass@hooks.example.com/",
        "https://hooks.example.com/#part",
        `https://hooks.example.com/${"x".repeat(2048)}`,
      ]) {
        assertRefused(await register(p.keys.wlAdminA, { Url }), 400, "Url", "1101");
      }
      assertRefused(await register(p.keys.wlAdminA, {}), 400, "Url", "1102");
      assertRefused(await register(p.keys.wlAdminA, { Url: "" }), 400, "Url");
      assertRefused(await register(p.keys.wlAdminA, { Url: 42 }), 400, "Url");
    });

    test("outside the sandbox only https to hosts outside the local network", async () => {
      const live = await probeServer(service, []);
      try {
        const post = (Url: string) =>
          live.inject({
            method: "POST",
            url: "/Webhooks/Register",
            headers: { authorization: `Bearer ${p.keys.wlAdminA}`, "content-type": "application/json" },
            payload: JSON.stringify({ Url }),
          });
        for (const Url of [
          "http://hooks.example.com/",
          "https://127.0.0.1/",
          "https://2130706433/",
          "https://localhost:8443/",
          "https://api.localhost/",
          "https://[::1]/",
          "https://[::ffff:127.0.0.1]/",
          "https://10.1.2.3/",
          "https://172.20.0.1/",
          "https://192.168.1.10/",
          "https://169.254.169.254/latest/meta-data",
        ]) {
          const r = await post(Url);
          assert.equal(r.statusCode, 400, `${Url}: ${r.body}`);
          assert.equal(JSON.parse(r.body).ResponseStatus.Errors[0].FieldName, "Url");
        }
        const ok = await post("https://hooks.partner.example.com/in");
        assert.equal(ok.statusCode, 200, ok.body);
      } finally {
        await live.close();
      }
    });

    test("a site has at most 10 live endpoints", async () => {
      const urls = Array.from({ length: 10 }, (_, i) => `https://many.example.com/${i}`);
      for (const Url of urls) {
        const r = await register(p.keys.admin, { Url, WhiteLabelSiteId: p.siteB });
        // Site B holds one endpoint already (the service admin's, above): the tenth is one too many.
        if (Url !== urls[9]) assert.equal(r.status, 200, r.text);
        else assertRefused(r, 409, "Url", "1202");
      }
      const rotation = await register(p.keys.admin, { Url: urls[0], WhiteLabelSiteId: p.siteB });
      assert.equal(rotation.status, 200, "rotating a registered one is no new endpoint");
      assert.equal((await unregister(p.keys.wlAdminB, { Url: urls[0] as string })).status, 200);
      assert.equal((await register(p.keys.wlAdminB, { Url: urls[9] })).status, 200, "room again");
    });

    test("DELETE removes the site's registration; unknown URLs and other sites' are 404", async () => {
      const Url = "https://removed.example.com/hook";
      const made = (await register(p.keys.wlAdminA, { Url })).json.Results[0];
      assertRefused(await unregister(p.keys.wlAdminB, { Url }), 404, "Url", "2013");
      assertRefused(await unregister(p.keys.wlAdminB, { Url, WhiteLabelSiteId: String(p.siteA) }), 403);
      assertRefused(await unregister(p.keys.personA, { Url }), 403);
      assertRefused(await unregister(p.keys.wlAdminA, { Url: "notaurl" }), 400, "Url");
      const removed = await unregister(p.keys.wlAdminA, { Url: "https://REMOVED.example.com/hook" });
      assert.equal(removed.status, 200, removed.text);
      assert.deepEqual(
        removed.json.Results[0],
        {
          Url,
          WhiteLabelSiteId: p.siteA,
          CreatedAt: made.CreatedAt,
          DeletedAt: removed.json.Results[0].DeletedAt,
          CanceledDeliveries: 0,
        },
        "the secret is never answered again",
      );
      assertRefused(await unregister(p.keys.wlAdminA, { Url }), 404, "Url");
      const anew = await register(p.keys.wlAdminA, { Url });
      assert.equal(anew.status, 200);
      assert.equal(anew.json.Results[0].IsSecretRotated, false, "a new registration");
      assert.notEqual(anew.json.Results[0].Secret, made.Secret);
    });
  });
}
