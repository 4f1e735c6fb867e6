import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createSite } from "../../src/services/sites.js";
import { assertSucceeded, childEnv, onlyJson, runCli } from "../helpers/cli.js";
import { BACKENDS, startTestService, type TestService } from "../helpers/service.js";

/** The operator CLI's `site approval`: whether a geo-site requires its members' live accounts to be approved. */
for (const backend of BACKENDS) {
  describe(`operator CLI: a geo-site's account approval (${backend})`, () => {
    let service: TestService;
    let env: NodeJS.ProcessEnv;
    let geoId: number;
    let siteId: number;
    const cli = (...args: string[]) => runCli(env, args);
    const required = async () =>
      (
        await service.storage.db
          .selectFrom("sites")
          .select("requires_account_approval")
          .where("id", "=", geoId)
          .executeTakeFirstOrThrow()
      ).requires_account_approval;

    before(async () => {
      service = await startTestService(backend);
      env = childEnv(service.env);
      geoId = (await createSite(service.app.runtime, { kind: "geo", name: "CLI Approval Geo" })).id;
      siteId = (await createSite(service.app.runtime, { kind: "whitelabel", name: "CLI Approval WL" })).id;
    });
    after(() => service.close());

    test("site approval switches the requirement on and off and prints it", async () => {
      assert.equal(await required(), 0, "no approval required by default");
      const on = await cli("site", "approval", "--id", String(geoId), "--required", "true", "--json");
      assertSucceeded(on);
      assert.deepEqual(onlyJson(on), { SiteId: geoId, RequiresAccountApproval: true });
      assert.equal(await required(), 1);
      const off = await cli("site", "approval", "--id", String(geoId), "--required", "false");
      assertSucceeded(off);
      assert.match(off.stdout, /need no approval/);
      assert.equal(await required(), 0);
    });

    test("a bad value is a usage error; a site that is no geo-site is refused", async () => {
      const bad = await cli("site", "approval", "--id", String(geoId), "--required", "yes", "--json");
      assert.equal(bad.code, 2);
      assert.match(onlyJson(bad).Error.Message, /true or false/);
      const wl = await cli("site", "approval", "--id", String(siteId), "--required", "true", "--json");
      assert.equal(wl.code, 1);
      assert.match(onlyJson(wl).Error.Message, /No geo-site/);
      assert.equal(await required(), 0);
    });
  });
}
