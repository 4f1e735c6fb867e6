import assert from "node:assert/strict";
import { test } from "node:test";
import { journalOnThread } from "../../src/store/journal/journal-thread.js";
import { until } from "../helpers/service.js";
import { journalBatch } from "../helpers/store-rows.js";

/**
 * A journal whose writer's thread stops (src/store/journal/journal-thread.ts):
 * what waits for it and everything after fail with why, and the journal says
 * why it can write nothing more, which readiness reports (test/services/readiness.test.ts).
 */

const STOPPING_THREAD = new URL("../helpers/stopping-journal-thread.ts", import.meta.url);

test("a thread that exits: the request it had and every later one fail, and the journal says it stopped", async () => {
  const journal = journalOnThread(STOPPING_THREAD, { stop: "exit" });
  assert.equal(journal.failure, null, "it runs");
  await assert.rejects(journal.reserveIds("orders", 10), /^Error: the journal's thread exited \(3\)$/);
  assert.equal(journal.failure, "the journal's thread exited (3)");
  await assert.rejects(journal.commit(journalBatch({})), /exited \(3\)/);
  await journal.close();
});

test("a thread that fails as it starts: the journal says why, not only that it exited", async () => {
  const journal = journalOnThread(STOPPING_THREAD, { stop: "throw" });
  await until(() => journal.failure !== null);
  assert.equal(journal.failure, "unable to open database file");
  await assert.rejects(journal.commit(journalBatch({})), /unable to open database file/);
  await journal.close();
});
