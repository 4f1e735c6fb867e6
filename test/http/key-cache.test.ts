import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { changingKeys, KNOWN_KEYS_KEPT, keyCacheOf, UNKNOWN_KEYS_KEPT } from "../../src/services/key-cache.js";
import { createKey, revokeKey } from "../../src/services/keys.js";
import { createPerson } from "../../src/services/people.js";
import { legacyCall } from "../helpers/legacy.js";
import {
  advanceClock,
  BACKENDS,
  type CallResult,
  keyChangeHeard,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
  until,
} from "../helpers/service.js";

/**
 * Keys are kept in memory per process (docs/decisions.md "Keys and roles"):
 * whatever changes what a key authenticates as, here or in another process on
 * the same database (a sibling service, or the CLI in test/cli), is seen by
 * the next request (on PostgreSQL, once the change's notification is heard).
 */

const errorOf = (r: CallResult): string | undefined => r.json.ResponseStatus.Errors[0]?.ErrorCode;

for (const backend of BACKENDS) {
  describe(`keys cached in memory (${backend})`, () => {
    let service: TestService;
    let sibling: TestService;
    let population: Population;
    let n = 0;

    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
      sibling = await service.sibling();
      // Both instances listen (PostgreSQL) once they have authenticated a request.
      for (const instance of [service, sibling]) {
        assert.equal((await instance.call("WL", "POST", "/General/Hello")).status, 200);
        await until(() => keyCacheOf(instance.storage).keeping);
      }
    });
    after(async () => {
      await sibling?.close();
      await service?.close();
    });

    const accessKey = (instance: TestService, key: string) =>
      instance.call("GEN", "GET", "/General/GetAccessKey", { key });
    /** A customer of site A with a key, used once so that the service keeps it. */
    const customer = async (): Promise<{ personId: number; keyId: number; key: string }> => {
      n += 1;
      const { personId } = await createPerson(service.app.runtime, {
        email: `cached${n}@example.com`,
        firstName: "Cached",
        lastName: `Customer${n}`,
        role: "person",
        siteId: population.siteA,
      });
      const created = await createKey(service.app.runtime, { personId });
      assert.equal((await accessKey(service, created.accessKey)).status, 200);
      return { personId, keyId: created.id, key: created.accessKey };
    };

    if (backend === "postgres") {
      test("a process's own key change, forgotten at its commit, is no news when its notification arrives", async () => {
        const heardThere = keyChangeHeard(sibling);
        // The customer's key is created here (its commit empties this cache), then read and kept.
        await customer();
        const kept = keyCacheOf(service.storage).size.known;
        assert.ok(kept >= 1);
        // The sibling heard the change's notification; this process's listener was told at the same time.
        await heardThere;
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(keyCacheOf(service.storage).size.known, kept, "what this process read since its commit is kept");
      });
    }

    test("a key revoked in this process is refused on the very next request, on v4 and v3", async () => {
      const { keyId, key } = await customer();
      // A command the server does not know answers so only once the key is accepted.
      const v3 = () => legacyCall(service, "noSuchCommand", {}, key);
      assert.equal((await v3()).error.title, "Unknown command");
      await revokeKey(service.app.runtime, keyId);
      const refused = await accessKey(service, key);
      assert.equal(refused.status, 401);
      assert.equal(errorOf(refused), "2017");
      assert.equal((await v3()).error.title, "Revoked apikey");
    });

    test("a key revoked by another process is refused on the next request there", async () => {
      const { keyId, key } = await customer();
      assert.equal((await accessKey(sibling, key)).status, 200, "the sibling keeps it too");
      const heard = keyChangeHeard(service);
      await revokeKey(sibling.app.runtime, keyId);
      await heard;
      const refused = await accessKey(service, key);
      assert.equal(refused.status, 401);
      assert.equal(errorOf(refused), "2017");
      assert.equal(errorOf(await accessKey(sibling, key)), "2017");
    });

    test("a key created by another process works at once, even after it was presented unknown", async () => {
      const { personId } = await customer();
      const value = `chosen-key-value-${backend}-0123456789`;
      const unknown = await accessKey(service, value);
      assert.equal(errorOf(unknown), "2015");
      const heard = keyChangeHeard(service);
      await createKey(sibling.app.runtime, { personId, value, comment: "made elsewhere" });
      await heard;
      const ok = await accessKey(service, value);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.json.Results[0].Comment, "made elsewhere");
    });

    test("a change of role or site takes effect at once, here and in another process", async () => {
      const { personId, key } = await customer();
      const members = (instance: TestService) => instance.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", { key });
      assert.equal((await members(service)).status, 403);
      assert.equal((await members(sibling)).status, 403);
      // No operation changes a role yet: the CLI or an operation that does will change it like this.
      const heard = keyChangeHeard(sibling);
      await changingKeys({ storage: service.storage }, ({ tx }) =>
        tx.updateTable("persons").set({ role: "whitelabel-admin" }).where("id", "=", personId).execute(),
      );
      assert.equal((await members(service)).status, 200);
      await heard;
      assert.equal((await members(sibling)).status, 200);

      const back = keyChangeHeard(service);
      await changingKeys({ storage: sibling.storage }, ({ tx }) =>
        tx
          .updateTable("persons")
          .set({ role: "person", white_label_site_id: population.siteB })
          .where("id", "=", personId)
          .execute(),
      );
      await back;
      assert.equal((await members(service)).status, 403);
      const moved = await accessKey(service, key);
      assert.equal(moved.json.Results[0].WhiteLabelSiteId, population.siteB);
      assert.equal(moved.json.Results[0].GeoSiteId, null, "site B lies in no geo-site");
    });

    test("a site moved into a geo-site moves its members' keys with it", async () => {
      const { key } = await customer();
      const geoOf = async () => (await accessKey(service, key)).json.Results[0].GeoSiteId;
      assert.equal(await geoOf(), population.geo);
      const heard = keyChangeHeard(service);
      await changingKeys({ storage: sibling.storage }, ({ tx }) =>
        tx.updateTable("sites").set({ geo_site_id: null }).where("id", "=", population.siteA).execute(),
      );
      await heard;
      assert.equal(await geoOf(), null);
      await changingKeys({ storage: service.storage }, ({ tx }) =>
        tx.updateTable("sites").set({ geo_site_id: population.geo }).where("id", "=", population.siteA).execute(),
      );
      assert.equal(await geoOf(), population.geo);
    });

    test("a name changed by UpdateProfile is what GetAccessKey reports next, in both processes", async () => {
      const { personId, key } = await customer();
      assert.equal((await accessKey(sibling, key)).json.Results[0].FirstName, "Cached");
      const heard = keyChangeHeard(sibling);
      const updated = await service.call("GEN", "PUT", "/General/UpdateProfile", {
        key: population.keys.wlAdminA,
        body: { PersonId: personId, FirstName: "Renamed" },
      });
      assert.equal(updated.status, 200, updated.text);
      assert.equal((await accessKey(service, key)).json.Results[0].FirstName, "Renamed");
      await heard;
      assert.equal((await accessKey(sibling, key)).json.Results[0].FirstName, "Renamed");
    });

    test("expiry is judged on the service clock at each use of a kept key", async () => {
      await setClock(service, "2027-03-01T12:00:00Z");
      const { personId } = await customer();
      const { accessKey: key } = await createKey(service.app.runtime, {
        personId,
        expiresAt: new Date("2027-03-01T13:00:00Z"),
      });
      assert.equal((await accessKey(service, key)).status, 200);
      await advanceClock(service, 3600);
      const expired = await accessKey(service, key);
      assert.equal(expired.status, 401);
      assert.equal(errorOf(expired), "2016");
      await setClock(service, "2027-03-01T12:30:00Z");
      assert.equal((await accessKey(service, key)).status, 200, "the clock set back makes it valid again");
    });

    test("a flood of unknown keys keeps no more than the bound, and known keys keep working", async () => {
      const cache = keyCacheOf(service.storage);
      const flood = UNKNOWN_KEYS_KEPT + 200;
      for (let i = 0; i < flood; i++) {
        const r = await service.call("WL", "POST", "/General/Hello", { key: `unknown-key-${backend}-${i}-000000` });
        assert.equal(errorOf(r), "2015");
      }
      assert.equal(cache.size.unknown, UNKNOWN_KEYS_KEPT);
      assert.ok(cache.size.known <= KNOWN_KEYS_KEPT);
      const again = await service.call("WL", "POST", "/General/Hello", { key: `unknown-key-${backend}-0-000000` });
      assert.equal(errorOf(again), "2015", "a key dropped from the bound is looked up again");
      assert.equal((await accessKey(service, population.keys.personA)).status, 200);
    });

    if (backend === "postgres") {
      test("while the listening connection is down nothing is kept, and every key is read from storage", async () => {
        const { keyId, key } = await customer();
        const cache = keyCacheOf(service.storage);
        const ended = await sql<{ ended: boolean }>`
          select pg_terminate_backend(pid) as ended from pg_stat_activity
          where application_name = ${`strategy-hub listener ${service.env.PGOPTIONS?.split("=")[1] ?? ""}`}
            and query = 'listen strategy_hub_keys'`.execute(sibling.storage.db);
        // The key listeners of both instances on this schema.
        assert.deepEqual(
          ended.rows.map((row) => row.ended),
          [true, true],
        );
        await until(() => !cache.keeping);
        assert.equal(cache.size.known, 0);
        // Its notification is lost: the next request reads storage all the same.
        await revokeKey(sibling.app.runtime, keyId);
        assert.equal(errorOf(await accessKey(service, key)), "2017");
        assert.equal(cache.size.known, 0, "nothing is kept while not listening");
        await until(() => cache.keeping);
        assert.equal(errorOf(await accessKey(service, key)), "2017");
        assert.equal((await accessKey(service, population.keys.personA)).status, 200);
        assert.ok(cache.size.known > 0, "kept again once listening");
      });
    }
  });
}
