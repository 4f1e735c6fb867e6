import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readiness } from "../../src/services/readiness.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { BACKENDS, freshStorage } from "../helpers/service.js";

/**
 * Readiness and the trading frame's journal (src/services/readiness.ts): a
 * process whose journal can write nothing more (its thread stopped:
 * test/store/journal-thread.test.ts) would fail every order, so it is not
 * ready; GET /readyz answers what this says (test/http/probes.test.ts).
 */

for (const backend of BACKENDS) {
  describe(`readiness and the journal (${backend})`, () => {
    test("a journal that stopped makes the process not ready, naming why; the other checks still pass", async () => {
      const fresh = await freshStorage(backend);
      try {
        await migrateToLatest(fresh.storage);
        let journalFailure: string | null = null;
        const now = Date.now();
        const ask = () =>
          readiness({
            storage: fresh.storage,
            journalFailure: () => journalFailure,
            fillLoop: () => ({ running: true, tickMs: 1000, caughtUpAtMs: now, quotesWorked: 0 }),
            systemNow: () => now,
          });
        assert.deepEqual(await ask(), {
          ready: true,
          checks: { storage: "ok", migrations: "ok", journal: "ok", fillLoop: "ok" },
        });
        journalFailure = "the journal's thread exited (3)";
        assert.deepEqual(await ask(), {
          ready: false,
          checks: {
            storage: "ok",
            migrations: "ok",
            journal: "stopped: the journal's thread exited (3)",
            fillLoop: "ok",
          },
        });
      } finally {
        await fresh.dispose();
      }
    });
  });
}
