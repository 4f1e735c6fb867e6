import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { ERRORS } from "../../src/core/errors.js";

test("every error code is defined once", () => {
  const codes = Object.values(ERRORS).map((e) => e.code);
  assert.equal(new Set(codes).size, codes.length);
});

/** The rows of the code table in docs/errors.md, as code -> HTTP status. */
function documentedCodes(): Map<string, string> {
  const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
  const rows = new Map<string, string>();
  for (const line of doc.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    const [, code, status] = cells;
    if (code && status && /^\d{4}$/.test(code)) rows.set(code, status);
  }
  return rows;
}

test("every error code is documented in docs/errors.md with its HTTP status, and nothing else is", () => {
  const documented = documentedCodes();
  for (const [name, error] of Object.entries(ERRORS)) {
    assert.equal(documented.get(error.code), String(error.status), `${error.code} (${name}) in docs/errors.md`);
  }
  const defined = new Set<string>(Object.values(ERRORS).map((e) => e.code));
  for (const code of documented.keys()) assert.ok(defined.has(code), `docs/errors.md documents unknown code ${code}`);
});
