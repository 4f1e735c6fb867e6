import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { V4Server } from "../../src/http/v4/operation.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import {
  BACKENDS,
  type CallOptions,
  type Population,
  type PopulationRole,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * The permission matrix: every operation of the table, on every server that
 * lists it, called by every role on objects of its own site and of another.
 * An operation without cases here fails the test, so new operations must say
 * who may call them.
 */
const ROLES: readonly PopulationRole[] = ["admin", "wlAdminA", "wlAdminB", "geoAdmin", "personA", "personB", "expired"];

interface Case {
  readonly name: string;
  readonly request: (p: Population) => CallOptions;
  readonly expect: (who: PopulationRole, server: V4Server) => number;
}

const everyoneWithAValidKey = (who: PopulationRole) => (who === "expired" ? 401 : 200);
const adminsOnly = (who: PopulationRole) => (who === "expired" ? 401 : who === "admin" ? 200 : 403);

const CASES: Readonly<Record<string, readonly Case[]>> = {
  Hello: [{ name: "greeting", request: () => ({ body: { Name: "Matrix" } }), expect: everyoneWithAValidKey }],
  GetAccessKey: [{ name: "own key", request: () => ({}), expect: everyoneWithAValidKey }],
  GetWhiteLabelSiteUsers: [
    {
      name: "site A",
      request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteA) } }),
      expect: (who) => ({ admin: 200, wlAdminA: 200, expired: 401 })[who as string] ?? 403,
    },
    {
      name: "site B",
      request: (p) => ({ query: { WhiteLabelSiteId: String(p.siteB) } }),
      expect: (who) => ({ admin: 200, wlAdminB: 200, expired: 401 })[who as string] ?? 403,
    },
    {
      name: "the caller's own site",
      request: () => ({}),
      expect: (who, server) => {
        if (who === "expired") return 401;
        if (who === "admin") return 400; // an admin has no site of its own: WhiteLabelSiteId is required
        if (who === "wlAdminA" || who === "wlAdminB") return server === "GEO" ? 400 : 200;
        return 403;
      },
    },
  ],
  SetClock: [{ name: "future", request: () => ({ body: { Now: "2031-01-01T00:00:00Z" } }), expect: adminsOnly }],
  AdvanceClock: [{ name: "no move", request: () => ({ body: { Seconds: 0 } }), expect: adminsOnly }],
};

/** The emails each caller may see: its own, and those of the people it administers. */
const VISIBLE: Readonly<Record<PopulationRole, readonly PopulationRole[]>> = {
  admin: ROLES,
  wlAdminA: ["wlAdminA", "personA"],
  wlAdminB: ["wlAdminB", "personB"],
  geoAdmin: ["geoAdmin", "wlAdminA", "personA"],
  personA: ["personA"],
  personB: ["personB"],
  expired: [],
};

for (const backend of BACKENDS) {
  describe(`permission matrix (${backend})`, () => {
    let service: TestService;
    let population: Population;
    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
    });
    after(() => service.close());

    for (const operation of OPERATIONS) {
      test(`${operation.id}`, async () => {
        const cases = CASES[operation.id];
        assert.ok(cases, `the permission matrix has no cases for ${operation.id}`);
        for (const server of operation.servers) {
          for (const testCase of cases) {
            for (const who of ROLES) {
              const r = await service.call(server, operation.method, operation.path, {
                ...testCase.request(population),
                key: population.keys[who],
              });
              const label = `${operation.id} ${testCase.name} on ${server} by ${who}`;
              assert.equal(r.status, testCase.expect(who, server), `${label}: ${r.text}`);
              for (const other of ROLES) {
                if (VISIBLE[who].includes(other)) continue;
                assert.equal(r.text.includes(`"${other.toLowerCase()}@example.com"`), false, `${label} leaks ${other}`);
              }
            }
          }
        }
      });
    }
  });
}
