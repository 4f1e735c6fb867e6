import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { createKey } from "../../src/services/keys.js";
import { verifyPassword } from "../../src/services/passwords.js";
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
 * People through HTTP (docs/decisions.md, "People, sites and KYC (issue 3)"):
 * AddProfile, UpdateProfile, GetProfile, SearchProfiles and GetPhoneAlreadyExists.
 */

type Server = "WL" | "GEN" | "GEO";

interface ErrorItem {
  readonly ErrorCode: string;
  readonly FieldName: string;
  readonly Message: string;
  readonly Meta: Record<string, unknown>;
}

const errorsOf = (r: CallResult): ErrorItem[] => r.json?.ResponseStatus?.Errors ?? [];
const fieldsOf = (r: CallResult): string[] => errorsOf(r).map((e) => e.FieldName);

/** A refusal with this status whose errors name exactly these fields (any order). */
function assertRefused(r: CallResult, status: number, fields: readonly string[], label = ""): void {
  assert.equal(r.status, status, `${label} ${r.text}`);
  assert.equal(r.json.ResponseStatus.ErrorCode, String(status), label);
  assert.equal(r.json.Results, null, label);
  assert.deepEqual([...fieldsOf(r)].sort(), [...fields].sort(), `${label} ${r.text}`);
}

function assertOk(r: CallResult, label = ""): void {
  assert.equal(r.status, 200, `${label} ${r.text}`);
  assert.equal(r.json.ResponseStatus.ErrorCode, "200", label);
}

/** Fields every caller sees (and Alias, null for people without a screen name); every other field is null. */
const PUBLIC_FIELDS = ["Id", "Created", "IsAlive", "IsManager", "IsInvestor"];
const PRIVATE_FIELDS = [
  "FirstName",
  "LastName",
  "Email",
  "Phone",
  "IsPhoneVerified",
  "Language",
  "WhiteLabelSiteId",
  "CountryCode",
  "DivisionCode",
  "LastLoggedIn",
  "LastIP",
  "IsEmailValidated",
  "GeoSite",
  "IsGeoSiteAdmin",
  "SupportCompanyName",
  "SupportSiteURL",
  "SupportEmail",
  "UserToken",
];

function assertPublicView(person: Record<string, unknown>, label = ""): void {
  for (const field of PUBLIC_FIELDS) assert.notEqual(person[field], null, `${label}: ${field} is public`);
  assert.ok("Alias" in person, `${label}: Alias is public`);
  for (const field of PRIVATE_FIELDS) assert.equal(person[field], null, `${label}: ${field} is private`);
  // The decisions say "every other field is null"; the record types ApprovedAccounts as a list, so at least
  // it must never list anything in the public view.
  assert.ok(
    person.ApprovedAccounts === null ||
      (Array.isArray(person.ApprovedAccounts) && person.ApprovedAccounts.length === 0),
    `${label}: ApprovedAccounts is not shown`,
  );
}

const decodeIcon = (icon: string): string =>
  Buffer.from(icon.slice("data:image/svg+xml;base64,".length), "base64").toString("utf8");

