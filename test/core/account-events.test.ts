import assert from "node:assert/strict";
import { test } from "node:test";
import { enablementEvents } from "../../src/core/autotrade/account-events.js";

const on = { enabled: true, syncEnabled: true };
const off = { enabled: false, syncEnabled: false };

test("a change of the flags is an event only where it changes a setup of the account", () => {
  assert.deepEqual(enablementEvents([on], { autotradeEnabled: false }), ["AutotradeDisabled"]);
  assert.deepEqual(enablementEvents([off], { autotradeEnabled: false }), []);
  assert.deepEqual(enablementEvents([off, on], { autotradeEnabled: true, syncEnabled: true }), [
    "AutotradeEnabled",
    "AutoSyncEnabled",
  ]);
  assert.deepEqual(enablementEvents([on], { autotradeEnabled: true, syncEnabled: false }), ["AutoSyncDisabled"]);
  assert.deepEqual(enablementEvents([on, off], {}), []);
  assert.deepEqual(enablementEvents([], { autotradeEnabled: false }), []);
});
