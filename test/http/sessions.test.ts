import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey } from "../../src/services/keys.js";
import {
  advanceClock,
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * Key sessions and GET /General/GetWlInstrumentationExport (docs/decisions.md
 * "Key sessions and the instrumentation export"). Last use is tracked in the
 * service instance's memory, so each describe runs one service and keeps track
 * of the keys it has used: every call below is a use of its key. The admin key
 * (used for the clock and most exports) has no white-label site, so its own
 * sessions never appear in a site's export.
 */

interface SessionEvent {
  readonly EventType: string;
  readonly PersonId: number;
  readonly AccessKeyId: number;
  readonly Server: string;
  readonly IPAddress: string;
  readonly EventDate: string;
}

function assertRefused(r: CallResult, status: number, field?: string, code?: string, label = ""): void {
  assert.equal(r.status, status, `${label} ${r.text}`);
  assert.equal(r.json.Results, null, label);
  const first = r.json.ResponseStatus.Errors[0];
  assert.ok(first, `${label}: an error entry`);
  if (field !== undefined) assert.equal(first.FieldName, field, `${label} ${r.text}`);
  if (code !== undefined) assert.equal(first.ErrorCode, code, `${label} ${r.text}`);
}

const T0 = "2027-06-01T12:00:00.000Z";
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const DAY_MS = 86_400_000;

for (const backend of BACKENDS) {
  describe(`key sessions and the instrumentation export (${backend})`, () => {
    let service: TestService;
    let population: Population;
    /** A site-A customer and a site-B customer, each with a key of their own. */
    let cust: number;
    let custKey: string;
    let custKeyId: number;
    let custB: number;
    let custBKey: string;

    const advance = (seconds: number) => advanceClock(service, seconds);
    const exportAs = (key: string, query: Record<string, string>) =>
      service.call("WL", "GET", "/General/GetWlInstrumentationExport", { key, query });
    /** The site's session events in [start, end), read by the service admin. */
    const events = async (siteId: number, start: string, end: string): Promise<SessionEvent[]> => {
      const r = await exportAs(population.keys.admin, {
        WhiteLabelSiteId: String(siteId),
        StartDate: start,
        EndDate: end,
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0].SessionEvents;
    };
    const eventsOf = async (personId: number, start = at(-60), end = at(24 * 60)) =>
      (await events(population.siteA, start, end)).filter((e) => e.PersonId === personId);
    const profile = async (personId: number, key = population.keys.admin) => {
      const r = await service.call("WL", "GET", "/General/GetProfile", { key, query: { PersonId: String(personId) } });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0] as { LastLoggedIn: string | null; LastIP: string | null };
    };
    const addCustomer = async (siteId: number, n: number) => {
      const r = await service.call("WL", "POST", "/General/AddProfile", {
        body: {
          FirstName: "Session",
          LastName: `Customer${n}`,
          ScreenName: `session customer ${n}`,
          Email: `session.customer${n}@example.com`,
          Password: "correct horse battery staple",
          Language: "eng",
          CountryCode: "US",
          DivisionCode: "NY",
          WhiteLabelSiteId: siteId,
          IPAddress: "203.0.113.7",
        },
      });
      assert.equal(r.status, 200, r.text);
      const personId = r.json.Results[0].PersonId as number;
      return { personId, key: (await createKey(service.app.runtime, { personId })).accessKey };
    };

    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
      // After the expired key's expiry, so it stays expired.
      const clock = await service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: T0 } });
      assert.equal(clock.status, 200, clock.text);
      // Signed up by the service admin, so no white-label admin key has been used yet.
      ({ personId: cust, key: custKey } = await addCustomer(population.siteA, 1));
      ({ personId: custB, key: custBKey } = await addCustomer(population.siteB, 2));
    });
    after(() => service.close());

    test("a key's first use is one session event, and sets LastLoggedIn and LastIP", async () => {
      const unused = await profile(cust);
      assert.deepEqual([unused.LastLoggedIn, unused.LastIP], [null, "203.0.113.7"], "the sign-up address");

      const own = await service.call("WL", "GET", "/General/GetAccessKey", { key: custKey });
      assert.equal(own.status, 200, own.text);
      custKeyId = own.json.Results[0].Id;
      assert.equal(typeof custKeyId, "number");

      const r = await exportAs(population.keys.admin, {
        WhiteLabelSiteId: String(population.siteA),
        StartDate: at(-60),
        EndDate: at(60),
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.Results, [
        {
          WhiteLabelSiteId: population.siteA,
          StartDate: at(-60),
          EndDate: at(60),
          SessionEvents: [
            {
              EventType: "KeySession",
              PersonId: cust,
              AccessKeyId: custKeyId,
              Server: "WL",
              IPAddress: "127.0.0.1",
              EventDate: T0,
            },
          ],
          Subscriptions: [],
          AutotradeAccountStability: [],
          Executions: [],
        },
      ]);

      const seen = await profile(cust, population.keys.wlAdminA);
      assert.deepEqual([seen.LastLoggedIn, seen.LastIP], [T0, "127.0.0.1"]);
    });

    test("uses within 30 minutes add nothing; the first use after 30 minutes unused is a new session on any server", async () => {
      const getAccessKey = async (server: "WL" | "GEN" | "GEO") => {
        const r = await service.call(server, "GET", "/General/GetAccessKey", { key: custKey });
        assert.equal(r.status, 200, r.text);
      };
      await advance(29 * 60);
      await getAccessKey("GEN");
      await advance(29 * 60);
      await getAccessKey("GEO");
      assert.equal((await eventsOf(cust)).length, 1, "58 minutes of steady use is one session");
      assert.equal((await profile(cust)).LastLoggedIn, T0, "LastLoggedIn is the session's start");

      await advance(31 * 60); // T0 + 89 minutes
      await getAccessKey("GEO");
      await advance(31 * 60); // T0 + 120 minutes
      const legacy = await service.call("LEGACY", "POST", "/world/apiv3/whatever", {
        key: null,
        body: { apikey: custKey },
      });
      assert.equal(legacy.status, 200, legacy.text);
      assert.equal(legacy.json.ok, 0, "an unknown command still used the key");
      await advance(31 * 60); // T0 + 151 minutes
      await getAccessKey("GEN");
      await advance(29 * 60);
      await getAccessKey("WL");

      const session = (server: string, minutes: number): SessionEvent => ({
        EventType: "KeySession",
        PersonId: cust,
        AccessKeyId: custKeyId,
        Server: server,
        IPAddress: "127.0.0.1",
        EventDate: at(minutes),
      });
      assert.deepEqual(await eventsOf(cust), [
        session("WL", 0),
        session("GEO", 89),
        session("LEGACY", 120),
        session("GEN", 151),
      ]);
      const seen = await profile(cust);
      assert.deepEqual([seen.LastLoggedIn, seen.LastIP], [at(151), "127.0.0.1"]);
    });

    test("sessions are per key; a refused key starts none", async () => {
      const now = await advance(60);
      const second = await createKey(service.app.runtime, { personId: cust, comment: "second device" });
      const expired = await createKey(service.app.runtime, {
        personId: cust,
        expiresAt: new Date(Date.parse(now) - 1000),
      });
      const refused = await service.call("WL", "GET", "/General/GetAccessKey", { key: expired.accessKey });
      assertRefused(refused, 401, undefined, "2016", "expired key");
      const ok = await service.call("GEO", "GET", "/General/GetAccessKey", { key: second.accessKey });
      assert.equal(ok.status, 200, ok.text);
      const mine = await eventsOf(cust);
      assert.deepEqual(
        mine.filter((e) => e.AccessKeyId !== custKeyId),
        [
          {
            EventType: "KeySession",
            PersonId: cust,
            AccessKeyId: second.id,
            Server: "GEO",
            IPAddress: "127.0.0.1",
            EventDate: now,
          },
        ],
        "the second key's first use is its own session, even while the first key's is running",
      );
      assert.equal(
        mine.some((e) => e.AccessKeyId === expired.id),
        false,
        "an expired key is no session",
      );
    });

    test("the export covers [StartDate, EndDate)", async () => {
      const atT0 = (list: SessionEvent[]) => list.filter((e) => e.PersonId === cust && e.EventDate === T0);
      assert.equal(atT0(await events(population.siteA, T0, at(0.001 / 60))).length, 1, "StartDate is included");
      assert.equal(atT0(await events(population.siteA, at(-60), T0)).length, 0, "EndDate is excluded");
      assert.equal(atT0(await events(population.siteA, at(0.001 / 60), at(60))).length, 0, "after the window");
      assert.equal(
        atT0(await events(population.siteA, "2027-06-01T14:00:00+02:00", "2027-06-01T14:00:01+02:00")).length,
        1,
        "offsets are honoured",
      );
      const later = await events(population.siteA, at(100), at(130));
      assert.deepEqual(
        later.filter((e) => e.PersonId === cust).map((e) => [e.Server, e.EventDate]),
        [["LEGACY", at(120)]],
      );
      const far = await events(population.siteA, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z");
      assert.deepEqual(far, [], "a window without sessions");
    });

    test("the window is required, ordered and at most 93 days", async () => {
      const site = String(population.siteA);
      const ask = (query: Record<string, string>) =>
        exportAs(population.keys.admin, { WhiteLabelSiteId: site, ...query });
      assertRefused(await ask({ StartDate: T0, EndDate: T0 }), 400, "EndDate", "1101", "EndDate = StartDate");
      assertRefused(await ask({ StartDate: T0, EndDate: at(-1) }), 400, "EndDate", "1101", "EndDate < StartDate");
      assertRefused(await ask({ EndDate: T0 }), 400, "StartDate", "1102", "no StartDate");
      assertRefused(await ask({ StartDate: T0 }), 400, "EndDate", "1102", "no EndDate");
      const neither = await ask({});
      assert.equal(neither.status, 400);
      assert.deepEqual(neither.json.ResponseStatus.Errors.map((e: { FieldName: string }) => e.FieldName).sort(), [
        "EndDate",
        "StartDate",
      ]);
      assertRefused(await ask({ StartDate: "yesterday", EndDate: T0 }), 400, "StartDate", "1101", "not a date");

      const start = "2027-03-01T00:00:00.000Z";
      const longest = new Date(Date.parse(start) + 93 * DAY_MS).toISOString();
      const ok = await ask({ StartDate: start, EndDate: longest });
      assert.equal(ok.status, 200, ok.text);
      const [record] = ok.json.Results;
      assert.deepEqual(
        [record.StartDate, record.EndDate, record.Subscriptions, record.AutotradeAccountStability, record.Executions],
        [start, longest, [], [], []],
      );
      assert.ok(record.SessionEvents.length >= 1, "the sessions of June lie in the window");
      const tooLong = new Date(Date.parse(longest) + 1000).toISOString();
      const refused = await ask({ StartDate: start, EndDate: tooLong });
      assertRefused(refused, 400, "EndDate", "1101", "93 days and a second");
    });

    test("a StartDate and EndDate without an offset are UTC, whatever the host's time zone", async () => {
      const zone = process.env.TZ;
      process.env.TZ = "America/New_York";
      try {
        const r = await exportAs(population.keys.admin, {
          WhiteLabelSiteId: String(population.siteA),
          StartDate: "2027-06-01T12:00:00",
          EndDate: "2027-06-01T12:00:01",
        });
        assert.equal(r.status, 200, r.text);
        const [record] = r.json.Results;
        assert.deepEqual([record.StartDate, record.EndDate], [T0, "2027-06-01T12:00:01.000Z"]);
        assert.equal(
          record.SessionEvents.filter((e: SessionEvent) => e.PersonId === cust).length,
          1,
          "the session at 12:00 UTC",
        );
      } finally {
        if (zone === undefined) delete process.env.TZ;
        else process.env.TZ = zone;
      }
    });

    test("an impossible calendar date is refused rather than rolled over", async () => {
      for (const [field, value] of [
        ["StartDate", "2027-02-30T00:00:00Z"],
        ["EndDate", "2027-06-31T00:00:00Z"],
      ] as const) {
        const query = { WhiteLabelSiteId: String(population.siteA), StartDate: at(-60), EndDate: at(60) };
        const r = await exportAs(population.keys.admin, { ...query, [field]: value });
        assertRefused(r, 400, field, "1101", `${field}=${value}`);
      }
    });

    test("each white-label admin sees its own site's sessions only", async () => {
      await advance(31 * 60);
      const bUse = await service.call("WL", "GET", "/General/GetAccessKey", { key: custBKey });
      assert.equal(bUse.status, 200, bUse.text);
      const window = { StartDate: at(-60), EndDate: at(7 * 24 * 60) };
      const siteAMembers = new Set([population.people.wlAdminA, population.people.personA, cust]);
      const siteBMembers = new Set([population.people.wlAdminB, population.people.personB, custB]);

      const own = await exportAs(population.keys.wlAdminA, window);
      assert.equal(own.status, 200, own.text);
      const [record] = own.json.Results;
      assert.equal(record.WhiteLabelSiteId, population.siteA);
      const seen: SessionEvent[] = record.SessionEvents;
      for (const e of seen) assert.ok(siteAMembers.has(e.PersonId), `person ${e.PersonId} is a site-A member`);
      assert.equal(seen.filter((e) => e.PersonId === cust && e.AccessKeyId === custKeyId).length, 4);
      assert.ok(
        seen.some((e) => e.PersonId === population.people.wlAdminA),
        "the admin's own key use is a session of site A",
      );
      const named = await exportAs(population.keys.wlAdminA, { ...window, WhiteLabelSiteId: String(population.siteA) });
      assert.equal(named.status, 200, named.text);
      assert.deepEqual(named.json.Results, own.json.Results, "naming its own site changes nothing");
      assertRefused(
        await exportAs(population.keys.wlAdminA, { ...window, WhiteLabelSiteId: String(population.siteB) }),
        403,
        "WhiteLabelSiteId",
        "1002",
        "wlAdminA naming site B",
      );

      const other = await exportAs(population.keys.wlAdminB, window);
      assert.equal(other.status, 200, other.text);
      const bEvents: SessionEvent[] = other.json.Results[0].SessionEvents;
      for (const e of bEvents) assert.ok(siteBMembers.has(e.PersonId), `person ${e.PersonId} is a site-B member`);
      assert.deepEqual(
        bEvents.filter((e) => e.PersonId === custB).map((e) => [e.Server, e.IPAddress]),
        [["WL", "127.0.0.1"]],
      );
    });

    test("service admins must name the site and may name any; others are refused; WL only", async () => {
      const window = { StartDate: at(-60), EndDate: at(7 * 24 * 60) };
      const admin = population.keys.admin;
      assertRefused(await exportAs(admin, window), 400, "WhiteLabelSiteId", "1102", "admin without a site");
      const siteA = await events(population.siteA, window.StartDate, window.EndDate);
      const siteB = await events(population.siteB, window.StartDate, window.EndDate);
      assert.ok(siteA.some((e) => e.PersonId === cust));
      assert.ok(siteB.some((e) => e.PersonId === custB));
      assert.equal(
        siteA.some((e) => e.PersonId === custB),
        false,
      );
      assert.equal(
        siteB.some((e) => e.PersonId === cust),
        false,
      );
      for (const list of [siteA, siteB]) {
        assert.equal(
          list.some((e) => e.PersonId === population.people.admin),
          false,
          "the admin key's sessions belong to no site",
        );
      }
      assertRefused(
        await exportAs(admin, { ...window, WhiteLabelSiteId: String(population.geo) }),
        404,
        "WhiteLabelSiteId",
        "2013",
        "a geo-site",
      );
      assertRefused(
        await exportAs(admin, { ...window, WhiteLabelSiteId: "987654" }),
        404,
        "WhiteLabelSiteId",
        "2013",
        "no such site",
      );
      for (const who of ["geoAdmin", "personA", "personB"] as const) {
        assertRefused(
          await exportAs(population.keys[who], { ...window, WhiteLabelSiteId: String(population.siteA) }),
          403,
          undefined,
          "1002",
          who,
        );
        assertRefused(await exportAs(population.keys[who], window), 403, undefined, "1002", who);
      }
      assertRefused(await exportAs(population.keys.expired, window), 401, undefined, "2016", "expired");
      for (const server of ["GEN", "GEO"] as const) {
        const r = await service.call(server, "GET", "/General/GetWlInstrumentationExport", {
          query: { ...window, WhiteLabelSiteId: String(population.siteA) },
        });
        assertRefused(r, 404, undefined, "1004", server);
      }
    });
  });
}
