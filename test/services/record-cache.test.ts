import assert from "node:assert/strict";
import { test } from "node:test";
import { cachedRecord, ROWS_KEPT } from "../../src/services/record-cache.js";
import type { Storage } from "../../src/store/storage.js";

/** The cache is kept per storage; a bare object stands for one, as nothing else of it is used. */
const storage = () => ({}) as Storage;

/** cachedRecord that counts its computations. */
function counted(on: Storage) {
  const runs = new Map<string, number>();
  const ask = (key: string, tag: string, weight = 1) =>
    cachedRecord(
      { storage: on },
      key,
      tag,
      async () => {
        runs.set(key, (runs.get(key) ?? 0) + 1);
        return `${key}@${tag}`;
      },
      () => weight,
    );
  return { ask, runs: (key: string) => runs.get(key) ?? 0 };
}

test("a value is computed once per tag, callers asking at once share it, and another tag computes anew", async () => {
  const { ask, runs } = counted(storage());
  assert.deepEqual(await Promise.all([ask("a", "1"), ask("a", "1")]), ["a@1", "a@1"]);
  assert.equal(await ask("a", "1"), "a@1");
  assert.equal(runs("a"), 1);
  assert.equal(await ask("a", "2"), "a@2");
  assert.equal(await ask("a", "2"), "a@2");
  assert.equal(runs("a"), 2);
});

test("each storage has caches of its own", async () => {
  const one = counted(storage());
  const other = counted(storage());
  await one.ask("a", "1");
  await other.ask("a", "1");
  assert.deepEqual([one.runs("a"), other.runs("a")], [1, 1]);
});

test("a failed computation is not kept", async () => {
  const on = storage();
  let fail = true;
  const ask = () =>
    cachedRecord(
      { storage: on },
      "k",
      "1",
      async () => {
        if (fail) throw new Error("storage went away");
        return "value";
      },
      () => 1,
    );
  await assert.rejects(ask(), /storage went away/);
  fail = false;
  assert.equal(await ask(), "value");
});

test("once the weights pass the bound, the least recently used entries go", async () => {
  const { ask, runs } = counted(storage());
  const heavy = ROWS_KEPT * 0.45;
  await ask("old", "1", heavy);
  await ask("used", "1", heavy);
  await ask("old", "1", heavy);
  // Three would pass the bound: "used" is the least recently used.
  await ask("new", "1", heavy);
  await ask("old", "1", heavy);
  await ask("new", "1", heavy);
  assert.deepEqual([runs("old"), runs("new")], [1, 1], "kept");
  await ask("used", "1", heavy);
  assert.equal(runs("used"), 2, "computed again");
});
