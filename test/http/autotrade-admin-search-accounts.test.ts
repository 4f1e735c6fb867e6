import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { brokerAccount, SIMULATED_BROKER } from "../helpers/autotrade.js";
import { getAutotrade, memberOf } from "../helpers/autotrade-admin.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  type PopulationRole,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/** SearchAccounts: brokerage accounts, seen by their owners and their sites' administrators, narrowed by filters. */

const SERVERS = ["WL", "GEN", "GEO"] as const;

for (const backend of BACKENDS) {
  describe(`SearchAccounts (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** Every account of this file starts with it, so a search can keep to them. */
    const prefix = `SA${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
    const names = { a1: `${prefix}-A1`, a2: `${prefix}-a2`, b1: `${prefix}-B1`, g1: `${prefix}-G1` };
    let geoMember = 0;

    const search = (key: string, filters: Record<string, unknown> = {}, server: (typeof SERVERS)[number] = "GEN") =>
      getAutotrade(service, server, "SearchAccounts", key, { Account: prefix, ...filters });
    const accountsOf = async (
      key: string,
      filters: Record<string, unknown> = {},
      server?: (typeof SERVERS)[number],
    ) => {
      const r = await search(key, filters, server);
      assert.equal(r.status, 200, r.text);
      return r.json.Results.map((row: { Account: string }) => row.Account);
    };

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      geoMember = await memberOf(service, p.geo, "Gerda");
      await brokerAccount(service, p.people.personA, { account: names.a1 });
      await brokerAccount(service, p.people.personA, { account: names.a2, paper: true });
      await brokerAccount(service, p.people.personB, { account: names.b1 });
      await brokerAccount(service, geoMember, { account: names.g1 });
      const people = service.storage.db.updateTable("persons");
      await people
        .set({
          country_code: "US",
          division_code: "US-CA",
          language: "eng",
          phone: "+14155552671",
          is_phone_verified: 1,
        })
        .where("id", "=", p.people.personA)
        .execute();
      await people
        .set({ country_code: "DE", phone: "+4915112345678", is_phone_verified: 0, last_ip: "198.51.100.9" })
        .where("id", "=", p.people.personB)
        .execute();
    });
    after(() => service.close());

    test("each caller sees the accounts they own or administer, on every server", async () => {
      const all = [names.a1, names.a2, names.b1, names.g1];
      const expected: Partial<Record<PopulationRole, string[]>> = {
        admin: all,
        wlAdminA: [names.a1, names.a2],
        wlAdminB: [names.b1],
        geoAdmin: [names.a1, names.a2, names.g1],
        personA: [names.a1, names.a2],
        personB: [names.b1],
      };
      for (const server of SERVERS) {
        for (const [who, accounts] of Object.entries(expected)) {
          assert.deepEqual(
            await accountsOf(p.keys[who as PopulationRole], {}, server),
            accounts,
            `${who} on ${server}`,
          );
        }
      }
      assertRefused(await search(p.keys.expired), 401);
    });

    test("an account reads with its holder, broker and sites", async () => {
      const r = await search(p.keys.wlAdminA, { Account: names.a1 });
      assert.equal(r.status, 200, r.text);
      const [account] = r.json.Results;
      const stored = await service.storage.db
        .selectFrom("broker_accounts")
        .select(["account_id", "created_at"])
        .where("account_number", "=", names.a1)
        .executeTakeFirstOrThrow();
      assert.deepEqual(account, {
        Id: stored.account_id,
        PersonId: p.people.personA,
        Account: names.a1,
        BrokerName: "Simulated Broker",
        BrokerId: SIMULATED_BROKER,
        FirstName: "personA",
        LastName: "Tester",
        Email: "persona@example.com",
        Language: "eng",
        WhiteLabelSiteId: p.siteA,
        GeoSite: "Geo Europe",
        CountryCode: "US",
        DivisionCode: "US-CA",
        AuthenticatedDate: new Date(stored.created_at).toISOString(),
      });
      const [direct] = (await search(ADMIN_KEY, { Account: names.g1 })).json.Results;
      assert.equal(direct.WhiteLabelSiteId, null);
      assert.equal(direct.GeoSite, "Geo Europe");
    });

    test("filters narrow: text in part and without regard to case, ids exactly", async () => {
      // The holder's last address (a key's use sets it: set here, after the keys were used).
      await service.storage.db
        .updateTable("persons")
        .set({ last_ip: "203.0.113.7" })
        .where("id", "=", p.people.personA)
        .execute();
      const cases: [Record<string, unknown>, string[]][] = [
        [{ Account: `${prefix.toLowerCase()}-A` }, [names.a1, names.a2]],
        [{ FirstName: "PERSONA" }, [names.a1, names.a2]],
        [{ FirstName: "erd" }, [names.g1]],
        [{ LastName: "teST" }, [names.a1, names.a2, names.b1]],
        [{ Email: "PersonB@Example" }, [names.b1]],
        [{ CountryCode: "us" }, [names.a1, names.a2]],
        [{ IPAddress: "203.0.113" }, [names.a1, names.a2]],
        [{ Phone: "4155552" }, [names.a1, names.a2]],
        // Only verified numbers are matched, as SearchProfiles does.
        [{ Phone: "15112345" }, []],
        [{ PersonId: p.people.personB }, [names.b1]],
        [{ BrokerId: SIMULATED_BROKER, WhiteLabelSiteId: p.siteA }, [names.a1, names.a2]],
        [{ BrokerId: 999 }, []],
        [{ Email: "%" }, []],
      ];
      for (const [filters, accounts] of cases) {
        assert.deepEqual(await accountsOf(ADMIN_KEY, filters), accounts, JSON.stringify(filters));
      }
      // A person's filters only narrow what is theirs.
      assert.deepEqual(await accountsOf(p.keys.personA, { WhiteLabelSiteId: p.siteB }), []);
      assert.deepEqual(await accountsOf(p.keys.geoAdmin, { WhiteLabelSiteId: p.siteA }), [names.a1, names.a2]);
    });

    test("pages by the platform's pagination, each page oldest first", async () => {
      const first = await search(ADMIN_KEY, { Limit: 3 });
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(
        first.json.Results.map((row: { Account: string }) => row.Account),
        [names.a1, names.a2, names.b1],
      );
      assert.equal(first.json.Pagination.prev_cursor, null);
      const second = await search(ADMIN_KEY, { Limit: 3, Cursor: first.json.Pagination.next_cursor });
      assert.deepEqual(
        second.json.Results.map((row: { Account: string }) => row.Account),
        [names.g1],
      );
      assert.equal(second.json.Pagination.next_cursor, null);
      const newest = await search(ADMIN_KEY, { Limit: 1, AscendingOrder: false });
      assert.deepEqual(
        newest.json.Results.map((row: { Account: string }) => row.Account),
        [names.g1],
      );
      // A cursor belongs to its query.
      assertRefused(
        await search(ADMIN_KEY, { Limit: 3, Cursor: first.json.Pagination.next_cursor, PersonId: 1 }),
        400,
        "Cursor",
        "1104",
      );
    });

    test("refusals name the field: a site not administered, an unknown site, values of the wrong kind", async () => {
      assertRefused(await search(p.keys.wlAdminA, { WhiteLabelSiteId: p.siteB }), 403, "WhiteLabelSiteId", "1002");
      assertRefused(await search(p.keys.geoAdmin, { WhiteLabelSiteId: p.siteB }), 403, "WhiteLabelSiteId", "1002");
      assertRefused(await search(ADMIN_KEY, { WhiteLabelSiteId: p.geo }), 404, "WhiteLabelSiteId", "2013");
      assertRefused(await search(ADMIN_KEY, { BrokerId: "first" }), 400, "BrokerId", "1101");
      assertRefused(await search(ADMIN_KEY, { BrokerId: 2_147_483_648 }), 400, "BrokerId", "1101");
      assertRefused(await search(ADMIN_KEY, { PersonId: 0 }), 400, "PersonId", "1101");
      assertRefused(await search(ADMIN_KEY, { CountryCode: "USA" }), 400, "CountryCode", "1101");
      assertRefused(await search(ADMIN_KEY, { Limit: 0 }), 400, "Limit", "1101");
    });
  });
}
