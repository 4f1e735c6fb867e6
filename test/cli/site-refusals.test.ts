import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createSite } from "../../src/services/sites.js";
import { assertCliRefused, assertSucceeded, childEnv, onlyJson, runCli } from "../helpers/cli.js";
import { BACKENDS, startTestService, type TestService } from "../helpers/service.js";
import { rowCount } from "../helpers/store-rows.js";

/**
 * `site create` and `platform create` as an operator gives them wrong: each
 * refusal exits 1 with one JSON error naming the field (one line on stderr
 * without --json), and leaves no site or platform behind.
 */

for (const backend of BACKENDS) {
  describe(`operator CLI: site and platform refusals (${backend})`, () => {
    let service: TestService;
    let env: NodeJS.ProcessEnv;
    let geoId: number;
    let whiteLabelId: number;
    const cli = (...args: string[]) => runCli(env, args);

    before(async () => {
      service = await startTestService(backend);
      env = childEnv(service.env);
      geoId = (await createSite(service.app.runtime, { kind: "geo", name: "Refusals Geo" })).id;
      whiteLabelId = (await createSite(service.app.runtime, { kind: "whitelabel", name: "Refusals WL" })).id;
    });
    after(() => service.close());

    const siteCreate = (...options: string[]) => cli("site", "create", "--kind", "whitelabel", ...options, "--json");

    test("a name blank or over 100 characters is refused naming Name", async () => {
      const before = await rowCount(service.storage, "sites");
      for (const name of ["   ", "n".repeat(101)]) {
        assertCliRefused(await siteCreate("--name", name), "Name", /1 to 100 characters/);
      }
      // 100 characters, spaces around them trimmed, is a name.
      const made = await siteCreate("--name", ` ${"n".repeat(100)} `);
      assertSucceeded(made);
      const row = await service.storage.db
        .selectFrom("sites")
        .select("name")
        .where("id", "=", onlyJson(made).Id)
        .executeTakeFirstOrThrow();
      assert.equal(row.name, "n".repeat(100));
      assert.equal(await rowCount(service.storage, "sites"), before + 1);
    });

    test("a domain that is not a host name is refused naming Domain", async () => {
      const before = await rowCount(service.storage, "sites");
      for (const domain of [
        "acme",
        "https://acme.example.com",
        "acme.example.com/path",
        "acme example.com",
        "-acme.example.com",
        `${"a".repeat(64)}.example.com`,
        "",
      ]) {
        assertCliRefused(await siteCreate("--name", "Acme", `--domain=${domain}`), "Domain", /Not a domain name/);
      }
      assert.equal(await rowCount(service.storage, "sites"), before);
    });

    test("support contacts that are not a URL, an email address or a company name are refused naming each", async () => {
      const before = await rowCount(service.storage, "sites");
      for (const url of ["not a url", "ftp://files.example.com/", "mailto:help@example.com", "https://", ""]) {
        assertCliRefused(
          await siteCreate("--name", "Acme", "--support-url", url),
          "SupportSiteURL",
          /Not an http\(s\) URL/,
        );
      }
      for (const email of ["help at example.com", "help@", ""]) {
        assertCliRefused(
          await siteCreate("--name", "Acme", "--support-email", email),
          "SupportEmail",
          /Not an email address/,
        );
      }
      for (const company of ["c".repeat(101), "   ", ""]) {
        assertCliRefused(
          await siteCreate("--name", "Acme", "--support-company", company),
          "SupportCompanyName",
          /1 to 100 characters/,
        );
      }
      assert.equal(await rowCount(service.storage, "sites"), before);
    });

    test("support contacts are kept as members' profiles show them: trimmed, and a site without its own shows its geo-site's", async () => {
      const geo = await cli(
        "site",
        "create",
        "--kind",
        "geo",
        "--name",
        "Contacts Geo",
        "--support-company",
        "Geo Help Ltd",
        "--support-url",
        "https://help.geo.example.com/",
        "--json",
      );
      assertSucceeded(geo);
      const site = await siteCreate(
        "--name",
        "Contacts WL",
        "--geo",
        String(onlyJson(geo).Id),
        "--support-url",
        "  https://help.acme.example.com/  ",
        "--support-email",
        " Help@Acme.Example.com ",
      );
      assertSucceeded(site);
      const person = await cli(
        "person",
        "create",
        "--email",
        "contacts.member@example.com",
        "--first",
        "Con",
        "--last",
        "Tact",
        "--site",
        String(onlyJson(site).Id),
        "--json",
      );
      assertSucceeded(person);
      const key = await cli("key", "create", "--person", String(onlyJson(person).PersonId), "--json");
      assertSucceeded(key);
      const profile = await service.call("GEN", "GET", "/General/GetProfile", { key: onlyJson(key).AccessKey });
      assert.equal(profile.status, 200, profile.text);
      const [me] = profile.json.Results;
      assert.deepEqual(
        [me.SupportCompanyName, me.SupportSiteURL, me.SupportEmail],
        ["Geo Help Ltd", "https://help.acme.example.com/", "help@acme.example.com"],
      );
    });

    test("--geo on a geo-site, an unknown geo-site or a white-label one is refused naming GeoSiteId", async () => {
      const before = await rowCount(service.storage, "sites");
      assertCliRefused(
        await cli("site", "create", "--kind", "geo", "--name", "Nested Geo", "--geo", String(geoId), "--json"),
        "GeoSiteId",
        /Only a white-label site belongs to a geo-site/,
      );
      assertCliRefused(await siteCreate("--name", "Lost", "--geo", "999999"), "GeoSiteId", /No geo-site 999999/);
      assertCliRefused(
        await siteCreate("--name", "Lost", "--geo", String(whiteLabelId)),
        "GeoSiteId",
        new RegExp(`No geo-site ${whiteLabelId}`),
      );
      assert.equal(await rowCount(service.storage, "sites"), before);
      // The geo-site itself is a home for it.
      const inside = await siteCreate("--name", "Inside", "--geo", String(geoId));
      assertSucceeded(inside);
      const row = await service.storage.db
        .selectFrom("sites")
        .select("geo_site_id")
        .where("id", "=", onlyJson(inside).Id)
        .executeTakeFirstOrThrow();
      assert.equal(row.geo_site_id, geoId);
    });

    test("the first fault is the one named; without --json it is one line on stderr, no stack trace", async () => {
      const before = await rowCount(service.storage, "sites");
      assertCliRefused(
        await siteCreate("--name", "Acme", "--domain", "acme", "--support-email", "nope", "--geo", "999999"),
        "Domain",
        /Not a domain name: acme/,
      );
      const text = await cli("site", "create", "--kind", "whitelabel", "--name", "Acme", "--support-url", "nope");
      assert.equal(text.code, 1);
      assert.equal(text.stdout, "");
      assert.equal(text.stderr, "Not an http(s) URL: nope\n");
      assert.equal(await rowCount(service.storage, "sites"), before);
    });

    test("platform create: a blank or too long name, an unknown or geo site are refused; no platform is made", async () => {
      const before = await rowCount(service.storage, "platforms");
      for (const name of ["  ", "p".repeat(101)]) {
        assertCliRefused(await cli("platform", "create", "--name", name, "--json"), "Name", /1 to 100 characters/);
      }
      for (const site of ["999999", String(geoId)]) {
        assertCliRefused(
          await cli("platform", "create", "--name", "Broker platform", "--site", site, "--json"),
          "WhiteLabelSiteId",
          new RegExp(`No white-label site ${site}`),
        );
      }
      assert.equal(await rowCount(service.storage, "platforms"), before);
      const made = await cli(
        "platform",
        "create",
        "--name",
        "Broker platform",
        "--site",
        String(whiteLabelId),
        "--json",
      );
      assertSucceeded(made);
      assert.equal(await rowCount(service.storage, "platforms"), before + 1);
    });
  });
}
