import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPerson } from "../../src/services/people.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";

for (const backend of BACKENDS) {
  describe(`cursor pagination (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let serial = 0;
    const addMember = async (siteId: number) =>
      (
        await createPerson(service.app.runtime, {
          email: `member${++serial}@example.com`,
          firstName: `Member${serial}`,
          lastName: "Paged",
          role: "person",
          siteId,
        })
      ).personId;
    const page = async (query: Record<string, string>, key?: string) => {
      const r = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", {
        query,
        ...(key ? { key } : {}),
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return {
        ids: r.json.Results.map((m: { Id: number }) => m.Id) as number[],
        next: r.json.Pagination.next_cursor as string | null,
        prev: r.json.Pagination.prev_cursor as string | null,
      };
    };

    before(async () => {
      service = await startTestService(backend);
      population = await populate(service);
      for (let i = 0; i < 8; i++) await addMember(population.siteA);
    });
    after(() => service.close());

    test("walking forward across inserts neither skips nor repeats, and ends with an empty next_cursor", async () => {
      const site = String(population.siteA);
      const seen: number[] = [];
      const inserted: number[] = [];
      let result = await page({ WhiteLabelSiteId: site, Limit: "3" });
      assert.equal(result.prev, null, "the first page has no previous page");
      seen.push(...result.ids);
      while (result.next) {
        // Another client adds members between our calls.
        inserted.push(await addMember(population.siteA));
        result = await page({ WhiteLabelSiteId: site, Limit: "3", Cursor: result.next });
        seen.push(...result.ids);
      }
      assert.equal(new Set(seen).size, seen.length, "no member repeats");
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => a - b),
        "oldest first",
      );
      for (const id of inserted) assert.ok(seen.includes(id), `member ${id} inserted during the walk is reached`);
      const all = await page({ WhiteLabelSiteId: site });
      assert.deepEqual(seen, all.ids, "the walk saw exactly what one full page shows");
      assert.equal(all.next, null);
    });

    test("walking backward from the last page returns every page again, and the first has no prev_cursor", async () => {
      const site = String(population.siteA);
      const forward: number[][] = [];
      let result = await page({ WhiteLabelSiteId: site, Limit: "4" });
      forward.push(result.ids);
      while (result.next) {
        result = await page({ WhiteLabelSiteId: site, Limit: "4", Cursor: result.next });
        forward.push(result.ids);
      }
      const backward: number[][] = [result.ids];
      while (result.prev) {
        result = await page({ WhiteLabelSiteId: site, Limit: "4", Cursor: result.prev });
        backward.unshift(result.ids);
      }
      assert.deepEqual(backward.flat(), forward.flat());
      assert.deepEqual(backward[0], forward[0]);
    });

    test("AscendingOrder=false walks newest first", async () => {
      const site = String(population.siteA);
      const all = (await page({ WhiteLabelSiteId: site })).ids;
      const seen: number[] = [];
      let result = await page({ WhiteLabelSiteId: site, Limit: "5", AscendingOrder: "false" });
      seen.push(...result.ids);
      while (result.next) {
        result = await page({ WhiteLabelSiteId: site, Limit: "5", AscendingOrder: "false", Cursor: result.next });
        seen.push(...result.ids);
      }
      assert.deepEqual(seen, [...all].reverse());
    });

    test("a tampered cursor is refused", async () => {
      const site = String(population.siteA);
      const { next } = await page({ WhiteLabelSiteId: site, Limit: "2" });
      assert.ok(next);
      const [body, signature] = next.split(".") as [string, string];
      const payload = JSON.parse(Buffer.from(body, "base64url").toString());
      payload.k = [1];
      const forged = `${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${signature}`;
      for (const cursor of [forged, `${next}x`, "garbage", `${body}.`]) {
        const r = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", {
          query: { WhiteLabelSiteId: site, Cursor: cursor },
        });
        assert.equal(r.status, 400, cursor);
        assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, "1104");
        assert.equal(r.json.ResponseStatus.Errors[0].FieldName, "Cursor");
      }
    });

    test("a cursor only continues its own query and order", async () => {
      const { next } = await page({ WhiteLabelSiteId: String(population.siteA), Limit: "2" });
      assert.ok(next);
      const otherSite = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", {
        query: { WhiteLabelSiteId: String(population.siteB), Cursor: next },
      });
      assert.equal(otherSite.status, 400);
      const otherOrder = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", {
        query: { WhiteLabelSiteId: String(population.siteA), Cursor: next, AscendingOrder: "false" },
      });
      assert.equal(otherOrder.status, 400);
    });

    test("cursors are URL-safe", async () => {
      const { next } = await page({ WhiteLabelSiteId: String(population.siteA), Limit: "1" });
      assert.match(next ?? "", /^[A-Za-z0-9_.-]+$/);
    });

    test("Limit is 1 to 1000", async () => {
      for (const limit of ["0", "1001", "-1", "ten"]) {
        const r = await service.call("WL", "GET", "/General/GetWhiteLabelSiteUsers", {
          query: { WhiteLabelSiteId: String(population.siteA), Limit: limit },
        });
        assert.equal(r.status, 400, limit);
        assert.equal(r.json.ResponseStatus.Errors[0].FieldName, "Limit");
      }
      const max = await page({ WhiteLabelSiteId: String(population.siteA), Limit: "1000" });
      assert.equal(max.next, null);
    });

    test("an empty result has neither cursor", async () => {
      const { createSite } = await import("../../src/services/sites.js");
      const empty = await createSite(service.app.runtime, { kind: "whitelabel", name: "Empty" });
      const r = await page({ WhiteLabelSiteId: String(empty.id) });
      assert.deepEqual(r, { ids: [], next: null, prev: null });
    });
  });
}
