import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey } from "../../src/services/keys.js";
import { createPerson } from "../../src/services/people.js";
import { createSite } from "../../src/services/sites.js";
import {
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * The site directories: GetWhiteLabelSiteUsers (WL, GEO), GetGeoSiteUsers (GEO)
 * and GetGeoSites (GEO), as docs/decisions.md "People, sites and KYC" settles them.
 */

interface Member {
  readonly Id: number;
  readonly IsWhiteLabelSiteAdmin: boolean;
  readonly WhiteLabelSiteId: number | null;
  readonly WhiteLabelPermissions: string;
  readonly GeoSite: string | null;
  readonly IsGeoSiteAdmin: boolean;
  readonly [field: string]: unknown;
}

function assertRefused(r: CallResult, status: number, field?: string, code?: string, label = ""): void {
  assert.equal(r.status, status, `${label} ${r.text}`);
  assert.equal(r.json.Results, null, label);
  const first = r.json.ResponseStatus.Errors[0];
  assert.ok(first, `${label}: an error entry`);
  if (field !== undefined) assert.equal(first.FieldName, field, `${label} ${r.text}`);
  if (code !== undefined) assert.equal(first.ErrorCode, code, `${label} ${r.text}`);
}

const ascending = (ids: readonly number[]) => [...ids].sort((a, b) => a - b);

for (const backend of BACKENDS) {
  describe(`site directories (${backend})`, () => {
    let service: TestService;
    let population: Population;
    /** AddProfile customers: one of site A, one of site B, one directly in "Geo Europe". */
    let aCust: number;
    let bCust: number;
    let geoCust: number;
    const CREATED = "2027-05-01T00:00:00.000Z";

    const addProfile = async (server: "WL" | "GEO", key: string, body: Record<string, unknown>) => {
      const r = await service.call(server, "POST", "/General/AddProfile", {
        key,
        body: {
          Password: "correct horse battery staple",
          Language: "eng",
          CountryCode: "US",
          DivisionCode: "CA",
          ...body,
        },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0].PersonId as number;
    };

    const geoUsers = (
      geoSite: string | undefined,
      key = population.keys.geoAdmin,
      extra: Record<string, string> = {},
    ) =>
      service.call("GEO", "GET", "/General/GetGeoSiteUsers", {
        key,
        query: { ...(geoSite === undefined ? {} : { GeoSite: geoSite }), ...extra },
      });

    const siteUsers = (server: "WL" | "GEO", key: string, siteId?: number) =>
      service.call(server, "GET", "/General/GetWhiteLabelSiteUsers", {
        key,
        query: siteId === undefined ? {} : { WhiteLabelSiteId: String(siteId) },
      });

    const membersOf = (r: CallResult): Member[] => {
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Member[];
    };

    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
      const clock = await service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: CREATED } });
      assert.equal(clock.status, 200, clock.text);
      aCust = await addProfile("WL", population.keys.wlAdminA, {
        FirstName: "Alice",
        LastName: "Customer",
        ScreenName: "Alice Customer",
        Email: "Alice.Customer@Example.com",
        Phone: "+14155552671",
        WhiteLabelSiteId: population.siteA,
        IPAddress: "198.51.100.4",
      });
      bCust = await addProfile("WL", population.keys.wlAdminB, {
        FirstName: "Bob",
        LastName: "Customer",
        ScreenName: "Bob Customer",
        Email: "bob.customer@example.com",
      });
      geoCust = await addProfile("GEO", population.keys.geoAdmin, {
        FirstName: "Greta",
        LastName: "Direct",
        ScreenName: "Greta Direct",
        Email: "greta.direct@example.com",
        Language: "deu",
        CountryCode: "DE",
        DivisionCode: "BE",
        GeoSite: "Geo Europe",
      });
    });
    after(() => service.close());

    test("GetGeoSites: any valid key gets every geo-site as {Id, GeoSIteId, Domain}", async () => {
      const europe = { Id: population.geo, GeoSIteId: "Geo Europe", Domain: "geo.example.com" };
      const keys = ["admin", "wlAdminA", "wlAdminB", "geoAdmin", "personA", "personB"] as const;
      for (const who of keys) {
        const r = await service.call("GEO", "GET", "/General/GetGeoSites", { key: population.keys[who] });
        assert.equal(r.status, 200, `${who} ${r.text}`);
        assert.deepEqual(r.json.Results, [europe], who);
      }
      const asia = await createSite(service.app.runtime, { kind: "geo", name: "Geo Asia", domain: "Asia.Example.com" });
      const americas = await createSite(service.app.runtime, { kind: "geo", name: "Geo Americas" });
      // A white-label site is not a geo-site.
      await createSite(service.app.runtime, { kind: "whitelabel", name: "Site in Asia", geoSiteId: asia.id });
      for (const who of keys) {
        const r = await service.call("GEO", "GET", "/General/GetGeoSites", { key: population.keys[who] });
        assert.equal(r.status, 200, `${who} ${r.text}`);
        assert.deepEqual(
          r.json.Results,
          [
            europe,
            { Id: asia.id, GeoSIteId: "Geo Asia", Domain: "asia.example.com" },
            { Id: americas.id, GeoSIteId: "Geo Americas", Domain: null },
          ],
          `${who}: id order`,
        );
      }
      const expired = await service.call("GEO", "GET", "/General/GetGeoSites", { key: population.keys.expired });
      assertRefused(expired, 401, undefined, "2016", "expired");
      const none = await service.call("GEO", "GET", "/General/GetGeoSites", { key: null });
      assertRefused(none, 401, undefined, "1001", "no key");
      for (const server of ["WL", "GEN"] as const) {
        const r = await service.call(server, "GET", "/General/GetGeoSites");
        assertRefused(r, 404, undefined, "1004", server);
      }
    });

    test("GetGeoSiteUsers lists the geo admin, site-A members and direct members, never site B's", async () => {
      const expected = ascending([
        population.people.geoAdmin,
        population.people.wlAdminA,
        population.people.personA,
        aCust,
        geoCust,
      ]);
      const members = membersOf(await geoUsers("Geo Europe"));
      assert.deepEqual(
        members.map((m) => m.Id),
        expected,
        "members oldest first",
      );
      for (const outsider of [
        population.people.wlAdminB,
        population.people.personB,
        bCust,
        population.people.admin,
        population.people.expired,
      ]) {
        assert.equal(
          members.some((m) => m.Id === outsider),
          false,
          `${outsider} is not a member`,
        );
      }
      const byId = new Map(members.map((m) => [m.Id, m]));
      const flags = (id: number) => {
        const m = byId.get(id);
        assert.ok(m, `member ${id}`);
        return [m.WhiteLabelSiteId, m.GeoSite, m.IsWhiteLabelSiteAdmin, m.IsGeoSiteAdmin];
      };
      assert.deepEqual(flags(population.people.geoAdmin), [null, "Geo Europe", false, true]);
      assert.deepEqual(flags(population.people.wlAdminA), [population.siteA, "Geo Europe", true, false]);
      assert.deepEqual(flags(population.people.personA), [population.siteA, "Geo Europe", false, false]);
      assert.deepEqual(flags(aCust), [population.siteA, "Geo Europe", false, false]);
      assert.deepEqual(flags(geoCust), [null, "Geo Europe", false, false]);
      assert.equal(byId.get(population.people.wlAdminA)?.WhiteLabelPermissions, "Admin");
      assert.equal(byId.get(geoCust)?.WhiteLabelPermissions, "Member");
      const greta = byId.get(geoCust);
      assert.deepEqual(
        [greta?.Alias, greta?.Email, greta?.Language, greta?.CountryCode, greta?.DivisionCode, greta?.Created],
        ["Greta Direct", "greta.direct@example.com", "deu", "DE", "DE-BE", CREATED],
      );
    });

    test("GetGeoSiteUsers names the geo-site by name or domain, in any case", async () => {
      const reference = membersOf(await geoUsers("Geo Europe"));
      for (const name of ["geo europe", "GEO EUROPE", "  Geo Europe ", "geo.example.com", "GEO.Example.COM"]) {
        assert.deepEqual(membersOf(await geoUsers(name)), reference, name);
      }
    });

    test("GetGeoSiteUsers pages with Limit, walking every member once", async () => {
      const all = membersOf(await geoUsers("Geo Europe")).map((m) => m.Id);
      for (const limit of [1, 2, 3]) {
        const seen: number[] = [];
        let r = await geoUsers("geo.example.com", undefined, { Limit: String(limit) });
        assert.equal(r.json.Pagination.prev_cursor, null);
        let pages = 0;
        for (;;) {
          const ids = membersOf(r).map((m) => m.Id);
          assert.ok(ids.length <= limit, `at most ${limit} per page`);
          seen.push(...ids);
          pages++;
          const next = r.json.Pagination.next_cursor as string | null;
          if (!next) break;
          assert.ok(pages <= all.length, "the walk ends");
          r = await geoUsers("geo.example.com", undefined, { Limit: String(limit), Cursor: next });
        }
        assert.equal(new Set(seen).size, seen.length, `no repeats at Limit ${limit}`);
        assert.deepEqual(seen, all, `Limit ${limit} walks everyone`);
      }
    });

    test("GetGeoSiteUsers: unknown or missing GeoSite, and who may call", async () => {
      for (const key of [population.keys.geoAdmin, population.keys.admin]) {
        assertRefused(await geoUsers("Geo Nowhere", key), 404, "GeoSite", "2013", "unknown geo-site");
        assertRefused(await geoUsers("Site A", key), 404, "GeoSite", "2013", "a white-label site is not a geo-site");
        assertRefused(await geoUsers(undefined, key), 400, "GeoSite", "1102", "missing GeoSite");
      }
      for (const who of ["wlAdminA", "wlAdminB", "personA", "personB"] as const) {
        assertRefused(await geoUsers("Geo Europe", population.keys[who]), 403, undefined, "1002", who);
      }
      assertRefused(await geoUsers("Geo Europe", population.keys.expired), 401, undefined, "2016", "expired");

      // The admin of another geo-site sees only its own.
      const oceania = await createSite(service.app.runtime, {
        kind: "geo",
        name: "Geo Oceania",
        domain: "oceania.example.com",
      });
      const { personId } = await createPerson(service.app.runtime, {
        email: "oceania.admin@example.com",
        firstName: "Oceania",
        lastName: "Admin",
        role: "geo-admin",
        siteId: oceania.id,
      });
      const otherKey = (await createKey(service.app.runtime, { personId })).accessKey;
      for (const name of ["Geo Europe", "geo.example.com"]) {
        assertRefused(await geoUsers(name, otherKey), 403, "GeoSite", "1002", `Oceania's admin on ${name}`);
      }
      assert.deepEqual(
        membersOf(await geoUsers("oceania.example.com", otherKey)).map((m) => m.Id),
        [personId],
      );
      assertRefused(await geoUsers("Geo Oceania", population.keys.geoAdmin), 403, "GeoSite", "1002", "Europe's admin");

      const byAdmin = membersOf(await geoUsers("Geo Europe", population.keys.admin));
      assert.deepEqual(byAdmin, membersOf(await geoUsers("Geo Europe")), "the service admin sees the same list");
      for (const server of ["WL", "GEN"] as const) {
        const r = await service.call(server, "GET", "/General/GetGeoSiteUsers", { query: { GeoSite: "Geo Europe" } });
        assertRefused(r, 404, undefined, "1004", server);
      }
    });

    test("GetWhiteLabelSiteUsers on GEO requires WhiteLabelSiteId; on WL the site is the caller's own", async () => {
      for (const who of ["admin", "wlAdminA"] as const) {
        assertRefused(await siteUsers("GEO", population.keys[who]), 400, "WhiteLabelSiteId", "1102", `GEO ${who}`);
      }
      const siteA = ascending([population.people.wlAdminA, population.people.personA, aCust]);
      const siteB = ascending([population.people.wlAdminB, population.people.personB, bCust]);
      const ids = (r: CallResult) => membersOf(r).map((m) => m.Id);
      assert.deepEqual(ids(await siteUsers("WL", population.keys.wlAdminA)), siteA);
      assert.deepEqual(ids(await siteUsers("WL", population.keys.wlAdminA, population.siteA)), siteA);
      assert.deepEqual(ids(await siteUsers("GEO", population.keys.wlAdminA, population.siteA)), siteA);
      assert.deepEqual(ids(await siteUsers("WL", population.keys.wlAdminB)), siteB);
      assert.deepEqual(ids(await siteUsers("GEO", population.keys.wlAdminB, population.siteB)), siteB);
      for (const server of ["WL", "GEO"] as const) {
        assertRefused(
          await siteUsers(server, population.keys.wlAdminA, population.siteB),
          403,
          "WhiteLabelSiteId",
          "1002",
          `${server} wlAdminA naming site B`,
        );
        assertRefused(
          await siteUsers(server, population.keys.wlAdminB, population.siteA),
          403,
          "WhiteLabelSiteId",
          "1002",
          `${server} wlAdminB naming site A`,
        );
      }
    });

    test("GetWhiteLabelSiteUsers: service admins name any site; geo-site admins and persons are refused", async () => {
      const admin = population.keys.admin;
      assertRefused(await siteUsers("WL", admin), 400, "WhiteLabelSiteId", "1102", "admin without a site");
      for (const server of ["WL", "GEO"] as const) {
        assert.deepEqual(
          membersOf(await siteUsers(server, admin, population.siteB)).map((m) => m.Id),
          ascending([population.people.wlAdminB, population.people.personB, bCust]),
        );
        assertRefused(await siteUsers(server, admin, population.geo), 404, "WhiteLabelSiteId", "2013", "a geo-site id");
        assertRefused(await siteUsers(server, admin, 987_654), 404, "WhiteLabelSiteId", "2013", "no such site");
        for (const who of ["geoAdmin", "personA", "personB"] as const) {
          assertRefused(await siteUsers(server, population.keys[who], population.siteA), 403, undefined, "1002", who);
        }
        assertRefused(
          await siteUsers(server, population.keys.expired, population.siteA),
          401,
          undefined,
          "2016",
          "expired",
        );
      }
      const gen = await service.call("GEN", "GET", "/General/GetWhiteLabelSiteUsers", {
        query: { WhiteLabelSiteId: String(population.siteA) },
      });
      assertRefused(gen, 404, undefined, "1004", "GEN");
    });

    test("GetWhiteLabelSiteUsers marks the site admin and the geo-site; an AddProfile customer shows its profile", async () => {
      const siteA = membersOf(await siteUsers("WL", population.keys.wlAdminA));
      for (const m of siteA) {
        const isAdmin = m.Id === population.people.wlAdminA;
        assert.equal(m.IsWhiteLabelSiteAdmin, isAdmin, `member ${m.Id}`);
        assert.equal(m.WhiteLabelPermissions, isAdmin ? "Admin" : "Member", `member ${m.Id}`);
        assert.equal(m.WhiteLabelSiteId, population.siteA);
        assert.equal(m.GeoSite, "Geo Europe");
        assert.equal(m.IsGeoSiteAdmin, false);
      }
      const siteB = membersOf(await siteUsers("GEO", population.keys.wlAdminB, population.siteB));
      for (const m of siteB) {
        const isAdmin = m.Id === population.people.wlAdminB;
        assert.equal(m.IsWhiteLabelSiteAdmin, isAdmin, `member ${m.Id}`);
        assert.equal(m.WhiteLabelPermissions, isAdmin ? "Admin" : "Member", `member ${m.Id}`);
        assert.equal(m.WhiteLabelSiteId, population.siteB);
        assert.equal(m.GeoSite, null, "site B lies in no geo-site");
      }
      const alice = siteA.find((m) => m.Id === aCust);
      assert.deepEqual(alice, {
        Id: aCust,
        Alias: "Alice Customer",
        FirstName: "Alice",
        LastName: "Customer",
        Email: "alice.customer@example.com",
        Phone: "+14155552671",
        Language: "eng",
        IsWhiteLabelSiteAdmin: false,
        WhiteLabelSiteId: population.siteA,
        WhiteLabelPermissions: "Member",
        CountryCode: "US",
        DivisionCode: "US-CA",
        Created: CREATED,
        LastLoggedIn: null,
        LastIP: "198.51.100.4",
        IsEmailValidated: false,
        IsAlive: true,
        IsManager: false,
        IsInvestor: false,
        GeoSite: "Geo Europe",
        IsGeoSiteAdmin: false,
      });
      // GetGeoSiteUsers shows the same record.
      const inGeo = membersOf(await geoUsers("Geo Europe")).find((m) => m.Id === aCust);
      assert.deepEqual(inGeo, alice);
    });
  });
}
