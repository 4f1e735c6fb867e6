import assert from "node:assert/strict";
import type { CallResult } from "./service.js";

/** A refusal in the v4 error shape with this status, whose first error names this field (and carries this code). */
export function assertRefused(r: CallResult, status: number, field?: string, code?: string): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.Results, null, r.text);
  const first = r.json.ResponseStatus?.Errors?.[0];
  assert.ok(first, `an error entry: ${r.text}`);
  if (field !== undefined) assert.equal(first.FieldName, field, r.text);
  if (code !== undefined) assert.equal(first.ErrorCode, code, r.text);
}
