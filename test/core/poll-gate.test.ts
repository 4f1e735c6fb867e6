import assert from "node:assert/strict";
import { test } from "node:test";
import { PollGate } from "../../src/http/v4/poll-gate.js";

test("one poll per interval per key, answered with the wait left", () => {
  let now = 1_000_000;
  const gate = new PollGate(3_000, () => now);
  assert.equal(gate.admit("1:7"), null);
  now += 1_200;
  assert.equal(gate.admit("1:7"), 1_800);
  assert.equal(gate.admit("1:8"), null, "another caller is counted apart");
  now += 1_800;
  assert.equal(gate.admit("1:7"), null);
  now += 10_000;
  assert.equal(gate.admit("1:7"), null);
});
