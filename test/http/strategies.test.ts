import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`strategies: AddStrategy, UpdateStrategy and the description review (${backend})`, () => {
    let service: TestService;
    let population: Population;
    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
    });
    after(() => service.close());

    const row = (id: number) =>
      service.storage.db
        .selectFrom("strategies as s")
        .innerJoin("accounts as a", "a.strategy_id", "s.id")
        .selectAll("s")
        .select("a.cash")
        .where("s.id", "=", id)
        .executeTakeFirstOrThrow();
    const count = async () =>
      Number(
        (
          await service.storage.db
            .selectFrom("strategies")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const add = (server: "WL" | "GEN", key: string, body: Record<string, unknown>) =>
      service.call(server, "POST", "/Strategies/AddStrategy", { key, body });
    const fieldsOf = (r: { json: { ResponseStatus: { Errors: { FieldName: string }[] } } }) =>
      r.json.ResponseStatus.Errors.map((e) => e.FieldName).sort();

    test("a person creates an empty strategy holding its starting capital in cash, hidden", async () => {
      const r = await add("GEN", population.keys.personA, {
        StrategyName: "  Trend #1 / Alpha's  ",
        StartingCapital: "100000",
      });
      assert.equal(r.status, 200, r.text);
      const id = r.json.Results[0].StrategyId;
      assert.equal(typeof id, "number");
      const strategy = await row(id);
      assert.equal(strategy.name, "Trend #1 / Alpha's");
      assert.equal(strategy.owner_person_id, population.people.personA);
      assert.equal(strategy.white_label_site_id, population.siteA);
      assert.equal(strategy.is_private, 1);
      assert.deepEqual([strategy.starting_capital, strategy.cash], ["100000", "100000"]);
    });

    test("on GEN the owner is always the caller and the strategy starts hidden", async () => {
      const r = await add("GEN", population.keys.wlAdminA, {
        StrategyName: "Made On Gen",
        StartingCapital: 5000,
        StrategyOwnerPersonId: population.people.personA,
        InitialSiteVisibility: true,
      });
      assert.equal(r.status, 200);
      const strategy = await row(r.json.Results[0].StrategyId);
      assert.deepEqual([strategy.owner_person_id, strategy.is_private], [population.people.wlAdminA, 1]);
    });

    test("on WL an administrator makes a strategy for a customer of its site, visible if it says so", async () => {
      const r = await add("WL", population.keys.wlAdminA, {
        StrategyName: "For Customer A",
        StartingCapital: 25000,
        StrategyOwnerPersonId: population.people.personA,
        InitialSiteVisibility: true,
      });
      assert.equal(r.status, 200, r.text);
      const strategy = await row(r.json.Results[0].StrategyId);
      assert.deepEqual([strategy.owner_person_id, strategy.is_private], [population.people.personA, 0]);
      const before = await count();
      const otherSite = await add("WL", population.keys.wlAdminA, {
        StrategyName: "For Customer B",
        StartingCapital: 25000,
        StrategyOwnerPersonId: population.people.personB,
      });
      assert.equal(otherSite.status, 403);
      const personVisibility = await add("WL", population.keys.personA, {
        StrategyName: "Mine",
        StartingCapital: 25000,
        InitialSiteVisibility: true,
      });
      assert.equal(personVisibility.status, 403, "only administrators set the visibility");
      const personOwner = await add("WL", population.keys.personA, {
        StrategyName: "Theirs",
        StartingCapital: 25000,
        StrategyOwnerPersonId: population.people.personB,
      });
      assert.equal(personOwner.status, 403, "only administrators set the owner");
      const nobody = await add("WL", population.keys.admin, {
        StrategyName: "Nobody",
        StartingCapital: 25000,
        StrategyOwnerPersonId: 987654,
      });
      assert.equal(nobody.status, 404);
      assert.equal(await count(), before, "refusals write nothing");
    });

    test("names and capital are checked, and nothing is written when they are wrong", async () => {
      const before = await count();
      const cases: [Record<string, unknown>, string[]][] = [
        [{ StrategyName: "Fine Name" }, ["StartingCapital"]],
        [{ StrategyName: "Fine Name", StartingCapital: 999 }, ["StartingCapital"]],
        [{ StrategyName: "Fine Name", StartingCapital: 10_000_000.01 }, ["StartingCapital"]],
        [{ StrategyName: "ab", StartingCapital: 1000 }, ["StrategyName"]],
        [{ StrategyName: "x".repeat(41), StartingCapital: 1000 }, ["StrategyName"]],
        [{ StrategyName: "Bad@Name", StartingCapital: 1000 }, ["StrategyName"]],
        [{ StrategyName: "ab", StartingCapital: 5 }, ["StartingCapital", "StrategyName"]],
        [{ StartingCapital: 5000 }, ["StrategyName"]],
      ];
      for (const [body, fields] of cases) {
        const r = await add("GEN", population.keys.personB, body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.deepEqual(fieldsOf(r), fields, JSON.stringify(body));
      }
      const edges = await add("GEN", population.keys.personB, { StrategyName: "abc", StartingCapital: 10_000_000 });
      assert.equal(edges.status, 200, "the limits themselves are allowed");
      assert.equal(await count(), before + 1);
    });

    test("UpdateStrategy renames at once and puts descriptions up for review; approval publishes them", async () => {
      const id = (await add("GEN", population.keys.personB, { StrategyName: "Before", StartingCapital: 50000 })).json
        .Results[0].StrategyId;
      const update = (key: string, body: Record<string, unknown>) =>
        service.call("GEN", "PUT", "/Strategies/UpdateStrategy", { key, body: { StrategyId: id, ...body } });
      const r = await update(population.keys.personB, {
        Name: "After",
        ShortDescription: "Short one",
        LongDescription: "Long one",
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.Results, [{ StrategyId: id }]);
      let strategy = await row(id);
      assert.equal(strategy.name, "After");
      assert.deepEqual(
        [strategy.short_description, strategy.long_description, strategy.review_status],
        [null, null, "pending"],
        "not published before review",
      );
      const review = (key: string, body: Record<string, unknown>) =>
        service.call("GEN", "POST", "/Admin/ReviewStrategyDescriptions", { key, body: { StrategyId: id, ...body } });
      assert.equal((await review(population.keys.personB, { Approve: true })).status, 403);
      const approved = await review(population.keys.admin, { Approve: true, Note: "fine" });
      assert.deepEqual(approved.json.Results, [{ StrategyId: id, ReviewStatus: "approved" }]);
      strategy = await row(id);
      assert.deepEqual([strategy.short_description, strategy.long_description], ["Short one", "Long one"]);
      const again = await review(population.keys.admin, { Approve: true });
      assert.equal(again.status, 409);
      assert.equal(again.json.ResponseStatus.Errors[0].ErrorCode, "1202");

      await update(population.keys.personB, { ShortDescription: "" });
      await review(population.keys.admin, { Approve: true });
      strategy = await row(id);
      assert.deepEqual(
        [strategy.short_description, strategy.long_description],
        [null, "Long one"],
        "empty clears, omitted keeps",
      );

      await update(population.keys.personB, { LongDescription: "Misleading claims" });
      const rejected = await review(population.keys.admin, { Approve: false, Note: "no guarantees, please" });
      assert.deepEqual(rejected.json.Results, [{ StrategyId: id, ReviewStatus: "rejected" }]);
      strategy = await row(id);
      assert.deepEqual([strategy.long_description, strategy.review_note], ["Long one", "no guarantees, please"]);
    });

    test("only the owner (or a service admin) may update, within the limits; WL and GEO answer 501", async () => {
      const id = (await add("GEN", population.keys.personA, { StrategyName: "Owned", StartingCapital: 50000 })).json
        .Results[0].StrategyId;
      const update = (key: string, body: Record<string, unknown>, server: "WL" | "GEN" | "GEO" = "GEN") =>
        service.call(server, "PUT", "/Strategies/UpdateStrategy", { key, body: { StrategyId: id, ...body } });
      // A's administrators see the private strategy (403); to person B it is not there (404, as for no strategy).
      for (const who of ["wlAdminA", "geoAdmin"] as const) {
        assert.equal((await update(population.keys[who], { Name: "Taken Over" })).status, 403, who);
      }
      const outsider = await update(population.keys.personB, { Name: "Taken Over" });
      assert.equal(outsider.status, 404);
      assert.equal(outsider.json.ResponseStatus.Errors[0].Message, `No strategy ${id}`);
      assert.equal((await update(population.keys.admin, { Name: "Renamed By Admin" })).status, 200);
      assert.equal((await row(id)).name, "Renamed By Admin");
      const limits = await update(population.keys.personA, {
        Name: "no",
        ShortDescription: "s".repeat(301),
        LongDescription: "l".repeat(20_001),
      });
      assert.equal(limits.status, 400);
      // Shape first (lengths of the schema), then content (the name's rules).
      assert.deepEqual(fieldsOf(limits), ["LongDescription", "ShortDescription"]);
      const badName = await update(population.keys.personA, { Name: "no" });
      assert.deepEqual(fieldsOf(badName), ["Name"]);
      assert.equal((await row(id)).name, "Renamed By Admin", "nothing written");
      const unknown = await service.call("GEN", "PUT", "/Strategies/UpdateStrategy", {
        key: population.keys.personA,
        body: { StrategyId: 987654, Name: "Whatever" },
      });
      assert.equal(unknown.status, 404);
      for (const server of ["WL", "GEO"] as const) {
        const r = await update(population.keys.personA, { Name: "Elsewhere" }, server);
        assert.equal(r.status, 501, server);
      }
    });
  });
}
