import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Refusal } from "../../src/core/errors.js";
import { createPerson } from "../../src/services/people.js";
import { childEnv, onlyJson, runCli } from "../helpers/cli.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";

/**
 * Refusals of strategies, the leaderboard, watchlists, KYC, profiles and the
 * operator's people, as their clients meet them: the status, the code and the
 * field named, the limits of API.md themselves accepted, and nothing
 * half-written. Where the service's own check sits behind the request
 * schema's (the same limit, checked first), the schema's refusal is what a
 * client gets, and is what is tested.
 */

const errorsOf = (r: CallResult): { ErrorCode: string; FieldName: string; Message: string; Meta: object }[] =>
  r.json?.ResponseStatus?.Errors ?? [];

for (const backend of BACKENDS) {
  describe(`strategies, leaderboard, watchlists, KYC, profiles and people: refusals (${backend})`, () => {
    let service: TestService;
    let population: Population;
    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
    });
    after(() => service.close());

    const strategyRow = (id: number) =>
      service.storage.db
        .selectFrom("strategies")
        .select(["name", "pending_short_description", "pending_long_description", "review_status"])
        .where("id", "=", id)
        .executeTakeFirstOrThrow();

    const publicStrategy = async (name: string) => {
      const r = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: ADMIN_KEY,
        body: { StrategyName: name, StartingCapital: 10_000, InitialSiteVisibility: true },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0].StrategyId as number;
    };

    test("UpdateStrategy takes descriptions of 300 and 20000 characters; one more is refused naming it, and the rename sent with it is not applied", async () => {
      const made = await service.call("GEN", "POST", "/Strategies/AddStrategy", {
        key: population.keys.personA,
        body: { StrategyName: "Described", StartingCapital: 10_000 },
      });
      const id = made.json.Results[0].StrategyId as number;
      const update = (body: Record<string, unknown>) =>
        service.call("GEN", "PUT", "/Strategies/UpdateStrategy", {
          key: population.keys.personA,
          body: { StrategyId: id, ...body },
        });
      const atLimits = await update({ ShortDescription: "s".repeat(300), LongDescription: "l".repeat(20_000) });
      assert.equal(atLimits.status, 200, atLimits.text);
      const before = await strategyRow(id);
      assert.deepEqual(
        [before.pending_short_description?.length, before.pending_long_description?.length, before.review_status],
        [300, 20_000, "pending"],
      );
      // The request schema holds API.md's limits and refuses first (the rules' own check cannot be reached).
      for (const [field, value] of [
        ["ShortDescription", "s".repeat(301)],
        ["LongDescription", "l".repeat(20_001)],
      ] as const) {
        const r = await update({ Name: "Renamed Meanwhile", [field]: value });
        assertRefused(r, 400, field, "1101");
        assert.deepEqual(await strategyRow(id), before, `${field}: nothing written`);
      }
    });

    test("SetLeaderBoard listing a strategy twice is refused naming StrategyIds; the board stays as it was", async () => {
      const first = await publicStrategy("Board First");
      const second = await publicStrategy("Board Second");
      const set = await service.call("GEN", "POST", "/Admin/SetLeaderBoard", { body: { StrategyIds: [first] } });
      assert.equal(set.status, 200, set.text);
      const twice = await service.call("GEN", "POST", "/Admin/SetLeaderBoard", {
        body: { StrategyIds: [second, first, second] },
      });
      assertRefused(twice, 400, "StrategyIds", "1101");
      assert.match(errorsOf(twice)[0]?.Message ?? "", /listed twice/);
      const board = await service.call("WL", "GET", "/Strategies/GetLeaderBoard", { key: population.keys.personA });
      assert.deepEqual(
        board.json.Results.map((s: { StrategyId: number }) => s.StrategyId),
        [first],
      );
    });

    test("lists renamed to one name at once: one gets it; each other is a 409 naming Name and the list that has it", async () => {
      const key = population.keys.personB;
      const manage = (body: Record<string, unknown>) =>
        service.call("WL", "POST", "/Strategies/ManageWatchList", { key, body });
      // Renames lock their own lists, not their person: on PostgreSQL they pass the name check together
      // and the unique index decides. Several rounds, as the race is not lost every time.
      for (let round = 0; round < 4; round++) {
        const ids: number[] = [];
        for (let i = 0; i < 4; i++) {
          const made = await manage({ Name: `Round ${round} list ${i}` });
          assert.equal(made.status, 200, made.text);
          ids.push(made.json.Results[0].Id);
        }
        const shared = `Shared ${round}`;
        const answers = await Promise.all(
          ids.map((WatchListId, i) => manage({ WatchListId, Name: i % 2 === 0 ? shared : shared.toUpperCase() })),
        );
        const label = answers.map((r) => r.text).join("\n");
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409, 409, 409], label);
        const won = answers.findIndex((r) => r.status === 200);
        const winner = ids[won];
        for (const r of answers.filter((r) => r.status === 409)) {
          assertRefused(r, 409, "Name", "1201");
          assert.deepEqual(errorsOf(r)[0]?.Meta, { WatchListId: winner }, r.text);
        }
        const lists = await service.call("WL", "GET", "/Strategies/GetWatchLists", { key });
        const names = new Map(lists.json.Results.map((l: { Id: number; Name: string }) => [l.Id, l.Name]));
        ids.forEach((id, i) => {
          const sent = i % 2 === 0 ? shared : shared.toUpperCase();
          assert.equal(
            names.get(id),
            i === won ? sent : `Round ${round} list ${i}`,
            `list ${id}: renamed only if it won`,
          );
        });
        for (const id of ids) {
          const gone = await service.call("WL", "DELETE", "/Strategies/ManageWatchList", {
            key,
            query: { WatchListId: String(id) },
          });
          assert.equal(gone.status, 200, gone.text);
        }
      }
    });

    test("GetKYCScore on WL naming no one is refused naming PersonId, the field WL reads", async () => {
      // Each server's schema requires the field it names people by, so the service's own
      // "UserToken is required" (for a request naming neither) cannot be reached.
      const neither = await service.call("WL", "GET", "/General/GetKYCScore", { key: population.keys.wlAdminA });
      assertRefused(neither, 400, "PersonId", "1102");
    });

    test("UpdateProfile: a DivisionCode for a person with no country is refused until CountryCode comes with it; nothing else is written", async () => {
      const key = population.keys.personA;
      const update = (body: Record<string, unknown>) =>
        service.call("GEN", "PUT", "/General/UpdateProfile", { key, body });
      const own = async () => {
        const r = await service.call("GEN", "GET", "/General/GetProfile", { key });
        assert.equal(r.status, 200, r.text);
        return r.json.Results[0];
      };
      const before = await own();
      // People the operator makes have no country.
      assert.equal(before.CountryCode, null);
      const alone = await update({ FirstName: "Renamed", DivisionCode: "IDF" });
      assertRefused(alone, 400, "DivisionCode", "1101");
      assert.equal(errorsOf(alone)[0]?.Message, "Set CountryCode with DivisionCode");
      // Past 20 characters the request schema refuses first (the rules' own check cannot be reached).
      assertRefused(await update({ FirstName: "Renamed", DivisionCode: "d".repeat(21) }), 400, "DivisionCode", "1101");
      assert.deepEqual(await own(), before, "neither the name nor the division written");
      const withCountry = await update({ FirstName: "Renamed", CountryCode: "FR", DivisionCode: "IDF" });
      assert.equal(withCountry.status, 200, withCountry.text);
      const after = await own();
      assert.deepEqual([after.FirstName, after.CountryCode, after.DivisionCode], ["Renamed", "FR", "FR-IDF"]);
    });

    test("person create (operator CLI) refuses a blank or long name and an administrator without a site, naming the field; makes no one", async () => {
      const env = childEnv(service.env);
      const create = (email: string, { first = "Opal", last = "Operator", more = [] as string[] } = {}) =>
        runCli(env, ["person", "create", "--email", email, "--first", first, "--last", last, ...more, "--json"]);
      const cases: [string, Parameters<typeof create>[1], string, RegExp][] = [
        ["blank first name", { first: "   " }, "FirstName", /^FirstName must be 1 to 40 characters$/],
        ["long last name", { last: "L".repeat(41) }, "LastName", /^LastName must be 1 to 40 characters$/],
        ["white-label admin", { more: ["--role", "whitelabel-admin"] }, "Site", /belongs to a whitelabel site/],
        ["geo admin", { more: ["--role", "geo-admin"] }, "Site", /belongs to a geo site/],
      ];
      for (const [i, [label, options, field, message]] of cases.entries()) {
        const run = await create(`refused.${i}@example.com`, options);
        assert.equal(run.code, 1, `${label}: ${run.stdout} ${run.stderr}`);
        const { Error: error } = onlyJson(run);
        assert.equal(error.Field, field, label);
        assert.match(error.Message, message, label);
      }
      const refused = await service.storage.db
        .selectFrom("persons")
        .select("id")
        .where("email", "like", "refused.%")
        .execute();
      assert.deepEqual(refused, [], "no one made");
      // A name is measured as it is kept, trimmed: 40 letters with a space around them fit.
      const padded = await create("padded@example.com", { first: ` ${"F".repeat(40)} ` });
      assert.equal(padded.code, 0, `${padded.stdout} ${padded.stderr}`);
      const { PersonId } = onlyJson(padded);
      const profile = await service.call("GEN", "GET", "/General/GetProfile", {
        key: ADMIN_KEY,
        query: { PersonId: String(PersonId) },
      });
      assert.equal(profile.json.Results[0].FirstName, "F".repeat(40));
    });

    test("two operators making one person at once: one is made, the other is told the email is registered", async () => {
      // The CLI thread runs one command at a time, as one shell does; two operators are two processes,
      // each calling what `person create` calls. On PostgreSQL they pass the email check together and
      // the unique index decides. Several rounds, as the race is not lost every time.
      for (let round = 0; round < 4; round++) {
        const email = `twice.${round}@example.com`;
        const outcomes = await Promise.allSettled(
          Array.from({ length: 4 }, (_, i) =>
            createPerson(service.app.runtime, {
              email: i % 2 === 0 ? email : email.toUpperCase(),
              firstName: "Twin",
              lastName: `Number ${i}`,
              role: "person",
            }),
          ),
        );
        assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1, `round ${round}`);
        for (const outcome of outcomes) {
          if (outcome.status === "fulfilled") continue;
          const refusal = outcome.reason;
          assert.ok(refusal instanceof Refusal, String(refusal));
          assert.deepEqual(
            [refusal.entries[0]?.name, refusal.entries[0]?.field, refusal.message],
            ["AlreadyExists", "Email", "That email is already registered"],
          );
        }
        const kept = await service.storage.db.selectFrom("persons").select("id").where("email", "=", email).execute();
        assert.equal(kept.length, 1);
      }
    });
  });
}
