import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  APPROVAL_STATUSES,
  type ApprovalEvent,
  afterBusinessDays,
  isFinal,
  nextApprovalStatus,
} from "../../src/core/autotrade/approvals.js";

/** The approval request's state table and its business-day deadline (src/core/autotrade/approvals.ts). */

const EVENTS: readonly ApprovalEvent[] = ["approve", "decline", "expire", "started", "awaitBroker", "fail"];
const DAY = 86_400_000;

test("final statuses are left by no event; every other status reaches a final one", () => {
  for (const status of APPROVAL_STATUSES) {
    const moves = EVENTS.map((event) => nextApprovalStatus(status, event)).filter((next) => next !== null);
    if (isFinal(status)) assert.deepEqual(moves, [], status);
    else assert.ok(moves.length > 0, status);
  }
  assert.equal(nextApprovalStatus("PendingCustomer", "started"), null, "nothing starts before approval");
  assert.equal(nextApprovalStatus("PendingBroker", "awaitBroker"), null);
  assert.equal(nextApprovalStatus("PendingCustomer", "approve"), "Processing");
  assert.equal(nextApprovalStatus("Processing", "awaitBroker"), "PendingBroker");
});

test("business days skip weekends: Friday plus one is Monday, Monday plus ten is two weeks on", () => {
  const friday = Date.parse("2027-04-09T15:00:00Z");
  assert.equal(afterBusinessDays(friday, 1), friday + 3 * DAY);
  const monday = Date.parse("2027-04-05T10:00:00Z");
  assert.equal(afterBusinessDays(monday, 10), monday + 14 * DAY);
  const saturday = Date.parse("2027-04-10T10:00:00Z");
  assert.equal(afterBusinessDays(saturday, 1), saturday + 2 * DAY);
});

test("n business days land on a weekday, at the same time of day, between n and 2n + 2 days on", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 1, max: 60 }), (from, n) => {
      const at = afterBusinessDays(from, n);
      const weekday = new Date(at).getUTCDay();
      assert.ok(weekday !== 0 && weekday !== 6);
      assert.equal((at - from) % DAY, 0);
      assert.ok(at - from >= n * DAY && at - from <= (2 * n + 2) * DAY);
    }),
  );
});
