import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { serviceLogger } from "../../src/log.js";
import { readiness } from "../../src/services/readiness.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { BACKENDS, freshStorage } from "../helpers/service.js";

/**
 * Readiness and the trading frame's journal (src/services/readiness.ts): a
 * process whose journal can write nothing more (its thread stopped:
 * test/store/journal-thread.test.ts) or whose storage takes no write now
 * would fail every order, so it is not ready; GET /readyz answers what this
 * says (test/http/probes.test.ts, test/http/storage-unavailable.test.ts).
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
            journal: { failure: () => journalFailure, probe: async () => undefined },
            fillLoop: () => ({ running: true, tickMs: 1000, caughtUpAtMs: now, quotesWorked: 0 }),
            systemNow: () => now,
            logger: serviceLogger("silent"),
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

    test("a journal whose write fails or does not answer makes the process not ready: its code answered, its words logged", async () => {
      const fresh = await freshStorage(backend);
      try {
        const now = Date.now();
        let probe: () => Promise<void> = async () => undefined;
        const logged: { msg: string; check: string; err: { message: string } }[] = [];
        const ask = async () =>
          (
            await readiness({
              storage: fresh.storage,
              journal: {
                failure: () => null,
                probe: () => probe(),
              },
              fillLoop: () => ({ running: true, tickMs: 1000, caughtUpAtMs: now, quotesWorked: 0 }),
              systemNow: () => now,
              logger: serviceLogger("warn", { write: (line: string) => logged.push(JSON.parse(line)) }),
            })
          ).checks.journal;
        await migrateToLatest(fresh.storage);
        assert.equal(await ask(), "ok");
        const words = "journal: could not extend file base/16384/2619: No space left on device";
        probe = () => Promise.reject(Object.assign(new Error(words), { code: "53100" }));
        assert.equal(await ask(), "cannot write (53100)");
        assert.deepEqual(
          logged.map((line) => [line.msg, line.check, line.err.message]),
          [["readiness: cannot write", "journal", words]],
        );
        probe = () => Promise.reject(new Error("journal: something without a code"));
        assert.equal(await ask(), "cannot write");
        probe = () => new Promise(() => undefined);
        assert.equal(await ask(), "cannot write: no answer within 2000 ms");
      } finally {
        await fresh.dispose();
      }
    });
  });
}
