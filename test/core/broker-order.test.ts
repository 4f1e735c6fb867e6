import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  BROKER_TERMINAL,
  type BrokerOrderEvent,
  type BrokerOrderState,
  brokerTransition,
  isOpenAtBroker,
} from "../../src/core/autotrade/broker-order.js";
import type { OrderStatus } from "../../src/core/orders/status.js";

/**
 * The broker-order state machine's invariants, over random streams of what
 * the service asks and what the broker answers (repeats and answers out of
 * place included, as a real broker's reports come).
 */

const EVENTS: readonly BrokerOrderEvent[] = [
  "acknowledged",
  "rejected",
  "partiallyFilled",
  "filled",
  "cancelRequested",
  "cancelRejected",
  "canceled",
  "replaceRequested",
  "replaceRejected",
  "replaced",
  "expired",
];
/** What the broker says of the order itself (not answers to a request). */
const BROKER_WORDS: readonly BrokerOrderEvent[] = [
  "acknowledged",
  "rejected",
  "partiallyFilled",
  "filled",
  "canceled",
  "expired",
];
const LIVE: readonly OrderStatus[] = ["PendingNew", "Working", "PartiallyFilled"];
const PENDING: readonly OrderStatus[] = ["PendingCancel", "PendingReplace"];
const START: BrokerOrderState = { status: "PendingNew", prior: null };

/** Every state the machine can reach from a new order, found by walking it. */
function reachable(): BrokerOrderState[] {
  const seen = new Map<string, BrokerOrderState>([[JSON.stringify(START), START]]);
  const queue = [START];
  for (let state = queue.shift(); state; state = queue.shift()) {
    for (const event of EVENTS) {
      const moved = brokerTransition(state, event);
      if (!moved.ok || seen.has(JSON.stringify(moved.state))) continue;
      seen.set(JSON.stringify(moved.state), moved.state);
      queue.push(moved.state);
    }
  }
  return [...seen.values()];
}

test("terminal statuses absorb every event, and are exactly the ones not open at the broker", () => {
  for (const state of reachable()) {
    const terminal = BROKER_TERMINAL.has(state.status);
    assert.equal(isOpenAtBroker(state.status), !terminal, state.status);
    if (!terminal) continue;
    assert.equal(state.prior, null);
    for (const event of EVENTS) assert.equal(brokerTransition(state, event).ok, false, `${state.status} ${event}`);
  }
});

test("a prior status is kept exactly while a request is pending, and it is a live status", () => {
  for (const state of reachable()) {
    assert.equal(state.prior !== null, PENDING.includes(state.status), JSON.stringify(state));
    if (state.prior !== null) assert.ok(LIVE.includes(state.prior), JSON.stringify(state));
  }
});

test("a refused cancel or replace rolls back to the status before the request", () => {
  for (const status of LIVE) {
    const asked = brokerTransition({ status, prior: null }, "cancelRequested");
    assert.ok(asked.ok);
    assert.deepEqual(brokerTransition(asked.state, "cancelRejected"), { ok: true, state: { status, prior: null } });
  }
  for (const status of ["Working", "PartiallyFilled"] as const) {
    const asked = brokerTransition({ status, prior: null }, "replaceRequested");
    assert.ok(asked.ok);
    assert.deepEqual(brokerTransition(asked.state, "replaceRejected"), { ok: true, state: { status, prior: null } });
  }
  // A fill while the request was pending: the refusal returns to a partly filled order.
  const asked = brokerTransition({ status: "Working", prior: null }, "cancelRequested");
  assert.ok(asked.ok);
  const filledMeanwhile = brokerTransition(asked.state, "partiallyFilled");
  assert.ok(filledMeanwhile.ok);
  assert.deepEqual(brokerTransition(filledMeanwhile.state, "cancelRejected"), {
    ok: true,
    state: { status: "PartiallyFilled", prior: null },
  });
});

test("what the broker says of an order is heard while a request is pending, as it would be without it", () => {
  // A request pending must never leave the broker's own word unheard: the order would be stuck.
  for (const state of reachable().filter((s) => s.prior !== null)) {
    for (const word of BROKER_WORDS) {
      const without = brokerTransition({ status: state.prior as OrderStatus, prior: null }, word);
      if (!without.ok) continue;
      assert.ok(brokerTransition(state, word).ok, `${state.status} over ${state.prior}: ${word}`);
    }
  }
});

test("a cancel or replace is only answered while asked for; replaced and rejected come only from where they can", () => {
  for (const state of reachable()) {
    const moves = (event: BrokerOrderEvent) => brokerTransition(state, event).ok;
    if (state.status !== "PendingCancel") assert.equal(moves("cancelRejected"), false, state.status);
    if (state.status !== "PendingReplace") {
      assert.equal(moves("replaceRejected"), false, state.status);
      assert.equal(moves("replaced"), false, state.status);
    }
    if (moves("rejected")) assert.ok(state.status === "PendingNew" || state.prior === "PendingNew", state.status);
  }
});

/** A broker's report in a random stream: an event, or a fill of some quantity. */
const step = fc.oneof(
  fc.constantFrom(...EVENTS.filter((e) => e !== "partiallyFilled" && e !== "filled")).map((event) => ({ event })),
  fc.integer({ min: 1, max: 60 }).map((quantity) => ({ fill: quantity })),
);

test("no stream of events reaches an illegal state, overfills, or leaves a terminal status", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 100 }), fc.array(step, { maxLength: 60 }), (quantity, stream) => {
      let state = START;
      let filled = 0;
      for (const report of stream) {
        let event: BrokerOrderEvent;
        let fillQuantity = 0;
        if ("fill" in report) {
          // A broker never fills more than is left: a fill is clamped to what remains.
          fillQuantity = Math.min(report.fill, quantity - filled);
          if (fillQuantity === 0) continue;
          event = filled + fillQuantity === quantity ? "filled" : "partiallyFilled";
        } else {
          event = report.event;
        }
        const before = state;
        const moved = brokerTransition(state, event);
        if (!moved.ok) {
          assert.deepEqual(state, before);
          continue;
        }
        assert.ok(!BROKER_TERMINAL.has(before.status), `${before.status} left by ${event}`);
        state = moved.state;
        filled += fillQuantity;
        assert.ok(filled <= quantity);
        assert.equal(state.status === "Filled", filled === quantity, `${state.status} with ${filled} of ${quantity}`);
        if (state.status === "PartiallyFilled" || state.prior === "PartiallyFilled") assert.ok(filled > 0);
        if (filled > 0 && !BROKER_TERMINAL.has(state.status)) {
          assert.ok(state.status === "PartiallyFilled" || state.prior === "PartiallyFilled", JSON.stringify(state));
        }
      }
    }),
  );
});