for (const backend of BACKENDS) {
  describe(`people: AddProfile, UpdateProfile, GetProfile, SearchProfiles, GetPhoneAlreadyExists (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let serial = 0;

    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
    });
    after(() => service.close());

    const keys = () => population.keys;

    /** A valid AddProfile body, unique on every call. */
    const newcomer = (overrides: Record<string, unknown> = {}): Record<string, unknown> => {
      const n = ++serial;
      return {
        FirstName: "Ada",
        LastName: "Lovelace",
        ScreenName: `Ada ${n}`,
        Email: `ada.${n}@example.org`,
        Password: "correct horse battery",
        Language: "eng",
        CountryCode: "US",
        DivisionCode: "CA",
        ...overrides,
      };
    };

    const addProfile = (key: string, body: unknown, server: Server = "WL") =>
      service.call(server, "POST", "/General/AddProfile", { key, body });

    /** Adds a person and answers its id and tokens. */
    const added = async (key: string, body: Record<string, unknown>, server: Server = "WL") => {
      const r = await addProfile(key, body, server);
      assertOk(r, `AddProfile ${JSON.stringify(body)}`);
      assert.equal(r.json.Results.length, 1);
      const result = r.json.Results[0] as { PersonId: number; CSRF: string; UserToken: string };
      return result;
    };

    const getProfile = (key: string, query: Record<string, string> = {}, server: Server = "GEN") =>
      service.call(server, "GET", "/General/GetProfile", { key, query });

    const profileOf = async (personId: number, key = keys().admin, server: Server = "GEN") => {
      const r = await getProfile(key, { PersonId: String(personId) }, server);
      assertOk(r, `GetProfile ${personId}`);
      assert.equal(r.json.Results.length, 1);
      return r.json.Results[0];
    };

    const updateProfile = (key: string, body: unknown, server: Server = "GEN") =>
      service.call(server, "PUT", "/General/UpdateProfile", { key, body });

    /** Every page of SearchProfiles: the ids in order. */
    const searchIds = async (query: Record<string, string>, key = keys().admin, server: Server = "GEN") => {
      const ids: number[] = [];
      let cursor: string | null = null;
      do {
        const r: CallResult = await service.call(server, "GET", "/General/SearchProfiles", {
          key,
          query: { ...query, ...(cursor ? { Cursor: cursor } : {}) },
        });
        assertOk(r, `SearchProfiles ${JSON.stringify(query)}`);
        ids.push(...r.json.Results.map((p: { Id: number }) => p.Id));
        cursor = r.json.Pagination.next_cursor;
      } while (cursor);
      return ids;
    };

    const countPeople = async () => (await searchIds({})).length;

    const storedPerson = (id: number) =>
      service.storage.db.selectFrom("persons").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

    /** The stored row without what key sessions touch (a key's use sets LastLoggedIn and LastIP). */
    const storedProfile = async (id: number) => {
      const { last_logged_in: _loggedIn, last_ip: _ip, ...rest } = await storedPerson(id);
      return rest;
    };

    const setStored = (id: number, values: { is_phone_verified?: number; is_alive?: number; phone?: string }) =>
      service.storage.db.updateTable("persons").set(values).where("id", "=", id).execute();

    const keyFor = async (personId: number) => (await createKey(service.app.runtime, { personId })).accessKey;

    describe("AddProfile", () => {
      test("a white-label admin signs up a customer on its own site", async () => {
        const body = newcomer({
          FirstName: "  Grace ",
          Email: "Grace.Hopper@Example.ORG",
          ScreenName: "Amazing Grace",
          Language: "ENG",
          CountryCode: "us",
          DivisionCode: "ca",
          Phone: "+14155552671",
          City: "San Francisco",
          IPAddress: "not even an address",
        });
        const result = await added(keys().wlAdminA, body);
        assert.deepEqual(Object.keys(result).sort(), ["CSRF", "PersonId", "UserToken"]);
        assert.equal(typeof result.PersonId, "number");
        for (const token of [result.CSRF, result.UserToken]) {
          assert.equal(typeof token, "string");
          assert.ok(token.length > 0);
        }
        assert.notEqual(result.CSRF, result.UserToken);

        const members = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", {
          key: keys().wlAdminA,
        });
        assertOk(members);
        const member = members.json.Results.find((m: { Id: number }) => m.Id === result.PersonId);
        assert.ok(member, "the customer is a member of site A");
        assert.equal(member.WhiteLabelPermissions, "Member");
        assert.equal(member.WhiteLabelSiteId, population.siteA);

        const profile = await profileOf(result.PersonId, keys().wlAdminA, "WL");
        assert.equal(profile.Id, result.PersonId);
        assert.equal(profile.Alias, "Amazing Grace");
        assert.equal(profile.FirstName, "Grace", "trimmed");
        assert.equal(profile.LastName, "Lovelace");
        assert.equal(profile.Email, "grace.hopper@example.org", "emails are stored lower-cased");
        assert.equal(profile.Language, "eng");
        assert.equal(profile.CountryCode, "US");
        assert.equal(profile.DivisionCode, "US-CA");
        assert.equal(profile.Phone, "+14155552671");
        assert.equal(profile.IsPhoneVerified, false);
        assert.equal(profile.WhiteLabelSiteId, population.siteA);
        assert.equal(profile.GeoSite, "Geo Europe");
        assert.equal(profile.IsGeoSiteAdmin, false);
        assert.equal(profile.IsAlive, true);
        assert.equal(profile.IsEmailValidated, false);
        assert.equal(profile.LastIP, null, "IPAddress is ignored without WhiteLabelSiteId");
        assert.equal(profile.UserToken, result.UserToken, "the site's admin reads the token again");
        assert.ok(!Number.isNaN(Date.parse(profile.Created)));

        const stored = await storedPerson(result.PersonId);
        assert.equal(stored.city, "San Francisco");
        assert.notEqual(stored.csrf_hash, result.CSRF, "only the CSRF token's hash is kept");
      });

      test("with WhiteLabelSiteId, IPAddress is required, must be an address, and becomes LastIP", async () => {
        const site = String(population.siteA);
        const before = await countPeople();
        for (const ip of [undefined, null, ""]) {
          const r = await addProfile(keys().wlAdminA, newcomer({ WhiteLabelSiteId: site, IPAddress: ip }));
          assertRefused(r, 400, ["IPAddress"], `IPAddress ${ip}`);
          assert.equal(errorsOf(r)[0]?.ErrorCode, "1102");
        }
        for (const ip of ["not-an-ip", "256.1.1.1", "203.0.113", "203.0.113.7/24"]) {
          const r = await addProfile(keys().wlAdminA, newcomer({ WhiteLabelSiteId: population.siteA, IPAddress: ip }));
          assertRefused(r, 400, ["IPAddress"], ip);
          assert.equal(errorsOf(r)[0]?.ErrorCode, "1101");
        }
        assert.equal(await countPeople(), before, "refused sign-ups write nothing");

        const v4 = await added(keys().wlAdminA, newcomer({ WhiteLabelSiteId: site, IPAddress: "203.0.113.7" }));
        assert.equal((await profileOf(v4.PersonId)).LastIP, "203.0.113.7");
        const v6 = await added(keys().wlAdminA, newcomer({ WhiteLabelSiteId: site, IPAddress: "2001:db8::42" }));
        assert.equal((await profileOf(v6.PersonId)).LastIP, "2001:db8::42");
        assert.equal((await profileOf(v6.PersonId)).WhiteLabelSiteId, population.siteA);
      });

      test("without WhiteLabelSiteId any IPAddress is ignored, even a forwarded-for list", async () => {
        const list = "203.0.113.1, 198.51.100.2, 192.0.2.3, 10.0.0.1, 10.0.0.2";
        assert.ok(list.length > 45);
        for (const ip of ["not an address", list, 42]) {
          const person = await added(keys().wlAdminA, newcomer({ IPAddress: ip }));
          assert.equal((await profileOf(person.PersonId)).LastIP, null, String(ip));
          assert.equal((await storedPerson(person.PersonId)).signup_ip, null);
        }
      });

      test("who may sign up whom, and where", async () => {
        const siteA = population.siteA;
        const siteB = population.siteB;
        const before = await countPeople();
        const forbidden: [string, string, Record<string, unknown>][] = [
          ["WL admin A naming site B", keys().wlAdminA, { WhiteLabelSiteId: siteB, IPAddress: "203.0.113.1" }],
          ["WL admin B naming site A", keys().wlAdminB, { WhiteLabelSiteId: siteA, IPAddress: "203.0.113.1" }],
          ["geo admin naming site B", keys().geoAdmin, { WhiteLabelSiteId: siteB, IPAddress: "203.0.113.1" }],
          ["WL admin A naming the geo-site", keys().wlAdminA, { GeoSite: "Geo Europe" }],
          ["a person", keys().personA, {}],
          ["a person naming its site", keys().personA, { WhiteLabelSiteId: siteA, IPAddress: "203.0.113.1" }],
        ];
        for (const server of ["WL", "GEO"] as const) {
          for (const [label, key, extra] of forbidden) {
            const r = await addProfile(key, newcomer(extra), server);
            assert.equal(r.status, 403, `${label} on ${server}: ${r.text}`);
            assert.equal(errorsOf(r)[0]?.ErrorCode, "1002", label);
          }
          const expired = await addProfile(keys().expired, newcomer(), server);
          assert.equal(expired.status, 401);
          assert.equal(errorsOf(expired)[0]?.ErrorCode, "2016");
          const none = await service.call(server, "POST", "/General/AddProfile", { key: null, body: newcomer() });
          assert.equal(none.status, 401);
        }
        const onGen = await addProfile(keys().admin, newcomer(), "GEN");
        assert.equal(onGen.status, 404, "AddProfile is not served on GEN");
        assert.equal(await countPeople(), before, "nothing was written");

        // A geo admin adds to a white-label site inside its geo-site...
        const inSiteA = await added(
          keys().geoAdmin,
          newcomer({ WhiteLabelSiteId: siteA, IPAddress: "198.51.100.4" }),
          "GEO",
        );
        const a = await profileOf(inSiteA.PersonId, keys().geoAdmin, "GEO");
        assert.equal(a.WhiteLabelSiteId, siteA);
        assert.equal(a.GeoSite, "Geo Europe");
        // ...and direct members, naming the geo-site by name or domain in any case, or not at all.
        for (const geoSite of ["Geo Europe", "geo europe", "GEO.EXAMPLE.COM", undefined]) {
          const direct = await added(
            keys().geoAdmin,
            newcomer(geoSite === undefined ? {} : { GeoSite: geoSite }),
            "GEO",
          );
          const p = await profileOf(direct.PersonId, keys().geoAdmin, "GEO");
          assert.equal(p.WhiteLabelSiteId, null, String(geoSite));
          assert.equal(p.GeoSite, "Geo Europe", String(geoSite));
          assert.equal(p.UserToken, direct.UserToken);
        }
        // A white-label admin may name its own site (with the geo-site it lies in).
        const own = await added(
          keys().wlAdminA,
          newcomer({ WhiteLabelSiteId: siteA, GeoSite: "geo.example.com", IPAddress: "198.51.100.5" }),
        );
        assert.equal((await profileOf(own.PersonId)).WhiteLabelSiteId, siteA);
        // A white-label site outside the named geo-site is refused.
        const outside = await addProfile(
          keys().admin,
          newcomer({ WhiteLabelSiteId: siteB, GeoSite: "Geo Europe", IPAddress: "198.51.100.6" }),
        );
        assertRefused(outside, 400, ["GeoSite"]);
        // Unknown sites.
        const nowhere = await addProfile(keys().admin, newcomer({ GeoSite: "Nowhere" }), "GEO");
        assertRefused(nowhere, 404, ["GeoSite"]);
        const noSite = await addProfile(
          keys().admin,
          newcomer({ WhiteLabelSiteId: 987_654, IPAddress: "198.51.100.6" }),
        );
        assertRefused(noSite, 404, ["WhiteLabelSiteId"]);
        const geoAsWl = await addProfile(
          keys().admin,
          newcomer({ WhiteLabelSiteId: population.geo, IPAddress: "198.51.100.6" }),
        );
        assertRefused(geoAsWl, 404, ["WhiteLabelSiteId"], "a geo-site is not a white-label site");
        // A service admin without a site creates a person with no site.
        const siteless = await added(keys().admin, newcomer(), "GEO");
        const s = await profileOf(siteless.PersonId);
        assert.equal(s.WhiteLabelSiteId, null);
        assert.equal(s.GeoSite, null);
        // Site B's admin adds to site B, which lies in no geo-site.
        const inSiteB = await added(keys().wlAdminB, newcomer());
        const b = await profileOf(inSiteB.PersonId, keys().wlAdminB, "WL");
        assert.equal(b.WhiteLabelSiteId, siteB);
        assert.equal(b.GeoSite, null);
      });

      test("each missing required field is named", async () => {
        const before = await countPeople();
        for (const field of ["FirstName", "LastName", "ScreenName", "Email", "Password", "Language", "CountryCode"]) {
          for (const absent of ["omitted", "null"]) {
            const body = newcomer();
            if (absent === "omitted") delete body[field];
            else body[field] = null;
            const r = await addProfile(keys().wlAdminA, body);
            assertRefused(r, 400, [field], `${field} ${absent}`);
            assert.equal(errorsOf(r)[0]?.ErrorCode, "1102", field);
          }
        }
        assert.equal(await countPeople(), before);
      });

      test("each invalid value is named, and nothing is written", async () => {
        const cases: [string, Record<string, unknown>, string][] = [
          ["FirstName of 41", { FirstName: "x".repeat(41) }, "FirstName"],
          ["LastName of 41", { LastName: "y".repeat(41) }, "LastName"],
          ["empty FirstName", { FirstName: "" }, "FirstName"],
          ["blank LastName", { LastName: "   " }, "LastName"],
          ["ScreenName of 2", { ScreenName: "ab" }, "ScreenName"],
          ["ScreenName of 41", { ScreenName: "s".repeat(41) }, "ScreenName"],
          ["ScreenName with !", { ScreenName: "bad!name" }, "ScreenName"],
          ["ScreenName with <>", { ScreenName: "a<b>c" }, "ScreenName"],
          ["ScreenName starting with a dot", { ScreenName: ".abc" }, "ScreenName"],
          ["ScreenName ending with a dash", { ScreenName: "abc-" }, "ScreenName"],
          ["bad Email", { Email: "not-an-email" }, "Email"],
          ["Password of 7", { Password: "1234567" }, "Password"],
          ["Password of 201", { Password: "p".repeat(201) }, "Password"],
          ["Language xx", { Language: "xx" }, "Language"],
          ["Language english", { Language: "english" }, "Language"],
          ["Language zzz", { Language: "qqx" }, "Language"],
          ["CountryCode ZZ", { CountryCode: "ZZ" }, "CountryCode"],
          ["CountryCode USA", { CountryCode: "USA" }, "CountryCode"],
          ["DivisionCode of France", { DivisionCode: "FR-75" }, "DivisionCode"],
          ["DivisionCode FR-IDF", { DivisionCode: "FR-IDF" }, "DivisionCode"],
          ["unknown DivisionCode", { DivisionCode: "XX" }, "DivisionCode"],
          ["DivisionCode for a country without", { CountryCode: "AQ", DivisionCode: "AQ-01" }, "DivisionCode"],
          ["Phone with trunk zero", { Phone: "+4402079460000" }, "Phone"],
          ["Phone without plus", { Phone: "14155552671" }, "Phone"],
          ["Phone too short", { Phone: "+1415" }, "Phone"],
          ["Phone with spaces", { Phone: "+1 415 555 2671" }, "Phone"],
          ["Phone 00 prefix", { Phone: "00442079460000" }, "Phone"],
          ["City of 41", { City: "c".repeat(41) }, "City"],
          ["Street of 81", { Street: "s".repeat(81) }, "Street"],
          ["ZipCode of 17", { ZipCode: "9".repeat(17) }, "ZipCode"],
          ["FirstName as boolean", { FirstName: true }, "FirstName"],
          ["Email as object", { Email: { address: "a@b.org" } }, "Email"],
          ["Password as list", { Password: ["correct horse battery"] }, "Password"],
          ["WhiteLabelSiteId as text", { WhiteLabelSiteId: "site A", IPAddress: "203.0.113.1" }, "WhiteLabelSiteId"],
        ];
        const before = await countPeople();
        for (const [label, fault, field] of cases) {
          for (const server of ["WL", "GEO"] as const) {
            const r = await addProfile(keys().wlAdminA, newcomer(fault), server);
            assertRefused(r, 400, [field], `${label} on ${server}`);
            assert.equal(errorsOf(r)[0]?.ErrorCode, "1101", label);
          }
        }
        const noDivision = await addProfile(keys().wlAdminA, newcomer({ DivisionCode: undefined }));
        assertRefused(noDivision, 400, ["DivisionCode"], "US needs a DivisionCode");
        assert.equal(errorsOf(noDivision)[0]?.ErrorCode, "1102");
        const emptyDivision = await addProfile(keys().wlAdminA, newcomer({ DivisionCode: "" }));
        assertRefused(emptyDivision, 400, ["DivisionCode"], "an empty DivisionCode is a missing one");
        assert.equal(await countPeople(), before, "refused sign-ups write nothing");
      });

      test("limits are inclusive, and values are normalised", async () => {
        const edge = await added(
          keys().wlAdminA,
          newcomer({
            FirstName: "F".repeat(40),
            LastName: "L".repeat(40),
            ScreenName: `O'Brien-Smith_Jr. ${serial}`.padEnd(40, "x"),
            Password: "p".repeat(8),
            City: "c".repeat(40),
            Street: "s".repeat(80),
            ZipCode: "9".repeat(16),
          }),
        );
        const p = await profileOf(edge.PersonId);
        assert.equal(p.FirstName, "F".repeat(40));
        assert.equal(p.Alias.length, 40);
        const short = await added(keys().wlAdminA, newcomer({ ScreenName: `Zé${serial}`.slice(0, 3) }));
        assert.equal((await profileOf(short.PersonId)).Alias.length, 3);
        // A country without subdivisions needs no DivisionCode.
        const antarctic = await added(keys().wlAdminA, newcomer({ CountryCode: "aq", DivisionCode: undefined }));
        const aq = await profileOf(antarctic.PersonId);
        assert.equal(aq.CountryCode, "AQ");
        assert.equal(aq.DivisionCode, null);
        // The full form of a division is accepted too.
        const full = await added(keys().wlAdminA, newcomer({ CountryCode: "FR", DivisionCode: "fr-idf" }));
        assert.equal((await profileOf(full.PersonId)).DivisionCode, "FR-IDF");
        // Numbers for string fields are read as their text.
        const numeric = await added(keys().wlAdminA, newcomer({ FirstName: 5, ZipCode: 94107 }));
        assert.equal((await profileOf(numeric.PersonId)).FirstName, "5");
        assert.equal((await storedPerson(numeric.PersonId)).zip_code, "94107");
        // Field names in any case.
        const lower = newcomer();
        const renamed = Object.fromEntries(Object.entries(lower).map(([k, v]) => [k.toLowerCase(), v]));
        await added(keys().wlAdminA, renamed);
      });

      test("one request with several faults in the values names every faulty field", async () => {
        const before = await countPeople();
        const r = await addProfile(
          keys().wlAdminA,
          newcomer({
            FirstName: "   ",
            ScreenName: "a!",
            Email: "nobody",
            Password: "short",
            Language: "xx",
            CountryCode: "ZZ",
            Phone: "14155552671",
          }),
        );
        assertRefused(r, 400, ["FirstName", "ScreenName", "Email", "Password", "Language", "CountryCode", "Phone"]);
        const division = await addProfile(
          keys().wlAdminA,
          newcomer({ DivisionCode: "FR-75", WhiteLabelSiteId: population.siteA, IPAddress: "nope" }),
        );
        assertRefused(division, 400, ["DivisionCode", "IPAddress"]);
        assert.equal(await countPeople(), before);
      });

      test("validation runs in two stages, each naming every fault it finds: shape first, then content", async () => {
        const before = await countPeople();
        const body = newcomer({
          LastName: "y".repeat(41),
          ScreenName: "a!",
          Password: "short",
          Language: "xx",
          Phone: "+4402079460000",
        });
        delete body.FirstName;
        // Shape: presence, types and lengths. The content of the other fields is not judged yet.
        const shape = await addProfile(keys().wlAdminA, body);
        assertRefused(shape, 400, ["FirstName", "LastName"]);
        // With the shape right, every content fault is named.
        const content = await addProfile(keys().wlAdminA, { ...body, FirstName: "Ann", LastName: "Lee" });
        assertRefused(content, 400, ["ScreenName", "Password", "Language", "Phone"]);
        assert.equal(await countPeople(), before);
      });

      test("a taken email or screen name, in any case, is a conflict that reveals no one", async () => {
        const first = await added(keys().wlAdminB, newcomer({ Email: "taken@example.org", ScreenName: "Taken Name" }));
        const before = await countPeople();
        for (const server of ["WL", "GEO"] as const) {
          const email = await addProfile(keys().wlAdminA, newcomer({ Email: " TAKEN@Example.Org " }), server);
          assertRefused(email, 409, ["Email"]);
          assert.equal(errorsOf(email)[0]?.ErrorCode, "1201");
          assert.deepEqual(errorsOf(email)[0]?.Meta, {}, "no PersonId of another site's customer");
          assert.deepEqual(email.json.ResponseStatus.Meta, {});
          assert.equal(email.text.includes(String(first.PersonId)), false);
          const alias = await addProfile(keys().wlAdminA, newcomer({ ScreenName: "tAKEN nAME" }), server);
          assertRefused(alias, 409, ["ScreenName"]);
          assert.equal(errorsOf(alias)[0]?.ErrorCode, "1201");
          assert.deepEqual(errorsOf(alias)[0]?.Meta, {});
        }
        // An operator's email (created without a screen name) is taken too.
        const operator = await addProfile(keys().wlAdminA, newcomer({ Email: "PersonB@example.com" }));
        assertRefused(operator, 409, ["Email"]);
        assert.deepEqual(errorsOf(operator)[0]?.Meta, {});
        assert.equal(await countPeople(), before);
      });

      test("concurrent sign-ups with one email or one screen name: one succeeds, the others conflict (never 500)", async () => {
        // A double-submitted sign-up form. Several rounds, as the check-then-insert race does not lose every time.
        const before = await countPeople();
        const rounds = 10;
        for (let round = 0; round < rounds; round++) {
          const field = round % 2 === 0 ? "Email" : "ScreenName";
          const clash = (i: number) =>
            field === "Email"
              ? { Email: i % 2 === 0 ? `race${round}@example.org` : `RACE${round}@Example.org` }
              : { ScreenName: i % 2 === 0 ? `Racer ${round}` : `RACER ${round}` };
          const answers = await Promise.all(
            Array.from({ length: 8 }, (_, i) => addProfile(keys().wlAdminA, newcomer(clash(i)))),
          );
          assert.deepEqual(
            answers.map((r) => r.status).sort(),
            [200, 409, 409, 409, 409, 409, 409, 409],
            `round ${round} (${field}):\n${answers.map((r) => r.text).join("\n")}`,
          );
          for (const r of answers.filter((r) => r.status === 409)) {
            assert.deepEqual(fieldsOf(r), [field]);
            assert.deepEqual(errorsOf(r)[0]?.Meta, {});
          }
        }
        assert.equal(await countPeople(), before + rounds);
      });

      test("the password is stored only as a scrypt hash", async () => {
        const password = "Tr0ub4dour&3-unique";
        const person = await added(keys().wlAdminA, newcomer({ Password: password }));
        const row = await service.storage.db
          .selectFrom("persons")
          .select(["password_hash", "csrf_hash", "user_token"])
          .where("id", "=", person.PersonId)
          .executeTakeFirstOrThrow();
        assert.ok(row.password_hash?.startsWith("scrypt$"), String(row.password_hash));
        assert.equal(row.password_hash?.includes(password), false);
        assert.equal(await verifyPassword(password, row.password_hash ?? ""), true);
        assert.equal(await verifyPassword(`${password}x`, row.password_hash ?? ""), false);
        const everything = JSON.stringify(await service.storage.db.selectFrom("persons").selectAll().execute());
        assert.equal(everything.includes(password), false, "the password is nowhere in clear");
        assert.equal(everything.includes(person.CSRF), false, "nor is the CSRF token");
        // Two people with one password get different hashes (salted).
        const twin = await added(keys().wlAdminA, newcomer({ Password: password }));
        assert.notEqual((await storedPerson(twin.PersonId)).password_hash, row.password_hash);
      });
    });

    describe("UpdateProfile", () => {
      let customerA: number;
      let customerAKey: string;
      let customerB: number;
      let customerBKey: string;

      before(async () => {
        customerA = (
          await added(
            keys().wlAdminA,
            newcomer({ FirstName: "Carla", LastName: "Ames", Phone: "+14155550100", City: "Oakland" }),
          )
        ).PersonId;
        customerAKey = await keyFor(customerA);
        customerB = (await added(keys().wlAdminB, newcomer({ FirstName: "Bert", LastName: "Brown" }))).PersonId;
        customerBKey = await keyFor(customerB);
        // First use of each key, so that later calls start no key session.
        assertOk(await getProfile(customerAKey));
        assertOk(await getProfile(customerBKey));
      });

      test("WL and GEO answer 501 for any valid key, and write nothing", async () => {
        const before = await storedProfile(customerA);
        for (const server of ["WL", "GEO"] as const) {
          for (const key of [
            keys().admin,
            keys().wlAdminA,
            keys().wlAdminB,
            keys().geoAdmin,
            keys().personA,
            customerAKey,
          ]) {
            for (const body of [{ PersonId: customerA, FirstName: "Changed" }, { FirstName: "Changed" }, {}]) {
              const r = await updateProfile(key, body, server);
              assert.equal(r.status, 501, `${server}: ${r.text}`);
              assert.equal(r.json.ResponseStatus.ErrorCode, "501");
              assert.equal(r.json.ResponseStatus.Message, "NotImplemented");
              assert.equal(errorsOf(r)[0]?.ErrorCode, "1005");
              assert.equal(r.json.Results, null);
            }
          }
          const expired = await updateProfile(keys().expired, { FirstName: "Changed" }, server);
          assert.equal(expired.status, 401, "the key is checked first");
          const none = await service.call(server, "PUT", "/General/UpdateProfile", { key: null, body: {} });
          assert.equal(none.status, 401);
        }
        assert.deepEqual(await storedProfile(customerA), before);
      });

      test("the person changes their own names; PersonId defaults to the caller", async () => {
        const r = await updateProfile(customerAKey, { FirstName: " Carlotta ", LastName: "Amesbury" });
        assertOk(r);
        assert.deepEqual(r.json.Results, [{ PersonId: customerA, CSRF: null, UserToken: null }]);
        const own = await getProfile(customerAKey);
        assertOk(own);
        assert.equal(own.json.Results[0].FirstName, "Carlotta");
        assert.equal(own.json.Results[0].LastName, "Amesbury");
        // The search sees the new names (their folded copies follow).
        assert.deepEqual(await searchIds({ FirstName: "CARLOTTA", LastName: "amesB" }, keys().wlAdminA), [customerA]);
        assert.deepEqual(await searchIds({ FirstName: "Carla" }, keys().wlAdminA), []);
        const explicit = await updateProfile(customerAKey, { PersonId: customerA, LastName: "Ames" });
        assertOk(explicit);
        assert.equal((await profileOf(customerA)).LastName, "Ames");
      });

      test("limits: names 1 to 40, Street and Street2 80, City 40, DivisionCode 20, ZipCode 16", async () => {
        const before = await storedProfile(customerA);
        const faults: [Record<string, unknown>, string][] = [
          [{ FirstName: "x".repeat(41) }, "FirstName"],
          [{ FirstName: "" }, "FirstName"],
          [{ FirstName: "   " }, "FirstName"],
          [{ LastName: "y".repeat(41) }, "LastName"],
          [{ LastName: "" }, "LastName"],
          [{ Street: "s".repeat(81) }, "Street"],
          [{ Street2: "s".repeat(81) }, "Street2"],
          [{ City: "c".repeat(41) }, "City"],
          [{ DivisionCode: "d".repeat(21) }, "DivisionCode"],
          [{ ZipCode: "9".repeat(17) }, "ZipCode"],
          [{ CountryCode: "ZZ" }, "CountryCode"],
          [{ CountryCode: "USA" }, "CountryCode"],
          [{ CountryCode: "" }, "CountryCode"],
          [{ DivisionCode: "NOPE" }, "DivisionCode"],
          [{ Phone: "+4402079460000" }, "Phone"],
          [{ Phone: "14155552671" }, "Phone"],
          [{ Phone: "" }, "Phone"],
          [{ FirstName: false }, "FirstName"],
          [{ IsClearPhone: "maybe" }, "IsClearPhone"],
          [{ PersonId: "me" }, "PersonId"],
        ];
        for (const [fault, field] of faults) {
          const r = await updateProfile(customerAKey, fault);
          assertRefused(r, 400, [field], JSON.stringify(fault));
        }
        const several = await updateProfile(customerAKey, {
          FirstName: "",
          CountryCode: "ZZ",
          Phone: "+1415",
          LastName: "Valid",
        });
        assertRefused(several, 400, ["FirstName", "CountryCode", "Phone"]);
        assert.deepEqual(await storedProfile(customerA), before, "refused changes write nothing");

        const edge = await updateProfile(customerAKey, {
          FirstName: "F".repeat(40),
          LastName: "L",
          Street: "s".repeat(80),
          Street2: "t".repeat(80),
          City: "c".repeat(40),
          ZipCode: "9".repeat(16),
        });
        assertOk(edge);
        const row = await storedPerson(customerA);
        assert.equal(row.first_name, "F".repeat(40));
        assert.equal(row.last_name, "L");
        assert.equal(row.street, "s".repeat(80));
        assert.equal(row.street2, "t".repeat(80));
        assert.equal(row.city, "c".repeat(40));
        assert.equal(row.zip_code, "9".repeat(16));
        assertOk(await updateProfile(customerAKey, { FirstName: "Carla", LastName: "Ames" }));
      });

      test("an empty string clears the address fields; null or omitted keeps them", async () => {
        assertOk(
          await updateProfile(customerAKey, {
            Street: "1 Main St",
            Street2: "Apt 2",
            City: "Oakland",
            DivisionCode: "US-NY",
            ZipCode: "94607",
          }),
        );
        const set = await storedPerson(customerA);
        assert.deepEqual(
          [set.street, set.street2, set.city, set.division_code, set.zip_code],
          ["1 Main St", "Apt 2", "Oakland", "US-NY", "94607"],
        );
        assertOk(
          await updateProfile(customerAKey, {
            Street: null,
            Street2: null,
            City: null,
            DivisionCode: null,
            ZipCode: null,
            FirstName: null,
            LastName: null,
            Phone: null,
            CountryCode: null,
          }),
        );
        const kept = await storedPerson(customerA);
        assert.deepEqual(
          [kept.street, kept.street2, kept.city, kept.division_code, kept.zip_code, kept.first_name, kept.phone],
          ["1 Main St", "Apt 2", "Oakland", "US-NY", "94607", "Carla", "+14155550100"],
        );
        for (const field of ["Street", "Street2", "City", "ZipCode"]) {
          assertOk(await updateProfile(customerAKey, { [field]: "" }), field);
        }
        assertOk(await updateProfile(customerAKey, { DivisionCode: "" }));
        const cleared = await storedPerson(customerA);
        assert.deepEqual(
          [cleared.street, cleared.street2, cleared.city, cleared.division_code, cleared.zip_code],
          [null, null, null, null, null],
        );
        assert.equal((await profileOf(customerA)).DivisionCode, null);
        assert.equal(cleared.first_name, "Carla", "names are kept");
        // A division alone is checked against the stored country.
        assertOk(await updateProfile(customerAKey, { DivisionCode: "ca" }));
        assert.equal((await profileOf(customerA)).DivisionCode, "US-CA");
        assertRefused(await updateProfile(customerAKey, { DivisionCode: "IDF" }), 400, ["DivisionCode"]);
      });

      test("phone: a new number is unverified, the same keeps its verification, IsClearPhone removes it", async () => {
        assertOk(await updateProfile(customerAKey, { Phone: "+14155550111" }));
        let p = await profileOf(customerA);
        assert.equal(p.Phone, "+14155550111");
        assert.equal(p.IsPhoneVerified, false);
        await setStored(customerA, { is_phone_verified: 1 });
        assert.equal((await profileOf(customerA)).IsPhoneVerified, true);

        assertOk(await updateProfile(customerAKey, { Phone: "+14155550111" }));
        p = await profileOf(customerA);
        assert.equal(p.IsPhoneVerified, true, "the same number keeps its verification");
        assertOk(await updateProfile(customerAKey, { FirstName: "Carla" }));
        assert.equal((await profileOf(customerA)).IsPhoneVerified, true, "other changes keep it too");

        assertOk(await updateProfile(customerAKey, { Phone: "+14155550112" }));
        p = await profileOf(customerA);
        assert.equal(p.Phone, "+14155550112");
        assert.equal(p.IsPhoneVerified, false, "a different number is unverified");

        await setStored(customerA, { is_phone_verified: 1 });
        const both = await updateProfile(customerAKey, { IsClearPhone: true, Phone: "+14155550113" });
        assert.equal(both.status, 400, both.text);
        assert.equal((await profileOf(customerA)).Phone, "+14155550112");

        assertOk(await updateProfile(customerAKey, { IsClearPhone: false }));
        assert.equal((await profileOf(customerA)).Phone, "+14155550112", "IsClearPhone false changes nothing");
        assertOk(await updateProfile(customerAKey, { IsClearPhone: "true" }));
        p = await profileOf(customerA);
        assert.equal(p.Phone, null);
        assert.equal(p.IsPhoneVerified, false);
        assertOk(await updateProfile(customerAKey, { Phone: "+14155550100" }));
      });

      test("changing CountryCode needs a DivisionCode of the new country, or an empty one", async () => {
        assertOk(await updateProfile(customerAKey, { CountryCode: "US", DivisionCode: "CA" }));
        const before = await storedProfile(customerA);
        const stale = await updateProfile(customerAKey, { CountryCode: "FR" });
        assertRefused(stale, 400, ["DivisionCode"]);
        const wrong = await updateProfile(customerAKey, { CountryCode: "FR", DivisionCode: "CA" });
        assertRefused(wrong, 400, ["DivisionCode"]);
        const old = await updateProfile(customerAKey, { CountryCode: "FR", DivisionCode: "US-NY" });
        assertRefused(old, 400, ["DivisionCode"]);
        assert.deepEqual(await storedProfile(customerA), before);

        // The same country again keeps the division.
        assertOk(await updateProfile(customerAKey, { CountryCode: "us" }));
        assert.equal((await profileOf(customerA)).DivisionCode, "US-CA");

        assertOk(await updateProfile(customerAKey, { CountryCode: "fr", DivisionCode: "" }));
        let p = await profileOf(customerA);
        assert.equal(p.CountryCode, "FR");
        assert.equal(p.DivisionCode, null);

        assertOk(await updateProfile(customerAKey, { CountryCode: "US", DivisionCode: "NY" }));
        assertOk(await updateProfile(customerAKey, { CountryCode: "FR", DivisionCode: "IDF" }));
        p = await profileOf(customerA);
        assert.equal(p.CountryCode, "FR");
        assert.equal(p.DivisionCode, "FR-IDF");
        assertOk(await updateProfile(customerAKey, { CountryCode: "US", DivisionCode: "US-CA" }));
        assert.equal((await profileOf(customerA)).DivisionCode, "US-CA");
      });

      test("Email, Password, ScreenName and the other fixed fields are refused by name", async () => {
        const before = await storedProfile(customerA);
        const fixed: [string, unknown][] = [
          ["Email", "new@example.org"],
          ["Password", "a new password"],
          ["ScreenName", "New Name"],
          ["Alias", "New Name"],
          ["Language", "fra"],
          ["WhiteLabelSiteId", population.siteB],
          ["GeoSite", "Geo Europe"],
        ];
        for (const [field, value] of fixed) {
          for (const key of [customerAKey, keys().admin]) {
            const r = await updateProfile(key, { PersonId: customerA, FirstName: "Changed", [field]: value });
            assertRefused(r, 400, [field], field);
            assert.equal(errorsOf(r)[0]?.ErrorCode, "1101");
          }
        }
        const lowerCase = await updateProfile(customerAKey, { email: "new@example.org", FirstName: "Changed" });
        assertRefused(lowerCase, 400, ["Email"], "names in any case");
        const together = await updateProfile(customerAKey, { Email: "x@example.org", Password: "12345678" });
        assertRefused(together, 400, ["Email", "Password"]);
        assert.deepEqual(await storedProfile(customerA), before, "nothing changed");
      });

      test("who may change whose profile", async () => {
        const change = (key: string, personId: number, firstName: string) =>
          updateProfile(key, { PersonId: personId, FirstName: firstName });
        const firstNameOf = async (id: number) => (await storedPerson(id)).first_name;

        assertOk(await change(keys().wlAdminA, customerA, "ByWlA"));
        assert.equal(await firstNameOf(customerA), "ByWlA");
        assertOk(await change(keys().geoAdmin, customerA, "ByGeo"), "site A lies in the geo-site");
        assert.equal(await firstNameOf(customerA), "ByGeo");
        assertOk(await change(keys().admin, customerA, "ByAdmin"));
        assertOk(await change(keys().admin, customerB, "ByAdmin"));
        assertOk(await change(keys().wlAdminB, customerB, "ByWlB"));
        assert.equal(await firstNameOf(customerB), "ByWlB");

        const denied: [string, string, number][] = [
          ["WL admin B on a site-A customer", keys().wlAdminB, customerA],
          ["WL admin A on a site-B customer", keys().wlAdminA, customerB],
          ["geo admin on a site-B customer", keys().geoAdmin, customerB],
          ["person A on person B", keys().personA, population.people.personB],
          ["customer A on customer B", customerAKey, customerB],
          ["customer B on its site's admin", customerBKey, population.people.wlAdminB],
          ["WL admin A on the service admin", keys().wlAdminA, population.people.admin],
          ["WL admin A on the geo admin", keys().wlAdminA, population.people.geoAdmin],
        ];
        for (const [label, key, personId] of denied) {
          const before = await storedProfile(personId);
          const r = await change(key, personId, "Intruder");
          assertRefused(r, 403, ["PersonId"], label);
          assert.equal(errorsOf(r)[0]?.ErrorCode, "1002");
          assert.deepEqual(await storedProfile(personId), before, label);
        }
        const unknown = await change(keys().admin, 987_654_321, "Nobody");
        assertRefused(unknown, 404, ["PersonId"]);
        assert.equal(errorsOf(unknown)[0]?.ErrorCode, "2013");
        assertOk(await change(keys().personA, population.people.personA, "personA"), "oneself by id");
        assertOk(await change(keys().admin, customerA, "Carla"));
        assertOk(await change(keys().admin, customerB, "Bert"));
      });

      test("a request that changes nothing succeeds and writes nothing", async () => {
        const before = await storedProfile(customerA);
        const current = await storedPerson(customerA);
        for (const body of [
          {},
          { PersonId: customerA },
          { FirstName: current.first_name, LastName: current.last_name },
          { Phone: current.phone, CountryCode: current.country_code },
          { UnknownField: "ignored" },
        ]) {
          const r = await updateProfile(customerAKey, body);
          assertOk(r, JSON.stringify(body));
          assert.deepEqual(r.json.Results, [{ PersonId: customerA, CSRF: null, UserToken: null }]);
        }
        assert.deepEqual(await storedProfile(customerA), before);
      });
    });

    describe("GetProfile", () => {
      let alice: { PersonId: number; UserToken: string };
      let aliceKey: string;

      before(async () => {
        alice = await added(
          keys().wlAdminA,
          newcomer({
            FirstName: "Alice",
            LastName: "Private",
            ScreenName: "alice liddell",
            Email: "alice.secret@example.org",
            Phone: "+14155550199",
          }),
        );
        aliceKey = await keyFor(alice.PersonId);
      });

      test("without PersonId: the caller's own private profile, without UserToken", async () => {
        for (const server of ["WL", "GEN", "GEO"] as const) {
          const r = await getProfile(aliceKey, {}, server);
          assertOk(r);
          const p = r.json.Results[0];
          assert.equal(p.Id, alice.PersonId);
          assert.equal(p.Email, "alice.secret@example.org");
          assert.equal(p.FirstName, "Alice");
          assert.equal(p.Phone, "+14155550199");
          assert.equal(p.WhiteLabelSiteId, population.siteA);
          assert.equal(p.GeoSite, "Geo Europe");
          assert.equal(p.UserToken, null, "the person does not need the token");
          assert.deepEqual(p.ApprovedAccounts, []);
          assert.equal(p.IsManager, false);
          assert.equal(p.IsInvestor, false);
          assert.equal("Icon" in p, false);
        }
        const operator = await getProfile(keys().personB, {}, "WL");
        assert.equal(operator.json.Results[0].Id, population.people.personB);
        assert.equal(operator.json.Results[0].Email, "personb@example.com");
      });

      test("another person sees only the public fields", async () => {
        for (const server of ["WL", "GEN", "GEO"] as const) {
          for (const key of [keys().personA, keys().personB]) {
            const r = await getProfile(key, { PersonId: String(alice.PersonId) }, server);
            assertOk(r);
            const p = r.json.Results[0];
            assertPublicView(p, server);
            assert.equal(p.Id, alice.PersonId);
            assert.equal(p.Alias, "alice liddell");
            assert.equal(p.IsAlive, true);
            assert.equal(r.text.includes("alice.secret"), false, "the email never appears");
            assert.equal(r.text.includes("Private"), false, "nor the last name");
            assert.equal(r.text.includes("4155550199"), false, "nor the phone");
            assert.equal(r.text.includes(alice.UserToken), false, "nor the token");
          }
        }
      });

      test("the site's admins get the private view with UserToken; another site's admin the public view", async () => {
        for (const [label, key] of [
          ["WL admin A", keys().wlAdminA],
          ["geo admin", keys().geoAdmin],
          ["service admin", keys().admin],
        ] as const) {
          const p = await profileOf(alice.PersonId, key, "WL");
          assert.equal(p.Email, "alice.secret@example.org", label);
          assert.equal(p.LastName, "Private", label);
          assert.equal(p.UserToken, alice.UserToken, label);
        }
        const r = await getProfile(keys().wlAdminB, { PersonId: String(alice.PersonId) }, "WL");
        assertOk(r);
        assertPublicView(r.json.Results[0], "WL admin B");
        assert.equal(r.text.includes("alice.secret"), false);
        // The geo admin does not administer site B's members.
        const b = await getProfile(keys().geoAdmin, { PersonId: String(population.people.personB) }, "GEO");
        assertPublicView(b.json.Results[0], "geo admin on site B");
        assert.equal(b.text.includes("personb@example.com"), false);
      });

      test("IncludeIconInResponse: an SVG data URI on GEN and GEO, never on WL", async () => {
        for (const server of ["GEN", "GEO"] as const) {
          for (const flag of ["true", "True", true]) {
            const r = await service.call(server, "GET", "/General/GetProfile", {
              key: keys().personA,
              query: { PersonId: String(alice.PersonId), IncludeIconInResponse: String(flag) },
            });
            assertOk(r);
            const icon: string = r.json.Results[0].Icon;
            assert.ok(icon.startsWith("data:image/svg+xml;base64,"), icon);
            assert.match(decodeIcon(icon), /^<svg[\s\S]*>AL<\/text><\/svg>$/, "initials of the screen name");
          }
          const off = await getProfile(keys().personA, { PersonId: String(alice.PersonId) }, server);
          assert.equal("Icon" in off.json.Results[0], false, `no Icon without the flag on ${server}`);
          const no = await getProfile(
            keys().personA,
            { PersonId: String(alice.PersonId), IncludeIconInResponse: "false" },
            server,
          );
          assert.equal("Icon" in no.json.Results[0], false);
          // Someone without a screen name: the real name's initials are shown only to those entitled.
          const operator = await getProfile(
            keys().personA,
            { PersonId: String(population.people.personB), IncludeIconInResponse: "true" },
            server,
          );
          const svg = decodeIcon(operator.json.Results[0].Icon);
          assert.equal(svg.includes(">PT<"), false, "no initials of personB Tester for a stranger");
          const entitled = await getProfile(
            keys().wlAdminB,
            { PersonId: String(population.people.personB), IncludeIconInResponse: "true" },
            server,
          );
          assert.ok(decodeIcon(entitled.json.Results[0].Icon).includes(">PT<"));
        }
        const wl = await getProfile(
          keys().personA,
          { PersonId: String(alice.PersonId), IncludeIconInResponse: "true" },
          "WL",
        );
        assertOk(wl);
        assert.equal("Icon" in wl.json.Results[0], false, "no Icon on WL");
      });

      test("an unknown PersonId is 404", async () => {
        for (const server of ["WL", "GEN", "GEO"] as const) {
          const r = await getProfile(keys().admin, { PersonId: "987654321" }, server);
          assertRefused(r, 404, ["PersonId"]);
          assert.equal(errorsOf(r)[0]?.ErrorCode, "2013");
          const bad = await getProfile(keys().admin, { PersonId: "abc" }, server);
          assertRefused(bad, 400, ["PersonId"]);
        }
        const expired = await getProfile(keys().expired);
        assert.equal(expired.status, 401);
      });

      test("support contacts come from the white-label site, else its geo-site; private only", async () => {
        const runtime = service.app.runtime;
        const geo = await createSite(runtime, {
          kind: "geo",
          name: "Geo Support",
          domain: "support-geo.example.net",
          supportCompanyName: "Geo Help Ltd",
          supportSiteUrl: "https://help.geo.example.net",
          supportEmail: "Help@Geo.Example.net",
        });
        const branded = await createSite(runtime, {
          kind: "whitelabel",
          name: "Branded",
          geoSiteId: geo.id,
          supportCompanyName: "Brand Care",
          supportSiteUrl: "https://care.brand.example",
          supportEmail: "care@brand.example",
        });
        const plain = await createSite(runtime, { kind: "whitelabel", name: "Plain", geoSiteId: geo.id });
        const person = async (siteId: number) =>
          (
            await createPerson(runtime, {
              email: `support-${++serial}@example.org`,
              firstName: "Sue",
              lastName: "Port",
              role: "person",
              siteId,
            })
          ).personId;
        const expectations: [number, [string, string, string] | [null, null, null]][] = [
          [await person(branded.id), ["Brand Care", "https://care.brand.example", "care@brand.example"]],
          [await person(plain.id), ["Geo Help Ltd", "https://help.geo.example.net", "help@geo.example.net"]],
          [await person(geo.id), ["Geo Help Ltd", "https://help.geo.example.net", "help@geo.example.net"]],
          [population.people.personA, [null, null, null]],
          [population.people.personB, [null, null, null]],
        ];
        for (const [id, expected] of expectations) {
          const p = await profileOf(id);
          assert.deepEqual([p.SupportCompanyName, p.SupportSiteURL, p.SupportEmail], expected, String(id));
          const stranger = await getProfile(keys().personA, { PersonId: String(id) });
          if (id !== population.people.personA) assertPublicView(stranger.json.Results[0], `support of ${id}`);
        }
        const own = await getProfile(await keyFor(expectations[0]?.[0] as number));
        assert.equal(own.json.Results[0].SupportCompanyName, "Brand Care", "the person sees their site's support");
      });
    });

    describe("SearchProfiles", () => {
      test("administrators only; each sees its own people", async () => {
        const inA = await added(keys().wlAdminA, newcomer({ FirstName: "Scope" }));
        const inB = await added(keys().wlAdminB, newcomer({ FirstName: "Scope" }));
        const inGeo = await added(keys().geoAdmin, newcomer({ FirstName: "Scope" }), "GEO");
        for (const server of ["WL", "GEN", "GEO"] as const) {
          for (const key of [keys().personA, keys().personB]) {
            const r = await service.call(server, "GET", "/General/SearchProfiles", { key });
            assertRefused(r, 403, [""], `a person on ${server}`);
            assert.equal(errorsOf(r)[0]?.ErrorCode, "1002");
          }
          const expired = await service.call(server, "GET", "/General/SearchProfiles", { key: keys().expired });
          assert.equal(expired.status, 401);
        }
        const all = await searchIds({});
        const stored = await service.storage.db.selectFrom("persons").select("id").orderBy("id").execute();
        assert.deepEqual(
          all,
          stored.map((row) => row.id),
          "a service admin sees everyone, by id",
        );
        const siteA = await searchIds({}, keys().wlAdminA, "WL");
        assert.ok(siteA.length < stored.length);
        for (const id of siteA) assert.equal((await storedPerson(id)).white_label_site_id, population.siteA);
        assert.ok(siteA.includes(inA.PersonId) && siteA.includes(population.people.wlAdminA));
        assert.ok(!siteA.includes(inB.PersonId) && !siteA.includes(inGeo.PersonId));

        const geo = await searchIds({}, keys().geoAdmin, "GEO");
        for (const id of [inA.PersonId, inGeo.PersonId, population.people.personA, population.people.geoAdmin]) {
          assert.ok(geo.includes(id), `geo admin sees ${id}`);
        }
        for (const id of [inB.PersonId, population.people.personB, population.people.admin]) {
          assert.ok(!geo.includes(id), `geo admin does not see ${id}`);
        }
        assert.deepEqual(await searchIds({ FirstName: "scope" }, keys().geoAdmin), [inA.PersonId, inGeo.PersonId]);
        assert.deepEqual(await searchIds({ FirstName: "scope" }, keys().wlAdminB), [inB.PersonId]);
        assert.deepEqual(await searchIds({ FirstName: "scope" }), [inA.PersonId, inB.PersonId, inGeo.PersonId]);

        // Naming a white-label site the caller does not administer.
        for (const [key, site] of [
          [keys().wlAdminA, population.siteB],
          [keys().wlAdminB, population.siteA],
          [keys().geoAdmin, population.siteB],
        ] as const) {
          const r = await service.call("GEN", "GET", "/General/SearchProfiles", {
            key,
            query: { WhiteLabelSiteId: String(site) },
          });
          assertRefused(r, 403, ["WhiteLabelSiteId"]);
        }
        assert.deepEqual(
          await searchIds({ WhiteLabelSiteId: String(population.siteA), FirstName: "scope" }, keys().geoAdmin),
          [inA.PersonId],
        );
        assert.deepEqual(
          await searchIds({ WhiteLabelSiteId: String(population.siteA) }, keys().wlAdminA),
          siteA,
          "one's own site",
        );
        // The records are the private view, with UserToken for administrators.
        const r = await service.call("WL", "GET", "/General/SearchProfiles", {
          key: keys().wlAdminA,
          query: { PersonId: String(inA.PersonId) },
        });
        assertOk(r);
        assert.equal(r.json.Results[0].UserToken, inA.UserToken);
        assert.equal(r.json.Results[0].FirstName, "Scope");
        assert.equal("Icon" in r.json.Results[0], false);
        const withIcon = await service.call("GEO", "GET", "/General/SearchProfiles", {
          key: keys().geoAdmin,
          query: { PersonId: String(inA.PersonId), IncludeIconInResponse: "true" },
        });
        assert.ok(withIcon.json.Results[0].Icon.startsWith("data:image/svg+xml;base64,"));
        const wlIcon = await service.call("WL", "GET", "/General/SearchProfiles", {
          key: keys().wlAdminA,
          query: { PersonId: String(inA.PersonId), IncludeIconInResponse: "true" },
        });
        assert.equal("Icon" in wlIcon.json.Results[0], false);
      });

      test("filters: partial and case-insensitive text, exact ids, verified phones, IsAlive", async () => {
        const runtime = service.app.runtime;
        const site = (await createSite(runtime, { kind: "whitelabel", name: "Filters" })).id;
        const add = async (extra: Record<string, unknown>) =>
          (await added(keys().admin, newcomer({ WhiteLabelSiteId: site, ...extra }))).PersonId;
        const zoe = await add({
          FirstName: "Zoë",
          LastName: "Quartz",
          Email: "zoe.q@Filters.Example",
          CountryCode: "US",
          DivisionCode: "NY",
          IPAddress: "203.0.113.77",
          Phone: "+12125550147",
        });
        const yann = await add({
          FirstName: "Yann",
          LastName: "ZOËLLER",
          Email: "yann@other.example",
          CountryCode: "FR",
          DivisionCode: "IDF",
          IPAddress: "2001:DB8::7",
          Phone: "+12125550148",
        });
        const xena = await add({
          FirstName: "Xena",
          LastName: "Warrior",
          Email: "xena@filters.example",
          CountryCode: "AQ",
          DivisionCode: undefined,
          IPAddress: "198.51.100.77",
        });
        const person = async (firstName: string, lastName: string) =>
          (
            await createPerson(runtime, {
              email: `wild-${++serial}@filters.example`,
              firstName,
              lastName,
              role: "person",
              siteId: site,
            })
          ).personId;
        const percent = await person("50%off", "a_b");
        const plainX = await person("50xoff", "axb");
        const backslash = await person("back\\slash", "plain");
        const everyone = [zoe, yann, xena, percent, plainX, backslash];
        const search = (query: Record<string, string>) => searchIds({ WhiteLabelSiteId: String(site), ...query });

        assert.deepEqual(await search({}), everyone);
        assert.deepEqual(await search({ FirstName: "ZOË" }), [zoe]);
        assert.deepEqual(await search({ FirstName: "oë" }), [zoe]);
        assert.deepEqual(await search({ FirstName: "a" }), [yann, xena, backslash]);
        assert.deepEqual(await search({ LastName: "zoë" }), [yann]);
        assert.deepEqual(await search({ LastName: "R" }), [zoe, yann, xena]);
        assert.deepEqual(await search({ FirstName: "a", LastName: "ior" }), [xena], "every filter applies");
        assert.deepEqual(await search({ Email: "FILTERS.example" }), [zoe, xena, percent, plainX, backslash]);
        assert.deepEqual(await search({ Email: "ZOE.Q@" }), [zoe]);
        assert.deepEqual(await search({ CountryCode: "us" }), [zoe]);
        assert.deepEqual(await search({ CountryCode: "Q" }), [xena]);
        assert.deepEqual(await search({ DivisionCode: "us-n" }), [zoe]);
        assert.deepEqual(await search({ DivisionCode: "idf" }), [yann]);
        assert.deepEqual(await search({ DivisionCode: "-" }), [zoe, yann]);
        assert.deepEqual(await search({ IPAddress: "203.0.113" }), [zoe]);
        assert.deepEqual(await search({ IPAddress: "db8::" }), [yann]);
        assert.deepEqual(await search({ IPAddress: ".77" }), [zoe, xena]);
        assert.deepEqual(await search({ FirstName: "nobody" }), []);

        // LIKE wildcards in a term match themselves only.
        assert.deepEqual(await search({ FirstName: "%" }), [percent]);
        assert.deepEqual(await search({ FirstName: "50%o" }), [percent]);
        assert.deepEqual(await search({ LastName: "_" }), [percent]);
        assert.deepEqual(await search({ LastName: "a_b" }), [percent]);
        assert.deepEqual(await search({ FirstName: "\\" }), [backslash]);
        assert.deepEqual(await search({ Email: "%" }), []);
        assert.deepEqual(await search({ Email: "_" }), []);

        // Phone matches verified numbers only.
        assert.deepEqual(await search({ Phone: "+1212555014" }), [], "both numbers are unverified");
        await setStored(zoe, { is_phone_verified: 1 });
        assert.deepEqual(await search({ Phone: "+1212555014" }), [zoe]);
        assert.deepEqual(await search({ Phone: "2125550147" }), [zoe]);
        assert.deepEqual(await search({ Phone: "2125550148" }), []);
        await setStored(yann, { is_phone_verified: 1 });
        assert.deepEqual(await search({ Phone: "555014" }), [zoe, yann]);

        // PersonId matches exactly.
        assert.deepEqual(await search({ PersonId: String(zoe) }), [zoe]);
        assert.deepEqual(await searchIds({ PersonId: String(zoe) }), [zoe]);
        assert.deepEqual(await search({ PersonId: String(population.people.personA) }), []);

        // IsAlive and IsEmailValidated.
        await setStored(xena, { is_alive: 0 });
        assert.deepEqual(await search({ IsAlive: "false" }), [xena]);
        assert.deepEqual(await search({ IsAlive: "true" }), [zoe, yann, percent, plainX, backslash]);
        assert.equal((await profileOf(xena)).IsAlive, false);
        assert.deepEqual(await search({ IsEmailValidated: "true" }), []);
        assert.deepEqual(await search({ IsEmailValidated: "false" }), everyone);

        const bad = await service.call("GEN", "GET", "/General/SearchProfiles", { query: { IsAlive: "perhaps" } });
        assertRefused(bad, 400, ["IsAlive"]);
      });

      test("a page walk with Limit never skips or repeats a row while people are added", async () => {
        const runtime = service.app.runtime;
        const site = (await createSite(runtime, { kind: "whitelabel", name: "Paged people" })).id;
        const original: number[] = [];
        const person = async (firstName: string) =>
          (
            await createPerson(runtime, {
              email: `paged-${++serial}@example.org`,
              firstName,
              lastName: "Paged",
              role: "person",
              siteId: site,
            })
          ).personId;
        for (let i = 0; i < 7; i++) original.push(await person(`Page${i}`));
        const seen: number[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const r: CallResult = await service.call("WL", "GET", "/General/SearchProfiles", {
            query: { WhiteLabelSiteId: String(site), Limit: "2", ...(cursor ? { Cursor: cursor } : {}) },
          });
          assertOk(r);
          assert.ok(r.json.Results.length <= 2);
          if (pages === 0) assert.equal(r.json.Pagination.prev_cursor, null);
          seen.push(...r.json.Results.map((p: { Id: number }) => p.Id));
          cursor = r.json.Pagination.next_cursor;
          pages++;
          await person(`Late${pages}`);
        } while (cursor);
        assert.equal(new Set(seen).size, seen.length, "no row repeats");
        for (const id of original) assert.ok(seen.includes(id), `row ${id} is reached`);
        assert.deepEqual(
          seen,
          [...seen].sort((a, b) => a - b),
          "ordered by person id",
        );
      });

      test("property: a name filter returns exactly the people whose name contains the term, in any case", async () => {
        const runtime = service.app.runtime;
        const letter = fc.constantFrom("a", "b", "A", "B", "é", "É", "z");
        const name = fc.string({ unit: letter, minLength: 1, maxLength: 6 });
        const term = fc.string({ unit: letter, minLength: 1, maxLength: 3 });
        const pick = fc.record({
          from: fc.nat(),
          start: fc.nat(),
          length: fc.integer({ min: 1, max: 3 }),
          upper: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        });
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.tuple(name, name), { minLength: 1, maxLength: 7 }),
            fc.array(term, { maxLength: 2 }),
            fc.array(pick, { minLength: 1, maxLength: 3 }),
            async (names, randomTerms, picks) => {
              const site = (await createSite(runtime, { kind: "whitelabel", name: `Property ${++run}` })).id;
              const people: { id: number; first: string; last: string }[] = [];
              for (const [first, last] of names) {
                const { personId } = await createPerson(runtime, {
                  email: `prop-${++serial}@example.org`,
                  firstName: first,
                  lastName: last,
                  role: "person",
                  siteId: site,
                });
                people.push({ id: personId, first, last });
              }
              // Substrings of the names in a random case, and terms that may match nothing.
              const picked = picks.map(({ from, start, length, upper }) => {
                const source = people[from % people.length] as { first: string; last: string };
                const whole = from % 2 === 0 ? source.first : source.last;
                const begin = start % whole.length;
                return [...whole.slice(begin, begin + length)]
                  .map((c, i) => (upper[i] ? c.toLocaleUpperCase() : c.toLocaleLowerCase()))
                  .join("");
              });
              for (const t of [...picked, ...randomTerms]) {
                const folded = t.toLocaleLowerCase();
                for (const [filter, field] of [
                  ["FirstName", "first"],
                  ["LastName", "last"],
                ] as const) {
                  const expected = people.filter((p) => p[field].toLocaleLowerCase().includes(folded)).map((p) => p.id);
                  const actual = await searchIds({ WhiteLabelSiteId: String(site), [filter]: t });
                  assert.deepEqual(actual, expected, `${filter} ${JSON.stringify(t)} in ${JSON.stringify(names)}`);
                }
              }
            },
          ),
          { numRuns: 15 },
        );
      });

      test("property: walking pages of any size while people are added neither skips nor repeats", async () => {
        const runtime = service.app.runtime;
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 0, max: 9 }),
            fc.integer({ min: 1, max: 5 }),
            fc.boolean(),
            fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 12, maxLength: 12 }),
            async (count, limit, filtered, insertsPerPage) => {
              const site = (await createSite(runtime, { kind: "whitelabel", name: `Walk ${++run}` })).id;
              const add = async (firstName: string) =>
                (
                  await createPerson(runtime, {
                    email: `walk-${++serial}@example.org`,
                    firstName,
                    lastName: "Walker",
                    role: "person",
                    siteId: site,
                  })
                ).personId;
              const original: number[] = [];
              for (let i = 0; i < count; i++) original.push(await add(i % 2 === 0 ? "Even" : "Odd"));
              const query = {
                WhiteLabelSiteId: String(site),
                Limit: String(limit),
                ...(filtered ? { FirstName: "EVEN" } : {}),
              };
              const expected = filtered ? original.filter((_, i) => i % 2 === 0) : original;
              const seen: number[] = [];
              let cursor: string | null = null;
              let page = 0;
              do {
                const r: CallResult = await service.call("GEN", "GET", "/General/SearchProfiles", {
                  query: { ...query, ...(cursor ? { Cursor: cursor } : {}) },
                });
                assertOk(r);
                assert.ok(r.json.Results.length <= limit);
                seen.push(...r.json.Results.map((p: { Id: number }) => p.Id));
                cursor = r.json.Pagination.next_cursor;
                // Inserts stop after a while, or a walk slower than the inserts would never end.
                for (let i = 0; i < (insertsPerPage[page] ?? 0); i++) {
                  await add(i % 2 === 0 ? "Even" : "Odd");
                }
                page++;
                assert.ok(page < 100, "the walk ends");
              } while (cursor);
              assert.equal(new Set(seen).size, seen.length, `no repeats: ${seen}`);
              const fromOriginal = seen.filter((id) => original.includes(id));
              assert.deepEqual(fromOriginal, expected, "every original row once, in order");
              assert.deepEqual(
                seen,
                [...seen].sort((a, b) => a - b),
              );
            },
          ),
          { numRuns: 20 },
        );
      });
    });

    describe("GetPhoneAlreadyExists", () => {
      const exists = (phone: string, key = keys().admin, server: Server = "WL") =>
        service.call(server, "GET", "/General/GetPhoneAlreadyExists", { key, query: { Phone: phone } });

      test("true only for a number someone holds verified", async () => {
        for (const server of ["WL", "GEO"] as const) {
          const r = await exists("+442079460123", keys().admin, server);
          assertOk(r);
          assert.deepEqual(r.json.Results, [false]);
        }
        const holder = await added(
          keys().wlAdminA,
          newcomer({ Phone: "+442079460123", CountryCode: "GB", DivisionCode: "LND" }),
        );
        for (const key of [keys().admin, keys().wlAdminA, keys().wlAdminB, keys().geoAdmin]) {
          for (const server of ["WL", "GEO"] as const) {
            const r = await exists("+442079460123", key, server);
            assertOk(r);
            assert.deepEqual(r.json.Results, [false], "held, but unverified");
          }
        }
        await setStored(holder.PersonId, { is_phone_verified: 1 });
        for (const key of [keys().admin, keys().wlAdminA, keys().wlAdminB, keys().geoAdmin]) {
          for (const server of ["WL", "GEO"] as const) {
            const r = await exists("+442079460123", key, server);
            assertOk(r);
            assert.deepEqual(r.json.Results, [true], "held and verified");
          }
        }
        assert.deepEqual((await exists("+442079460124")).json.Results, [false], "another number");
        await setStored(holder.PersonId, { is_phone_verified: 0 });
        assert.deepEqual((await exists("+442079460123")).json.Results, [false]);
      });

      test("the number must be strict E.164", async () => {
        for (const phone of [
          "+4402079460000",
          "00442079460000",
          "442079460000",
          "+44 20 7946 0000",
          "+1415",
          "+",
          "",
          "+19999999999",
        ]) {
          for (const server of ["WL", "GEO"] as const) {
            const r = await exists(phone, keys().admin, server);
            assertRefused(r, 400, ["Phone"], JSON.stringify(phone));
          }
        }
        const missing = await service.call("WL", "GET", "/General/GetPhoneAlreadyExists", {});
        assertRefused(missing, 400, ["Phone"]);
        assert.equal(errorsOf(missing)[0]?.ErrorCode, "1102");
      });

      test("administrators only", async () => {
        for (const server of ["WL", "GEO"] as const) {
          for (const key of [keys().personA, keys().personB]) {
            const r = await exists("+14155552671", key, server);
            assert.equal(r.status, 403, r.text);
            assert.equal(errorsOf(r)[0]?.ErrorCode, "1002");
          }
          assert.equal((await exists("+14155552671", keys().expired, server)).status, 401);
        }
        assert.equal((await exists("+14155552671", keys().admin, "GEN")).status, 404, "not on GEN");
      });
    });
  });
}
