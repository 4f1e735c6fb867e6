import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllableClock } from "../../src/core/clock.js";

test("the clock follows the machine until it is set", () => {
  let machine = 1_000;
  const clock = new ControllableClock(() => machine);
  assert.equal(clock.nowMs(), 1_000);
  machine = 2_000;
  assert.equal(clock.now().getTime(), 2_000);
});

test("once set it stands still, and advancing moves it by exactly the seconds given", () => {
  let machine = 1_000;
  const clock = new ControllableClock(() => machine);
  clock.apply({ kind: "fixed", atMs: Date.parse("2026-01-05T14:30:00Z") });
  machine = 99_999;
  assert.equal(clock.now().toISOString(), "2026-01-05T14:30:00.000Z");
  clock.apply(clock.advancedBy(0.25));
  clock.apply(clock.advancedBy(3600));
  assert.equal(clock.now().toISOString(), "2026-01-05T15:30:00.250Z");
});

test("returning to system time follows the machine again", () => {
  const clock = new ControllableClock(() => 42, { kind: "fixed", atMs: 7 });
  assert.equal(clock.nowMs(), 7);
  clock.apply({ kind: "system" });
  assert.equal(clock.nowMs(), 42);
});
