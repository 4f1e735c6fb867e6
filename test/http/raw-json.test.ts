import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { successBody, successPayload } from "../../src/http/v4/envelope.js";
import { oncePer, rawJson } from "../../src/http/v4/raw-json.js";

/** Entries whose fields are any JSON, and the same entries with some fields serialized ahead. */
const entriesWithRawFields = fc
  .array(
    fc.array(fc.tuple(fc.string(), fc.jsonValue(), fc.boolean()), { maxLength: 8 }).map((fields) => ({
      plain: Object.fromEntries(fields.map(([name, value]) => [name, value])),
      raw: Object.fromEntries(fields.map(([name, value, ahead]) => [name, ahead ? rawJson(value) : value])),
    })),
    { maxLength: 5 },
  )
  .map((entries) => ({ plain: entries.map((e) => e.plain), raw: entries.map((e) => e.raw) }));

test("an answer with fields serialized ahead is byte for byte the answer of the same values", () => {
  fc.assert(
    fc.property(entriesWithRawFields, ({ plain, raw }) => {
      assert.equal(String(successPayload(raw)), JSON.stringify(successBody(plain)));
    }),
  );
});

test("long texts, dates, undefined fields and entries that are not objects serialize as JSON.stringify does", () => {
  const series = Array.from({ length: 400 }, (_, i) => ({ Date: `2026-01-${i}`, Equity: i * 1.5, Return: null }));
  const at = new Date("2026-03-10T21:00:00Z");
  const plain = [{ Id: 1, Series: series, At: at, Gone: undefined, Name: 'é\u2028"' }, 7, null, "text"];
  const raw = [
    { Id: 1, Series: rawJson(series), At: rawJson(at), Gone: undefined, Name: rawJson('é\u2028"') },
    7,
    null,
    "text",
  ];
  assert.equal(String(successPayload(raw)), JSON.stringify(successBody(plain)));
});

test("work derived from a kept record is done once per record", () => {
  let runs = 0;
  const derived = oncePer((record: { readonly n: number }) => {
    runs++;
    return record.n * 2;
  });
  const record = { n: 21 };
  assert.equal(derived(record), 42);
  assert.equal(derived(record), 42);
  assert.equal(runs, 1);
  assert.equal(derived({ n: 21 }), 42, "another version of the record is another basis");
  assert.equal(runs, 2);
});
