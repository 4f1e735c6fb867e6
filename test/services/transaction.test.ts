import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { membership } from "../../src/core/access.js";
import { ControllableClock } from "../../src/core/clock.js";
import { Refusal } from "../../src/core/errors.js";
import { asPersonId } from "../../src/core/ids.js";
import { ensureServiceAdmin } from "../../src/services/bootstrap.js";
import { listGeoSites } from "../../src/services/geo-sites.js";
import { keyCacheOf } from "../../src/services/key-cache.js";
import { authenticate, createKey, revokeKey } from "../../src/services/keys.js";
import { createPerson } from "../../src/services/people.js";
import { cachedRecord } from "../../src/services/record-cache.js";
import type { Runtime } from "../../src/services/runtime.js";
import { createSite } from "../../src/services/sites.js";
import { follows, subscribe } from "../../src/services/subscriptions.js";
import { createSystem } from "../../src/services/systems.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { afterCommit, withTransaction } from "../../src/store/transaction.js";
import { BACKENDS, freshStorage, type TestStorage, until } from "../helpers/service.js";

/**
 * Services compose inside one transaction through the context
 * (docs/decisions.md "Services in one transaction"): a service called with a
 * context carrying a transaction joins it, sees what was written before it in
 * it, and commits or rolls back with it; work meant for after the commit waits
 * for the outermost one.
 */

const TABLES = ["persons", "access_keys", "sites", "strategies", "subscriptions"] as const;

