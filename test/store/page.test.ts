import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { createPerson } from "../../src/services/people.js";
import { createSite } from "../../src/services/sites.js";
import { fetchPage, type KeysetKey, type PageRequest } from "../../src/store/page.js";
import { BACKENDS, startTestService, type TestService } from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`keyset pages (${backend})`, () => {
    let service: TestService;
    let serial = 0;
    before(async () => {
      service = await startTestService(backend);
    });
    after(() => service.close());

    const readPage = (siteId: number, request: PageRequest) =>
      fetchPage(
        service.storage.db.selectFrom("persons").select(["id", "last_name"]).where("white_label_site_id", "=", siteId),
        ["last_name", "id"],
        (row): KeysetKey => [row.last_name, row.id],
        request,
      );

    test("walking any page size in either order, with rows inserted between pages, never skips or repeats", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom("Ng", "Smith", "Adams", "Zeta"), { minLength: 0, maxLength: 12 }),
          fc.array(fc.constantFrom("Aaron", "Smith", "Zz"), { maxLength: 4 }),
          fc.integer({ min: 1, max: 5 }),
          fc.boolean(),
          async (names, insertedNames, limit, ascending) => {
            const site = (await createSite(service.app.runtime, { kind: "whitelabel", name: "Paging" })).id;
            const add = async (lastName: string) =>
              createPerson(service.app.runtime, {
                email: `p${++serial}@paging.example.com`,
                firstName: "P",
                lastName,
                role: "person",
                siteId: site,
              });
            for (const name of names) await add(name);
            const original = (await readPage(site, { limit: 1000, ascending, position: null })).items.map((r) => r.id);
            const seen: number[] = [];
            const pending = [...insertedNames];
            let page = await readPage(site, { limit, ascending, position: null });
            seen.push(...page.items.map((r) => r.id));
            while (page.nextKey) {
              const next = pending.shift();
              if (next) await add(next);
              page = await readPage(site, { limit, ascending, position: { direction: "after", key: page.nextKey } });
              seen.push(...page.items.map((r) => r.id));
            }
            assert.equal(new Set(seen).size, seen.length, "no repeats");
            for (const id of original) assert.ok(seen.includes(id), `row ${id} present from the start is reached`);
            const final = (await readPage(site, { limit: 1000, ascending, position: null })).items.map((r) => r.id);
            assert.deepEqual(
              seen,
              final.filter((id) => seen.includes(id)),
              "in the query's order",
            );
          },
        ),
        { numRuns: 25 },
      );
    });

    test("walking back from the end with prev keys returns exactly the rows, in order", async () => {
      const site = (await createSite(service.app.runtime, { kind: "whitelabel", name: "Back" })).id;
      for (const name of ["b", "a", "c", "a", "b", "d", "a"]) {
        await createPerson(service.app.runtime, {
          email: `q${++serial}@paging.example.com`,
          firstName: "Q",
          lastName: name,
          role: "person",
          siteId: site,
        });
      }
      const all = (await readPage(site, { limit: 1000, ascending: true, position: null })).items.map((r) => r.id);
      let page = await readPage(site, { limit: 3, ascending: true, position: null });
      while (page.nextKey) {
        page = await readPage(site, { limit: 3, ascending: true, position: { direction: "after", key: page.nextKey } });
      }
      const back = [...page.items.map((r) => r.id)];
      while (page.prevKey) {
        page = await readPage(site, {
          limit: 3,
          ascending: true,
          position: { direction: "before", key: page.prevKey },
        });
        back.unshift(...page.items.map((r) => r.id));
      }
      assert.deepEqual(back, all);
    });
  });
}
