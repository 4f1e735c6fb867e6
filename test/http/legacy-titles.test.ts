import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { ERRORS } from "../../src/core/errors.js";
import { LEGACY_TITLES } from "../../src/http/legacy/titles.js";

/** The rows of the Legacy v3 table of docs/errors.md, as title -> the failure names it lists. */
function documentedTitles(): Map<string, Set<string>> {
  const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
  const legacy = doc.slice(doc.indexOf("## Legacy v3"));
  const rows = new Map<string, Set<string>>();
  for (const line of legacy.split("\n")) {
    const [, title, names] = line.split("|").map((cell) => cell.trim());
    if (!title || !names || title === "Title" || /^-+$/.test(title)) continue;
    assert.ok(!rows.has(title), `docs/errors.md documents "${title}" twice`);
    rows.set(title, new Set([...names.matchAll(/`(\w+)`/g)].map((m) => m[1] as string)));
  }
  return rows;
}

/** The table of src/http/legacy/titles.ts, the same way round. */
function tableTitles(): Map<string, Set<string>> {
  const rows = new Map<string, Set<string>>();
  for (const [name, title] of Object.entries(LEGACY_TITLES)) rows.set(title, (rows.get(title) ?? new Set()).add(name));
  return rows;
}

test("every refusal of the error catalogue has a legacy title", () => {
  for (const name of Object.keys(ERRORS)) assert.ok(Object.hasOwn(LEGACY_TITLES, name), name);
});

test("docs/errors.md documents every legacy title with the names answered with it, and nothing else", () => {
  const documented = documentedTitles();
  const table = tableTitles();
  for (const [title, names] of table) {
    assert.deepEqual(documented.get(title), names, `"${title}" in docs/errors.md`);
  }
  for (const title of documented.keys()) {
    assert.ok(table.has(title), `docs/errors.md documents "${title}", which src/http/legacy/titles.ts does not have`);
  }
});