for (const backend of BACKENDS) {
  describe(`services in one transaction (${backend})`, () => {
    let fresh: TestStorage;
    let runtime: Runtime;
    let n = 0;

    before(async () => {
      fresh = await freshStorage(backend);
      await migrateToLatest(fresh.storage);
      runtime = { storage: fresh.storage, clock: new ControllableClock(() => Date.UTC(2026, 0, 5, 15)) };
    });
    after(() => fresh?.dispose());

    /** How many rows each table the services here write holds. */
    const rows = async () => {
      const counts: Record<string, number> = {};
      for (const table of TABLES) {
        const row = await fresh.storage.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow();
        counts[table] = Number(row.n);
      }
      return counts;
    };

    const newPerson = (ctx: Runtime) => {
      n += 1;
      return createPerson(ctx, {
        email: `joined${n}@example.com`,
        firstName: "Joined",
        lastName: `No${n}`,
        role: "person",
      });
    };

    const newSystem = (ctx: Runtime, ownerPersonId: number) =>
      createSystem(ctx, { ownerPersonId, name: `Joined ${n}`, startingCapital: "100000", isPublic: true });

    test("services called in a caller's transaction join it: each sees what was written before it, uncommitted", async () => {
      const caller = { personId: asPersonId(1), role: "admin" as const, ...membership(null, null), platformId: null };
      const done = await withTransaction(runtime, async (ctx) => {
        const site = await createSite(ctx, { kind: "geo", name: `Joined region ${n}` });
        const { personId } = await newPerson(ctx);
        // The system's owner, and the subscriber, are the person written just before.
        const strategyId = await newSystem(ctx, personId);
        await subscribe(ctx, strategyId, personId, null);
        const key = await createKey(ctx, { personId });
        return {
          site,
          personId,
          strategyId,
          key,
          following: await follows(ctx, strategyId, personId),
          geoSites: await listGeoSites({ ...ctx, caller }),
        };
      });
      assert.equal(done.following, true);
      assert.ok(done.geoSites.some((geo) => geo.id === done.site.id));
      assert.equal(await follows(runtime, done.strategyId, done.personId), true, "committed together");
      const authenticated = await authenticate(runtime, done.key.accessKey);
      assert.equal(authenticated.ok && authenticated.principal.personId, done.personId);
    });

    test("a caller failing after the services it called leaves nothing of theirs written", async () => {
      const before = await rows();
      await assert.rejects(
        withTransaction(runtime, async (ctx) => {
          await createSite(ctx, { kind: "geo", name: "Never region" });
          const { personId } = await newPerson(ctx);
          const strategyId = await newSystem(ctx, personId);
          await subscribe(ctx, strategyId, personId, null);
          await createKey(ctx, { personId });
          throw new Error("the caller fails after them");
        }),
        /the caller fails after them/,
      );
      assert.deepEqual(await rows(), before);
    });

    test("a joined service's refusal undoes what the services before it wrote", async () => {
      const before = await rows();
      await assert.rejects(
        withTransaction(runtime, async (ctx) => {
          const { personId } = await newPerson(ctx);
          await createKey(ctx, { personId, platformId: 999_999 });
        }),
        (error) => error instanceof Refusal && error.entries[0]?.field === "PlatformId",
      );
      assert.deepEqual(await rows(), before);
    });

    test("transactions nested three deep join the outermost (SQLite's one writer never waits on itself)", async () => {
      const chosen = `nested-bootstrap-key-${backend}-0123456789`;
      const outcome = await withTransaction(runtime, (outer) =>
        withTransaction(outer, (middle) => ensureServiceAdmin(middle, chosen)),
      );
      assert.equal(outcome.kind, "created");
      assert.equal((await authenticate(runtime, chosen)).ok, true);
    });

    test("a first start whose key is refused leaves no administrator without a key (bootstrap is one transaction)", async () => {
      const before = await rows();
      await assert.rejects(ensureServiceAdmin(runtime, "short"), /A key is 16 to 200 characters/);
      assert.deepEqual(await rows(), before);
    });

    /** A person with a key this process keeps in memory (on PostgreSQL once its notifications are heard). */
    const keptKey = async () => {
      const { personId } = await newPerson(runtime);
      const key = await createKey(runtime, { personId });
      const cache = keyCacheOf(fresh.storage);
      assert.equal((await authenticate(runtime, key.accessKey)).ok, true);
      await until(() => cache.keeping);
      assert.equal((await authenticate(runtime, key.accessKey)).ok, true);
      assert.ok(cache.size.known > 0);
      return { key, cache };
    };

    test("a key change in a caller's transaction that rolls back leaves the kept keys right as they were", async () => {
      const { key, cache } = await keptKey();
      const kept = cache.size.known;
      await assert.rejects(
        withTransaction(runtime, async (ctx) => {
          await revokeKey(ctx, key.id);
          assert.equal(cache.size.known, kept, "nothing is forgotten before the caller's transaction ends");
          assert.equal((await authenticate(runtime, key.accessKey)).ok, true, "the revocation has not committed");
          throw new Error("the caller fails after the revocation");
        }),
        /the caller fails after the revocation/,
      );
      assert.equal(cache.size.known, kept, "nothing committed: nothing to forget");
      assert.equal((await authenticate(runtime, key.accessKey)).ok, true);
      const stored = await fresh.storage.db
        .selectFrom("access_keys")
        .select("revoked_at")
        .where("id", "=", key.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.revoked_at, null);
    });

    test("a key change in a caller's transaction that commits empties the kept keys after that commit", async () => {
      const { key, cache } = await keptKey();
      const kept = cache.size.known;
      await withTransaction(runtime, async (ctx) => {
        await revokeKey(ctx, key.id);
        // The caller goes on after the change: the cache waits for its commit, not the change's.
        await createSite(ctx, { kind: "geo", name: `After the revocation ${n}` });
        assert.equal(cache.size.known, kept);
        assert.equal((await authenticate(runtime, key.accessKey)).ok, true, "the revocation has not committed");
      });
      assert.equal(cache.size.known, 0, "emptied once the caller's transaction committed");
      const revoked = await authenticate(runtime, key.accessKey);
      assert.equal(!revoked.ok && revoked.error, "RevokedKey");
    });

    test("work for after the commit runs once the outermost transaction commits, and never on a rollback", async () => {
      const ran: string[] = [];
      await withTransaction(runtime, async (outer) => {
        await withTransaction(outer, async (inner) => {
          afterCommit(inner, () => {
            ran.push("inner");
          });
        });
        assert.equal(ran.length, 0, "the inner one joined: nothing has committed yet");
        afterCommit(outer, () => {
          ran.push("outer");
        });
      });
      assert.deepEqual(ran, ["inner", "outer"]);
      await assert.rejects(
        withTransaction(runtime, async (ctx) => {
          afterCommit(ctx, () => {
            ran.push("rolled back");
          });
          throw new Error("rolls back");
        }),
        /rolls back/,
      );
      afterCommit(runtime, () => {
        ran.push("outside a transaction, at once");
      });
      assert.deepEqual(ran, ["inner", "outer", "outside a transaction, at once"]);
    });

    test("work for after the commit that answers a promise is awaited before the transaction answers", async () => {
      let done = false;
      await withTransaction(runtime, async (ctx) => {
        afterCommit(ctx, async () => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          done = true;
        });
      });
      assert.equal(done, true);
    });

    test("what a record computes inside a transaction answers it but is not kept; what is kept answers it", async () => {
      const compute = (value: string) => async () => value;
      const inside = await withTransaction(runtime, (ctx) =>
        cachedRecord(ctx, "uncommitted", "1", compute("in"), () => 1),
      );
      assert.equal(inside, "in");
      assert.equal(await cachedRecord(runtime, "uncommitted", "1", compute("out"), () => 1), "out");
      const kept = await withTransaction(runtime, (ctx) =>
        cachedRecord(ctx, "uncommitted", "1", compute("in"), () => 1),
      );
      assert.equal(kept, "out");
    });
  });
}
