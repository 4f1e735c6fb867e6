import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { ERRORS } from "../../src/core/errors.js";

test("every error code is defined once", () => {
  const codes = Object.values(ERRORS).map((e) => e.code);
  assert.equal(new Set(codes).size, codes.length);
});

test("every error code is documented in docs/errors.md with its HTTP status", () => {
  const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
  for (const [name, error] of Object.entries(ERRORS)) {
    const row = doc.split("\n").find((line) => line.startsWith(`| ${error.code} |`));
    assert.ok(row, `${error.code} (${name}) is missing from docs/errors.md`);
    assert.ok(row.includes(`| ${error.status} |`), `${error.code} is documented with another status`);
  }
  const documented = [...doc.matchAll(/^\| (\d{4}) \|/gm)].map((m) => m[1]);
  const defined = new Set<string>(Object.values(ERRORS).map((e) => e.code));
  for (const code of documented) assert.ok(defined.has(code ?? ""), `docs/errors.md documents unknown code ${code}`);
});
