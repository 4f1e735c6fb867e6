import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createSite } from "../../src/services/sites.js";
import {
  advanceClock as advanceServiceClock,
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  setClock as setServiceClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * KYC through HTTP on WL and GEO (docs/decisions.md "People, sites and KYC"):
 * GetKYCScore, UpdateKYCScore, GetKYCInfo and AddKYCInfo, for the customers
 * that AddProfile signs up on white-label sites and geo-sites.
 */

interface Customer {
  readonly personId: number;
  readonly userToken: string;
  readonly email: string;
}

type KycServer = "WL" | "GEO";
type KycOperation = "GetKYCScore" | "UpdateKYCScore" | "GetKYCInfo" | "AddKYCInfo";
const KYC_OPERATIONS: readonly KycOperation[] = ["GetKYCScore", "UpdateKYCScore", "GetKYCInfo", "AddKYCInfo"];

interface ErrorItem {
  readonly ErrorCode: string;
  readonly FieldName: string;
  readonly Message: string;
}

const errorsOf = (r: CallResult): ErrorItem[] => r.json?.ResponseStatus?.Errors ?? [];

/** A refusal with this status, whose first error names this field (and carries this code). */
function assertRefused(r: CallResult, status: number, field?: string, code?: string, label = ""): void {
  assert.equal(r.status, status, `${label} ${r.text}`);
  assert.equal(r.json.Results, null, label);
  const [first] = errorsOf(r);
  assert.ok(first, `${label}: an error entry`);
  if (field !== undefined) assert.equal(first.FieldName, field, `${label} ${r.text}`);
  if (code !== undefined) assert.equal(first.ErrorCode, code, `${label} ${r.text}`);
}

/** A complete, valid KYC submission. */
const submission = (userToken: string, overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  UserToken: userToken,
  FirstName: "Jane",
  LastName: "Doe",
  Email: "jane.doe@kyc-provider.example",
  Phone: "+447911123456",
  IsPhoneVerified: true,
  Street: "10 Downing Street",
  City: "London",
  Province: "Greater London",
  PostCode: "SW1A 2AA",
  Country: "GB",
  PhotoId1: "provider-doc-123",
  PhotoId1Title: "Passport",
  PhotoId2: "https://kyc.example/documents/456",
  PhotoId2Title: "Utility bill",
  ...overrides,
});

const REQUIRED_FIELDS = [
  "UserToken",
  "FirstName",
  "LastName",
  "Email",
  "Phone",
  "IsPhoneVerified",
  "Street",
  "City",
  "Province",
  "PostCode",
  "Country",
] as const;

