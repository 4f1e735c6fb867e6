import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { WATCHLIST_LIMITS } from "../../src/core/watchlists.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { assertRefused, newStrategy } from "../helpers/trading.js";

/**
 * Watchlists over HTTP (WL): GetWatchLists, GetWatchListMembers and
 * ManageWatchList's POST and DELETE; the built-in Leaderboard list; every
 * refusal (names, limits under concurrent requests, another person's list,
 * strategies the caller may not see); nothing half-written.
 */
for (const backend of BACKENDS) {
  describe(`watchlists (${backend})`, () => {
    let service: TestService;
    let p: Population;
    /** Public strategies of the administrator's, and person B's private one. */
    const publicIds: number[] = [];
    let privateOfB = 0;

    const lists = async (key: string, query: Record<string, string> = {}) => {
      const r = await service.call("WL", "GET", "/Strategies/GetWatchLists", { key, query });
      assert.equal(r.status, 200, r.text);
      return r;
    };
    const members = (key: string, watchListId: number, query: Record<string, string> = {}) =>
      service.call("WL", "GET", "/Strategies/GetWatchListMembers", {
        key,
        query: { WatchListId: String(watchListId), ...query },
      });
    const memberIds = async (key: string, watchListId: number) => {
      const r = await members(key, watchListId);
      assert.equal(r.status, 200, r.text);
      return r.json.Results.map((m: { StrategyId: number }) => m.StrategyId) as number[];
    };
    const manage = (key: string, body: Record<string, unknown>) =>
      service.call("WL", "POST", "/Strategies/ManageWatchList", { key, body });
    const remove = (key: string, query: Record<string, string>) =>
      service.call("WL", "DELETE", "/Strategies/ManageWatchList", { key, query });
    const made = async (key: string, body: Record<string, unknown>) => {
      const r = await manage(key, body);
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0] as { Id: number; Name: string; MemberCount: number; PersonId: number };
    };
    const publicStrategy = async (name: string) => {
      const r = await service.call("WL", "POST", "/Strategies/AddStrategy", {
        key: ADMIN_KEY,
        body: { StrategyName: name, StartingCapital: 10_000, InitialSiteVisibility: true },
      });
      assert.equal(r.status, 200, r.text);
      return r.json.Results[0].StrategyId as number;
    };
    const storedLists = async (personId: number) =>
      (
        await service.storage.db
          .selectFrom("watchlists")
          .select((eb) => eb.fn.countAll<string | number>().as("n"))
          .where("person_id", "=", personId)
          .executeTakeFirstOrThrow()
      ).n;

    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      for (let i = 0; i < 4; i++) publicIds.push(await publicStrategy(`Listed ${i}`));
      privateOfB = await newStrategy(service, p.keys.personB, 10_000, "B Private");
    });
    after(() => service.close());

    test("every key sees the service's Leaderboard list, read only, holding the curated strategies it may see", async () => {
      const curated = await service.call("GEN", "POST", "/Admin/SetLeaderBoard", {
        body: { StrategyIds: [publicIds[2], publicIds[0]] },
      });
      assert.equal(curated.status, 200, curated.text);
      const r = await lists(p.keys.personA);
      assert.deepEqual(r.json.Results, [
        {
          Id: 1,
          Name: "Leaderboard",
          Kind: "Leaderboard",
          IsReadOnly: true,
          PersonId: null,
          MemberCount: 2,
          MaxMembers: null,
          CreatedDate: null,
          LastModified: null,
          DeletedDate: null,
        },
      ]);
      assert.deepEqual(await memberIds(p.keys.personA, 1), [publicIds[2], publicIds[0]]);
      const first = (await members(p.keys.personB, 1)).json.Results[0];
      assert.equal(first.WatchListId, 1);
      assert.equal(first.AddedDate, null);
      assert.equal(first.StrategyName, "Listed 2");
      assertRefused(await manage(p.keys.personA, { WatchListId: 1, Name: "Mine" }), 403, "1002", "WatchListId");
      assertRefused(await remove(ADMIN_KEY, { WatchListId: "1" }), 403, "1002", "WatchListId");
      assert.equal((await lists(p.keys.personA)).json.Results.length, 1, "nothing changed");
    });

    test("a person makes a list with members, renames it, adds to it; names are unique without regard to case", async () => {
      const list = await made(p.keys.personA, { Name: "  Breakouts  ", StrategyIds: [publicIds[1], publicIds[0]] });
      assert.equal(list.Name, "Breakouts");
      assert.equal(list.PersonId, p.people.personA);
      assert.equal(list.MemberCount, 2);
      const shown = (await lists(p.keys.personA)).json.Results;
      assert.deepEqual(
        shown.map((l: { Id: number; Kind: string }) => [l.Id, l.Kind]),
        [
          [1, "Leaderboard"],
          [list.Id, "Custom"],
        ],
      );
      assert.equal(shown[1].MaxMembers, WATCHLIST_LIMITS.membersPerList);
      assert.equal(shown[1].IsReadOnly, false);
      // Members added together are in strategy id order.
      assert.deepEqual(await memberIds(p.keys.personA, list.Id), [publicIds[0], publicIds[1]]);

      const taken = await manage(p.keys.personA, { Name: "BREAKOUTS" });
      assertRefused(taken, 409, "1201", "Name");
      assert.equal(taken.json.ResponseStatus.Errors[0].Meta.WatchListId, list.Id);
      // Another person may use the name; the list may keep (or re-case) its own.
      await made(p.keys.personB, { Name: "Breakouts" });
      const renamed = await made(p.keys.personA, { WatchListId: list.Id, Name: "breakouts" });
      assert.equal(renamed.Name, "breakouts");
      const grown = await made(p.keys.personA, { WatchListId: list.Id, StrategyIds: [publicIds[3], publicIds[1]] });
      assert.equal(grown.MemberCount, 3, "a strategy in the list already changes nothing");
      assert.deepEqual(await memberIds(p.keys.personA, list.Id), [publicIds[0], publicIds[1], publicIds[3]]);
      const both = await made(p.keys.personA, { WatchListId: list.Id, Name: "Momentum", StrategyIds: [] });
      assert.equal(both.Name, "Momentum");
    });

    test("names are 1 to 59 characters, and a list is made only with a name", async () => {
      const longest = "n".repeat(WATCHLIST_LIMITS.nameLength);
      assert.equal((await made(p.keys.personB, { Name: longest })).Name, longest);
      const tooLong = await manage(p.keys.personB, { Name: `${longest}x` });
      assertRefused(tooLong, 400, "1101", "Name");
      assert.equal(tooLong.json.ResponseStatus.Errors[0].Meta.Limit, 59);
      assert.match(tooLong.json.ResponseStatus.Errors[0].Message, /shorter than 60/);
      assertRefused(await manage(p.keys.personB, { Name: "   " }), 400, "1102", "Name");
      assertRefused(await manage(p.keys.personB, { StrategyIds: [publicIds[0]] }), 400, "1102", "Name");
      const list = await made(p.keys.personB, { Name: "To rename" });
      assertRefused(await manage(p.keys.personB, { WatchListId: list.Id }), 400, "1102", "Name");
      assertRefused(await manage(p.keys.personB, { WatchListId: list.Id, Name: "" }), 400, "1102", "Name");
    });

    test("only strategies the caller may see are added, and only those are listed and counted", async () => {
      const before = await storedLists(p.people.personA);
      const refused = await manage(p.keys.personA, {
        Name: "Hidden",
        StrategyIds: [publicIds[0], privateOfB, 999_999],
      });
      assertRefused(refused, 404, "2013", "StrategyIds[1]");
      assertRefused(refused, 404, "2013", "StrategyIds[2]");
      assert.equal(await storedLists(p.people.personA), before, "the list was not made without its members");

      const ownB = await made(p.keys.personB, { Name: "B's own", StrategyIds: [privateOfB, publicIds[0]] });
      assert.deepEqual(await memberIds(p.keys.personB, ownB.Id), [publicIds[0], privateOfB]);
      // A strategy made private after it was added is no longer shown or counted.
      const hidden = publicIds[3] as number;
      const shared = await made(p.keys.personA, { Name: "Shared", StrategyIds: [publicIds[2], hidden] });
      await service.storage.db.updateTable("strategies").set({ is_private: 1 }).where("id", "=", hidden).execute();
      try {
        assert.deepEqual(await memberIds(p.keys.personA, shared.Id), [publicIds[2]]);
        const listed = (await lists(p.keys.personA)).json.Results.find((l: { Id: number }) => l.Id === shared.Id);
        assert.equal(listed.MemberCount, 1);
        // Its owner, the service administrator, still sees it on its own lists.
        const admins = await made(ADMIN_KEY, { Name: "Admin's", StrategyIds: [hidden] });
        assert.equal(admins.MemberCount, 1);
      } finally {
        await service.storage.db.updateTable("strategies").set({ is_private: 0 }).where("id", "=", hidden).execute();
      }
    });

    test("another person's list does not exist to the caller", async () => {
      const list = await made(p.keys.personB, { Name: "B private list", StrategyIds: [publicIds[0]] });
      for (const key of [p.keys.personA, p.keys.wlAdminB, ADMIN_KEY]) {
        assertRefused(await members(key, list.Id), 404, "2013", "WatchListId");
        assertRefused(await manage(key, { WatchListId: list.Id, Name: "Taken over" }), 404, "2013", "WatchListId");
        assertRefused(await remove(key, { WatchListId: String(list.Id) }), 404, "2013", "WatchListId");
        const theirs = (await lists(key)).json.Results.map((l: { Id: number }) => l.Id);
        assert.ok(!theirs.includes(list.Id));
      }
      assert.deepEqual(await memberIds(p.keys.personB, list.Id), [publicIds[0]]);
      assertRefused(await members(p.keys.personB, 999_999), 404, "2013", "WatchListId");
    });

    test("DELETE takes members out, or deletes the whole list", async () => {
      const list = await made(p.keys.personA, { Name: "Short lived", StrategyIds: publicIds });
      const fewer = await remove(p.keys.personA, {
        WatchListId: String(list.Id),
        StrategyIds: `${publicIds[1]},${publicIds[3]},999999`,
      });
      assert.equal(fewer.status, 200, fewer.text);
      assert.equal(fewer.json.Results[0].MemberCount, 2);
      assert.equal(fewer.json.Results[0].DeletedDate, null);
      assert.deepEqual(await memberIds(p.keys.personA, list.Id), [publicIds[0], publicIds[2]]);
      const gone = await remove(p.keys.personA, { WatchListId: String(list.Id) });
      assert.equal(gone.status, 200, gone.text);
      assert.equal(gone.json.Results[0].Name, "Short lived");
      assert.equal(gone.json.Results[0].MemberCount, 2);
      assert.ok(Date.parse(gone.json.Results[0].DeletedDate) > 0, gone.text);
      assertRefused(await members(p.keys.personA, list.Id), 404, "2013", "WatchListId");
      assertRefused(await remove(p.keys.personA, { WatchListId: String(list.Id) }), 404, "2013", "WatchListId");
      const left = await service.storage.db
        .selectFrom("watchlist_members")
        .select("strategy_id")
        .where("watchlist_id", "=", list.Id)
        .execute();
      assert.deepEqual(left, []);
      // Its name is free again.
      await made(p.keys.personA, { Name: "Short lived" });
    });

    test("pages walk the lists and the members with a cursor", async () => {
      const key = p.keys.geoAdmin;
      const ids: number[] = [];
      for (const name of ["One", "Two", "Three"]) ids.push((await made(key, { Name: name })).Id);
      const first = await lists(key, { Limit: "2" });
      assert.deepEqual(
        first.json.Results.map((l: { Id: number }) => l.Id),
        [1, ids[0]],
      );
      const second = await lists(key, { Limit: "2", Cursor: first.json.Pagination.next_cursor });
      assert.deepEqual(
        second.json.Results.map((l: { Id: number }) => l.Id),
        [ids[1], ids[2]],
      );
      assert.equal(second.json.Pagination.next_cursor, null);
      const listId = ids[0] as number;
      for (const id of publicIds) await made(key, { WatchListId: listId, StrategyIds: [id] });
      const page = await members(key, listId, { Limit: "3", AscendingOrder: "false" });
      assert.deepEqual(
        page.json.Results.map((m: { StrategyId: number }) => m.StrategyId),
        [publicIds[3], publicIds[2], publicIds[1]],
      );
      const rest = await members(key, listId, {
        Limit: "3",
        AscendingOrder: "false",
        Cursor: page.json.Pagination.next_cursor,
      });
      assert.deepEqual(
        rest.json.Results.map((m: { StrategyId: number }) => m.StrategyId),
        [publicIds[0]],
      );
    });

    test(`a person keeps at most ${WATCHLIST_LIMITS.listsPerPerson} lists, also when asked for more at once`, async () => {
      const key = p.keys.wlAdminA;
      const answers = await Promise.all(
        Array.from({ length: WATCHLIST_LIMITS.listsPerPerson + 6 }, (_, i) => manage(key, { Name: `Race ${i}` })),
      );
      const ok = answers.filter((r) => r.status === 200);
      const refused = answers.filter((r) => r.status !== 200);
      assert.equal(ok.length, WATCHLIST_LIMITS.listsPerPerson);
      for (const r of refused) {
        assertRefused(r, 409, "1210", "Name");
        assert.equal(r.json.ResponseStatus.Errors[0].Meta.Limit, WATCHLIST_LIMITS.listsPerPerson);
        assert.match(r.json.ResponseStatus.Errors[0].Message, /at most 20 watchlists/);
      }
      assert.equal(Number(await storedLists(p.people.wlAdminA)), WATCHLIST_LIMITS.listsPerPerson);
    });

    test(`a list holds at most ${WATCHLIST_LIMITS.membersPerList} strategies, also when added to at once`, async () => {
      const limit = WATCHLIST_LIMITS.membersPerList;
      const more: number[] = [...publicIds];
      while (more.length < limit + 8) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(20, limit + 8 - more.length) }, (_, i) =>
            publicStrategy(`Bulk ${more.length + i}`),
          ),
        );
        more.push(...batch);
      }
      const list = await made(p.keys.personB, { Name: "Full", StrategyIds: more.slice(0, limit - 4) });
      assert.equal(list.MemberCount, limit - 4);
      const tooMany = await manage(p.keys.personB, {
        WatchListId: list.Id,
        StrategyIds: more.slice(limit - 4, limit + 1),
      });
      assertRefused(tooMany, 409, "1210", "StrategyIds");
      assert.deepEqual(tooMany.json.ResponseStatus.Errors[0].Meta, { Limit: limit, Count: limit - 4, Adding: 5 });
      assert.equal((await memberIds(p.keys.personB, list.Id)).length, limit - 4, "none of the five was added");
      // Twelve single adds at once: exactly four fit.
      const answers: CallResult[] = await Promise.all(
        more
          .slice(limit - 4, limit + 8)
          .map((id) => manage(p.keys.personB, { WatchListId: list.Id, StrategyIds: [id] })),
      );
      assert.equal(answers.filter((r) => r.status === 200).length, 4);
      for (const r of answers.filter((r) => r.status !== 200)) assertRefused(r, 409, "1210", "StrategyIds");
      const stored = await service.storage.db
        .selectFrom("watchlist_members")
        .select((eb) => eb.fn.countAll<string | number>().as("n"))
        .where("watchlist_id", "=", list.Id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored.n), limit);
      const r = await members(p.keys.personB, list.Id, { Limit: "1000" });
      assert.equal(r.json.Results.length, limit);
    });
  });
}