for (const backend of BACKENDS) {
  describe(`KYC through HTTP (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let serial = 0;
    /** Site A (inside "Geo Europe"), site B (no geo-site), and a direct member of "Geo Europe". */
    let custA: Customer;
    let custA2: Customer;
    let custB: Customer;
    let custGeo: Customer;

    const setClock = (now: string) => setServiceClock(service, now);
    const advanceClock = (seconds: number) => advanceServiceClock(service, seconds);

    /** Signs up a customer through AddProfile with the caller's key. */
    const addCustomer = async (server: KycServer, key: string, extra: Record<string, unknown> = {}) => {
      const n = ++serial;
      const email = `kyc.customer${n}@example.com`;
      const r = await service.call(server, "POST", "/General/AddProfile", {
        key,
        body: {
          FirstName: "Kyc",
          LastName: `Customer${n}`,
          ScreenName: `kyc customer ${n}`,
          Email: email,
          Password: "correct horse battery staple",
          Language: "eng",
          CountryCode: "US",
          DivisionCode: "CA",
          ...extra,
        },
      });
      assert.equal(r.status, 200, r.text);
      const [added] = r.json.Results;
      assert.equal(typeof added.UserToken, "string");
      assert.ok(added.UserToken.length > 0);
      return { personId: added.PersonId as number, userToken: added.UserToken as string, email };
    };

    /** One KYC operation on a customer, naming them the way the server expects. */
    /** body: fields beyond the person; UpdateKYCScore sets a Score unless told otherwise. */
    const kyc = (op: KycOperation, server: KycServer, key: string | null, target: Customer, body?: object) => {
      switch (op) {
        case "GetKYCScore":
          return service.call(server, "GET", "/General/GetKYCScore", {
            key,
            query: server === "WL" ? { PersonId: String(target.personId) } : { UserToken: target.userToken },
          });
        case "UpdateKYCScore":
          return service.call(server, "PUT", "/General/UpdateKYCScore", {
            key,
            body: { UserToken: target.userToken, ...(body ?? { Score: 42 }) },
          });
        case "GetKYCInfo":
          return service.call(server, "GET", "/General/GetKYCInfo", { key, query: { UserToken: target.userToken } });
        case "AddKYCInfo":
          return service.call(server, "POST", "/General/AddKYCInfo", {
            key,
            body: submission(target.userToken, (body ?? {}) as Record<string, unknown>),
          });
      }
    };

    /** The customer's KYC score and info as the service admin reads them. */
    const kycState = async (target: Customer) => {
      const score = await kyc("GetKYCScore", "WL", population.keys.admin, target);
      const info = await kyc("GetKYCInfo", "WL", population.keys.admin, target);
      assert.equal(score.status, 200, score.text);
      assert.equal(info.status, 200, info.text);
      return { score: score.json.Results as unknown[], info: info.json.Results as unknown[] };
    };

    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
      // Sandbox time after the expired key's expiry, so it stays expired.
      await setClock("2027-04-01T10:00:00Z");
      custA = await addCustomer("WL", population.keys.wlAdminA);
      custA2 = await addCustomer("WL", population.keys.wlAdminA);
      custB = await addCustomer("WL", population.keys.wlAdminB);
      custGeo = await addCustomer("GEO", population.keys.geoAdmin, { GeoSite: "Geo Europe" });
    });
    after(() => service.close());

    test("GetKYCScore before any KYC answers an empty list; WL needs PersonId, GEO needs UserToken", async () => {
      const wl = await service.call("WL", "GET", "/General/GetKYCScore", {
        key: population.keys.wlAdminA,
        query: { PersonId: String(custA.personId) },
      });
      assert.equal(wl.status, 200, wl.text);
      assert.deepEqual(wl.json.Results, []);
      const geo = await service.call("GEO", "GET", "/General/GetKYCScore", {
        key: population.keys.geoAdmin,
        query: { UserToken: custGeo.userToken },
      });
      assert.equal(geo.status, 200, geo.text);
      assert.deepEqual(geo.json.Results, []);
      const info = await kyc("GetKYCInfo", "GEO", population.keys.geoAdmin, custGeo);
      assert.equal(info.status, 200, info.text);
      assert.deepEqual(info.json.Results, [], "nothing submitted yet");

      const wlWithoutPersonId = await service.call("WL", "GET", "/General/GetKYCScore", {
        key: population.keys.wlAdminA,
        query: { UserToken: custA.userToken },
      });
      assertRefused(wlWithoutPersonId, 400, "PersonId", "1102", "WL without PersonId");
      const geoWithoutUserToken = await service.call("GEO", "GET", "/General/GetKYCScore", {
        key: population.keys.geoAdmin,
        query: { PersonId: String(custGeo.personId) },
      });
      assertRefused(geoWithoutUserToken, 400, "UserToken", "1102", "GEO without UserToken");
      const neither = await service.call("GEO", "GET", "/General/GetKYCScore", { key: population.keys.geoAdmin });
      assertRefused(neither, 400, "UserToken", "1102", "GEO with neither");

      // Both naming the same person is fine on either server.
      for (const server of ["WL", "GEO"] as const) {
        const both = await service.call(server, "GET", "/General/GetKYCScore", {
          key: population.keys.wlAdminA,
          query: { PersonId: String(custA.personId), UserToken: custA.userToken },
        });
        assert.equal(both.status, 200, `${server} ${both.text}`);
        assert.deepEqual(both.json.Results, []);
      }
      assert.deepEqual(await kycState(custA), { score: [], info: [] }, "reading created nothing");
    });

    test("GetKYCScore with a PersonId and a UserToken of different people is a 400", async () => {
      for (const server of ["WL", "GEO"] as const) {
        const r = await service.call(server, "GET", "/General/GetKYCScore", {
          key: population.keys.wlAdminA,
          query: { PersonId: String(custA.personId), UserToken: custA2.userToken },
        });
        assert.equal(r.status, 400, `${server} ${r.text}`);
        assert.equal(errorsOf(r)[0]?.ErrorCode, "1101");
      }
    });

    test("UpdateKYCScore creates the record on the service clock; true stamps once, false clears", async () => {
      const person = await addCustomer("WL", population.keys.wlAdminA);
      await setClock("2027-04-02T09:00:00Z");
      const created = await kyc("UpdateKYCScore", "WL", population.keys.wlAdminA, person, { IsApproved: false });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.json.Results.length, 1);
      const record = created.json.Results[0];
      assert.equal(typeof record.Id, "number");
      assert.deepEqual(record, {
        Id: record.Id,
        PersonId: person.personId,
        Created: "2027-04-02T09:00:00.000Z",
        Approved: null,
        Started: "2027-04-02T09:00:00.000Z",
        Finished: null,
        RedirectedToKYCTimes: 0,
        Score: null,
      });

      const update = async (body: object) => {
        const r = await kyc("UpdateKYCScore", "WL", population.keys.wlAdminA, person, body);
        assert.equal(r.status, 200, r.text);
        const [score] = r.json.Results;
        // Created and Started never move.
        assert.equal(score.Id, record.Id);
        assert.equal(score.Created, "2027-04-02T09:00:00.000Z");
        assert.equal(score.Started, "2027-04-02T09:00:00.000Z");
        return score as { Finished: string | null; Approved: string | null; Score: number | null };
      };

      const t1 = await advanceClock(60);
      assert.equal((await update({ IsFinished: true })).Finished, t1);
      await advanceClock(60);
      assert.equal((await update({ IsFinished: true })).Finished, t1, "a repeated true keeps the first stamp");
      const scored = await update({ Score: 5 });
      assert.deepEqual([scored.Finished, scored.Score], [t1, 5], "omitted leaves it");
      assert.equal((await update({ IsFinished: false })).Finished, null, "false clears it");
      const t3 = await advanceClock(60);
      assert.equal((await update({ IsFinished: true })).Finished, t3, "stamped again after clearing");

      const t4 = await advanceClock(60);
      const approved = await update({ IsApproved: true });
      assert.equal(approved.Approved, t4);
      assert.equal(approved.Finished, t3, "IsApproved leaves Finished alone");
      await advanceClock(60);
      assert.equal((await update({ IsApproved: true })).Approved, t4, "a repeated true keeps the first stamp");
      const withdrawn = await update({ IsApproved: false });
      assert.equal(withdrawn.Approved, null, "false clears it");
      assert.equal(withdrawn.Finished, t3);

      const t6 = await advanceClock(60);
      const both = await update({ IsFinished: false, IsApproved: true, Score: 77 });
      assert.deepEqual([both.Finished, both.Approved, both.Score], [null, t6, 77]);

      // Every reader sees the same record.
      const wl = await kyc("GetKYCScore", "WL", population.keys.wlAdminA, person);
      const geo = await kyc("GetKYCScore", "GEO", population.keys.geoAdmin, person);
      assert.equal(wl.status, 200, wl.text);
      assert.equal(geo.status, 200, geo.text);
      assert.deepEqual(wl.json.Results, geo.json.Results);
      assert.deepEqual(wl.json.Results, [
        {
          Id: record.Id,
          PersonId: person.personId,
          Created: "2027-04-02T09:00:00.000Z",
          Approved: t6,
          Started: "2027-04-02T09:00:00.000Z",
          Finished: null,
          RedirectedToKYCTimes: 0,
          Score: 77,
        },
      ]);
      assert.deepEqual((await kycState(person)).info, [], "a score update submits no identity data");
    });

    test("UpdateKYCScore naming only the person creates the record and changes nothing else", async () => {
      const person = await addCustomer("WL", population.keys.wlAdminA);
      await setClock("2027-04-02T12:00:00Z");
      const created = await kyc("UpdateKYCScore", "WL", population.keys.wlAdminA, person, {});
      assert.equal(created.status, 200, created.text);
      const [record] = created.json.Results;
      assert.deepEqual(record, {
        Id: record.Id,
        PersonId: person.personId,
        Created: "2027-04-02T12:00:00.000Z",
        Approved: null,
        Started: "2027-04-02T12:00:00.000Z",
        Finished: null,
        RedirectedToKYCTimes: 0,
        Score: null,
      });
      await kyc("UpdateKYCScore", "WL", population.keys.wlAdminA, person, { IsFinished: true, Score: 60 });
      await advanceClock(60);
      const again = await kyc("UpdateKYCScore", "GEO", population.keys.geoAdmin, person, {
        IsFinished: null,
        IsApproved: null,
        Score: null,
      });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json.Results[0].Finished, "2027-04-02T12:00:00.000Z", "null leaves Finished");
      assert.equal(again.json.Results[0].Score, 60, "null leaves Score");
    });

    test("Score is 0 to 100; a numeric string is read as a number", async () => {
      const person = await addCustomer("GEO", population.keys.geoAdmin, { GeoSite: "Geo Europe" });
      const score = async (value: unknown) =>
        kyc("UpdateKYCScore", "GEO", population.keys.geoAdmin, person, { Score: value });
      for (const [value, expected] of [
        [0, 0],
        [100, 100],
        ["50", 50],
      ] as const) {
        const r = await score(value);
        assert.equal(r.status, 200, `${value} ${r.text}`);
        assert.equal(r.json.Results[0].Score, expected);
      }
      for (const value of [-1, 101, "101", 50.5, "fifty", true]) {
        const r = await score(value);
        assertRefused(r, 400, "Score", undefined, `Score ${JSON.stringify(value)}`);
      }
      const state = await kycState(person);
      assert.equal((state.score[0] as { Score: number }).Score, 50, "refusals change nothing");
    });

    test("AddKYCInfo names each missing required field", async () => {
      for (const field of REQUIRED_FIELDS) {
        const body = submission(custA2.userToken);
        delete body[field];
        const r = await service.call("WL", "POST", "/General/AddKYCInfo", { key: population.keys.wlAdminA, body });
        assertRefused(r, 400, field, "1102", `without ${field}`);
        assert.deepEqual(
          errorsOf(r).map((e) => e.FieldName),
          [field],
          `only ${field} is named`,
        );
      }
      // Blank text is as good as missing.
      for (const field of ["Street", "City", "Province", "PostCode"]) {
        const r = await kyc("AddKYCInfo", "WL", population.keys.wlAdminA, custA2, { [field]: "   " });
        assertRefused(r, 400, field, "1102", `blank ${field}`);
      }
      for (const field of ["FirstName", "LastName", "Email", "Phone", "Country"]) {
        const r = await kyc("AddKYCInfo", "WL", population.keys.wlAdminA, custA2, { [field]: "" });
        assertRefused(r, 400, field, undefined, `empty ${field}`);
      }
      const all = await service.call("GEO", "POST", "/General/AddKYCInfo", { key: population.keys.geoAdmin, body: {} });
      assert.equal(all.status, 400);
      assert.deepEqual(
        errorsOf(all)
          .map((e) => e.FieldName)
          .sort(),
        [...REQUIRED_FIELDS].sort(),
        "an empty body names every required field",
      );
      assert.deepEqual(await kycState(custA2), { score: [], info: [] }, "nothing was written");
    });

    test("AddKYCInfo refuses a bad Email, Phone or Country and overlong text; nothing is written", async () => {
      const cases: [string, unknown][] = [
        ["Email", "not-an-email"],
        ["Email", "jane@localhost"],
        ["Phone", "+4402079460000"], // trunk zero after the country code
        ["Phone", "447911123456"], // no plus
        ["Phone", "+44 7911 123456"], // spaces
        ["Phone", "+1555"], // too short to exist
        ["Country", "ZZ"],
        ["Country", "GBR"],
        ["IsPhoneVerified", "maybe"],
        ["FirstName", "x".repeat(41)],
        ["LastName", "x".repeat(41)],
        ["Street", "x".repeat(81)],
        ["City", "x".repeat(41)],
        ["Province", "x".repeat(41)],
        ["PostCode", "x".repeat(17)],
        ["PhotoId1", "x".repeat(501)],
        ["PhotoId1Title", "x".repeat(101)],
        ["PhotoId2", "x".repeat(501)],
        ["PhotoId2Title", "x".repeat(101)],
      ];
      for (const server of ["WL", "GEO"] as const) {
        for (const [field, value] of cases) {
          const r = await kyc("AddKYCInfo", server, population.keys.wlAdminA, custA2, { [field]: value });
          assertRefused(r, 400, field, undefined, `${server} ${field}=${JSON.stringify(value)}`);
        }
      }
      assert.deepEqual(await kycState(custA2), { score: [], info: [] }, "nothing was written");
    });

    test("the longest values are accepted", async () => {
      const person = await addCustomer("WL", population.keys.wlAdminA);
      const longest = {
        FirstName: "f".repeat(40),
        LastName: "l".repeat(40),
        Street: "s".repeat(80),
        City: "c".repeat(40),
        Province: "p".repeat(40),
        PostCode: "9".repeat(16),
        PhotoId1: "a".repeat(500),
        PhotoId1Title: "t".repeat(100),
        PhotoId2: "b".repeat(500),
        PhotoId2Title: "u".repeat(100),
      };
      const r = await kyc("AddKYCInfo", "WL", population.keys.wlAdminA, person, longest);
      assert.equal(r.status, 200, r.text);
      const [info] = (await kycState(person)).info as Record<string, unknown>[];
      for (const [field, value] of Object.entries(longest)) assert.equal(info?.[field], value, field);
    });

    test("a valid submission counts a round, and GetKYCInfo returns it as sent with the person's site", async () => {
      const person = await addCustomer("WL", population.keys.wlAdminA);
      await setClock("2027-04-03T08:00:00Z");
      const added = await kyc("AddKYCInfo", "WL", population.keys.wlAdminA, person);
      assert.equal(added.status, 200, added.text);
      const [score] = added.json.Results;
      assert.deepEqual(score, {
        Id: score.Id,
        PersonId: person.personId,
        Created: "2027-04-03T08:00:00.000Z",
        Approved: null,
        Started: "2027-04-03T08:00:00.000Z",
        Finished: null,
        RedirectedToKYCTimes: 1,
        Score: null,
      });
      const sent = submission(person.userToken);
      for (const [server, key] of [
        ["WL", population.keys.wlAdminA],
        ["GEO", population.keys.geoAdmin],
      ] as const) {
        const r = await kyc("GetKYCInfo", server, key, person);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.Results.length, 1);
        const [info] = r.json.Results;
        assert.equal(typeof info.Id, "number");
        const { UserToken: _token, ...fields } = sent;
        assert.deepEqual(info, {
          Id: info.Id,
          PersonId: person.personId,
          ...fields,
          WhiteLabelSiteId: population.siteA,
          GeoSite: "Geo Europe",
          // Site A has neither a support URL nor a domain: its geo-site's address stands in.
          SiteURL: "https://geo.example.com",
        });
        assert.equal(JSON.stringify(info).includes(person.userToken), false, "the token is not echoed");
      }
      const read = await kyc("GetKYCScore", "WL", population.keys.wlAdminA, person);
      assert.deepEqual(read.json.Results, [score]);
    });

    test("a second submission replaces the first whole and counts a second round", async () => {
      const person = await addCustomer("GEO", population.keys.geoAdmin, { GeoSite: "geo.example.com" });
      await setClock("2027-04-04T08:00:00Z");
      const first = await kyc("AddKYCInfo", "GEO", population.keys.geoAdmin, person);
      assert.equal(first.status, 200, first.text);
      await advanceClock(3600);
      const second = await service.call("GEO", "POST", "/General/AddKYCInfo", {
        key: population.keys.geoAdmin,
        body: {
          UserToken: person.userToken,
          FirstName: "Janet",
          LastName: "Doe-Smith",
          Email: "janet@another-provider.example",
          Phone: "+14155552671",
          IsPhoneVerified: false,
          Street: "1 Market Street",
          City: "San Francisco",
          Province: "California",
          PostCode: "94105",
          Country: "US",
          PhotoId1: "provider-doc-789",
          PhotoId1Title: "Driving licence",
        },
      });
      assert.equal(second.status, 200, second.text);
      const [score] = second.json.Results;
      assert.equal(score.RedirectedToKYCTimes, 2);
      assert.equal(score.Created, "2027-04-04T08:00:00.000Z");
      assert.equal(score.Started, "2027-04-04T08:00:00.000Z", "started at the first submission");
      const info = await kyc("GetKYCInfo", "GEO", population.keys.geoAdmin, person);
      assert.equal(info.status, 200, info.text);
      assert.equal(info.json.Results.length, 1, "one record, replaced");
      const [record] = info.json.Results;
      assert.deepEqual(record, {
        Id: record.Id,
        PersonId: person.personId,
        FirstName: "Janet",
        LastName: "Doe-Smith",
        Email: "janet@another-provider.example",
        Phone: "+14155552671",
        IsPhoneVerified: false,
        Street: "1 Market Street",
        City: "San Francisco",
        Province: "California",
        PostCode: "94105",
        Country: "US",
        PhotoId1: "provider-doc-789",
        PhotoId1Title: "Driving licence",
        PhotoId2: null,
        PhotoId2Title: null,
        WhiteLabelSiteId: null,
        GeoSite: "Geo Europe",
        SiteURL: "https://geo.example.com",
      });
    });

    test("a score update before the first submission keeps Started; the submission counts the first round", async () => {
      const person = await addCustomer("WL", population.keys.wlAdminA);
      await setClock("2027-04-05T08:00:00Z");
      await kyc("UpdateKYCScore", "WL", population.keys.wlAdminA, person, { Score: 10 });
      await advanceClock(600);
      const added = await kyc("AddKYCInfo", "WL", population.keys.wlAdminA, person);
      assert.equal(added.status, 200, added.text);
      const [score] = added.json.Results;
      assert.equal(score.Started, "2027-04-05T08:00:00.000Z");
      assert.equal(score.RedirectedToKYCTimes, 1);
      assert.equal(score.Score, 10, "a submission leaves the score alone");
    });

    test("GeoSite and SiteURL follow the person's site", async () => {
      const admin = population.keys.admin;
      const siteC = await createSite(service.app.runtime, {
        kind: "whitelabel",
        name: "Site C",
        domain: "c.example.com",
        supportSiteUrl: "https://help.c.example.com/kyc",
      });
      const siteD = await createSite(service.app.runtime, {
        kind: "whitelabel",
        name: "Site D",
        domain: "D.Example.com",
      });
      const onC = await addCustomer("WL", admin, { WhiteLabelSiteId: siteC.id, IPAddress: "203.0.113.9" });
      const onD = await addCustomer("WL", admin, { WhiteLabelSiteId: siteD.id, IPAddress: "203.0.113.9" });
      const cases: [Customer, string, number | null, string | null, string | null][] = [
        [custB, population.keys.wlAdminB, population.siteB, null, null],
        [custGeo, population.keys.geoAdmin, null, "Geo Europe", "https://geo.example.com"],
        [onC, admin, siteC.id, null, "https://help.c.example.com/kyc"],
        [onD, admin, siteD.id, null, "https://d.example.com"],
      ];
      for (const [person, key, siteId, geoSite, url] of cases) {
        const server = siteId === null ? "GEO" : "WL";
        const added = await kyc("AddKYCInfo", server, key, person);
        assert.equal(added.status, 200, added.text);
        const r = await kyc("GetKYCInfo", server, key, person);
        assert.equal(r.status, 200, r.text);
        const [info] = r.json.Results;
        assert.deepEqual(
          [info.PersonId, info.WhiteLabelSiteId, info.GeoSite, info.SiteURL],
          [person.personId, siteId, geoSite, url],
          person.email,
        );
      }
    });

    test("white-label admins act on their own site's customers only", async () => {
      const person = await addCustomer("WL", population.keys.wlAdminA);
      for (const server of ["WL", "GEO"] as const) {
        for (const op of KYC_OPERATIONS) {
          const own = await kyc(op, server, population.keys.wlAdminA, person);
          assert.equal(own.status, 200, `${server} ${op} ${own.text}`);
        }
      }
      const other = await addCustomer("WL", population.keys.wlAdminB);
      for (const server of ["WL", "GEO"] as const) {
        for (const op of KYC_OPERATIONS) {
          for (const target of [other, custGeo]) {
            const r = await kyc(op, server, population.keys.wlAdminA, target);
            assertRefused(r, 403, undefined, "1002", `wlAdminA ${server} ${op} on ${target.email}`);
          }
          const reverse = await kyc(op, server, population.keys.wlAdminB, person);
          assertRefused(reverse, 403, undefined, "1002", `wlAdminB ${server} ${op} on a site-A customer`);
        }
      }
      assert.deepEqual(await kycState(other), { score: [], info: [] }, "refused writes wrote nothing");
      const mine = await kycState(person);
      assert.equal((mine.score[0] as { RedirectedToKYCTimes: number }).RedirectedToKYCTimes, 2);
    });

    test("geo-site admins act on the geo-site's direct members and its white-label customers, not others", async () => {
      const inSiteA = await addCustomer("WL", population.keys.wlAdminA);
      const direct = await addCustomer("GEO", population.keys.geoAdmin, { GeoSite: "GEO EUROPE" });
      for (const server of ["WL", "GEO"] as const) {
        for (const op of KYC_OPERATIONS) {
          for (const target of [inSiteA, direct]) {
            const r = await kyc(op, server, population.keys.geoAdmin, target);
            assert.equal(r.status, 200, `${server} ${op} on ${target.email}: ${r.text}`);
          }
        }
      }
      const onB = await addCustomer("WL", population.keys.wlAdminB);
      for (const server of ["WL", "GEO"] as const) {
        for (const op of KYC_OPERATIONS) {
          const r = await kyc(op, server, population.keys.geoAdmin, onB);
          assertRefused(r, 403, undefined, "1002", `geoAdmin ${server} ${op} on a site-B customer`);
        }
      }
      assert.deepEqual(await kycState(onB), { score: [], info: [] }, "refused writes wrote nothing");
    });

    test("service admins act on anyone; persons get 403; an expired key 401", async () => {
      const onB = await addCustomer("WL", population.keys.wlAdminB);
      for (const server of ["WL", "GEO"] as const) {
        for (const op of KYC_OPERATIONS) {
          for (const target of [onB, custGeo, custA]) {
            const r = await kyc(op, server, population.keys.admin, target);
            assert.equal(r.status, 200, `admin ${server} ${op} on ${target.email}: ${r.text}`);
          }
        }
      }
      const before = await kycState(custA2);
      for (const server of ["WL", "GEO"] as const) {
        for (const op of KYC_OPERATIONS) {
          for (const who of ["personA", "personB"] as const) {
            for (const target of [custA2, custB]) {
              const r = await kyc(op, server, population.keys[who], target);
              assertRefused(r, 403, undefined, "1002", `${who} ${server} ${op}`);
            }
          }
          const expired = await kyc(op, server, population.keys.expired, custA2);
          assertRefused(expired, 401, undefined, "2016", `expired ${server} ${op}`);
          const none = await kyc(op, server, null, custA2);
          assertRefused(none, 401, undefined, "1001", `no key ${server} ${op}`);
        }
      }
      assert.deepEqual(await kycState(custA2), before, "refused writes wrote nothing");
    });

    test("an unknown UserToken or PersonId is a 404", async () => {
      const ghost: Customer = { personId: 987_654, userToken: "no-such-token-0123456789", email: "ghost@example.com" };
      for (const key of [population.keys.admin, population.keys.wlAdminA, population.keys.geoAdmin]) {
        for (const server of ["WL", "GEO"] as const) {
          for (const op of KYC_OPERATIONS) {
            const r = await kyc(op, server, key, ghost);
            const field = op === "GetKYCScore" && server === "WL" ? "PersonId" : "UserToken";
            assertRefused(r, 404, field, "2013", `${server} ${op}`);
          }
        }
      }
      const wrongToken = await service.call("WL", "GET", "/General/GetKYCScore", {
        key: population.keys.admin,
        query: { PersonId: String(custA.personId), UserToken: ghost.userToken },
      });
      assertRefused(wrongToken, 404, "UserToken", "2013", "a known PersonId with an unknown UserToken");
    });

    test("refusals never reveal the other person's email or UserToken", async () => {
      const secret = await addCustomer("WL", population.keys.wlAdminB);
      const kycEmail = "secret.person@kyc-provider.example";
      const seeded = await kyc("AddKYCInfo", "WL", population.keys.wlAdminB, secret, { Email: kycEmail });
      assert.equal(seeded.status, 200, seeded.text);
      const refused: CallResult[] = [];
      for (const server of ["WL", "GEO"] as const) {
        for (const op of KYC_OPERATIONS) {
          for (const key of [
            population.keys.wlAdminA,
            population.keys.geoAdmin,
            population.keys.personA,
            population.keys.personB,
          ]) {
            refused.push(await kyc(op, server, key, secret));
          }
        }
        // A mismatched pair must not confirm whose token it is either.
        refused.push(
          await service.call(server, "GET", "/General/GetKYCScore", {
            key: population.keys.wlAdminA,
            query: { PersonId: String(custA.personId), UserToken: secret.userToken },
          }),
        );
      }
      for (const r of refused) {
        assert.ok(r.status >= 400, r.text);
        assert.equal(r.json.Results, null);
        for (const hidden of [secret.email, secret.userToken, kycEmail]) {
          assert.equal(r.text.toLowerCase().includes(hidden.toLowerCase()), false, `${hidden} leaked: ${r.text}`);
        }
      }
      const info = await kycState(secret);
      assert.equal((info.info[0] as { Email: string }).Email, kycEmail, "the refusals changed nothing");
    });

    test("the KYC operations are not on GEN", async () => {
      for (const [method, path] of [
        ["GET", "/General/GetKYCScore"],
        ["PUT", "/General/UpdateKYCScore"],
        ["GET", "/General/GetKYCInfo"],
        ["POST", "/General/AddKYCInfo"],
      ] as const) {
        const r = await service.call("GEN", method, path, {
          query: { UserToken: custA.userToken },
          ...(method === "GET" ? {} : { body: submission(custA.userToken) }),
        });
        assertRefused(r, 404, undefined, "1004", `${method} ${path}`);
      }
    });
  });
}
