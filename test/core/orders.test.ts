import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { add, compare, type Decimal, decimal, formatDecimal, fromInteger, ZERO } from "../../src/core/decimal.js";
import {
  type Applied,
  applyEvent,
  averageFillPrice,
  leavesQuantity,
  newOrder,
  type OrderEvent,
  type OrderState,
} from "../../src/core/orders/order.js";
import {
  ACTIVE,
  CANCELLABLE,
  ORDER_STATUS_CODES,
  type OrderStatus,
  statusOfCode,
  TERMINAL,
  transition,
  WORKING,
} from "../../src/core/orders/status.js";

const ok = (applied: Applied): OrderState => {
  assert.ok(applied.ok, applied.ok ? "" : applied.reason);
  return applied.state;
};

test("the lifecycle of an order that fills in two parts", () => {
  let order = newOrder(decimal("10"));
  assert.equal(order.status, "PendingNew");
  order = ok(applyEvent(order, { id: "e1", kind: "accepted" }));
  assert.equal(order.status, "Working");
  order = ok(applyEvent(order, { id: "e2", kind: "fill", quantity: decimal("4"), price: decimal("100.5") }));
  assert.equal(order.status, "PartiallyFilled");
  assert.equal(formatDecimal(leavesQuantity(order)), "6");
  order = ok(applyEvent(order, { id: "e3", kind: "fill", quantity: decimal("6"), price: decimal("101") }));
  assert.equal(order.status, "Filled");
  assert.equal(formatDecimal(averageFillPrice(order) as Decimal), "100.8");
  assert.equal(formatDecimal(leavesQuantity(order)), "0");
});

test("illegal moves are refused and change nothing", () => {
  const pending = newOrder(decimal("1"));
  const fillWhilePending = applyEvent(pending, { id: "f", kind: "fill", quantity: decimal("1"), price: decimal("1") });
  assert.equal(fillWhilePending.ok, false, "an order does not fill before it works");
  const filled = ok(
    applyEvent(ok(applyEvent(pending, { id: "a", kind: "accepted" })), {
      id: "f",
      kind: "fill",
      quantity: decimal("1"),
      price: decimal("1"),
    }),
  );
  for (const kind of ["canceled", "accepted", "expired", "replaced", "rejected"] as const) {
    assert.equal(applyEvent(filled, { id: `x-${kind}`, kind }).ok, false, kind);
  }
  const working = ok(applyEvent(newOrder(decimal("2")), { id: "a", kind: "accepted" }));
  assert.equal(applyEvent(working, { id: "r", kind: "rejected" }).ok, false, "only a pending order is rejected");
  const overfill = applyEvent(working, { id: "f", kind: "fill", quantity: decimal("3"), price: decimal("1") });
  assert.equal(overfill.ok, false);
});

test("a repeated event is recognised and ignored", () => {
  const working = ok(applyEvent(newOrder(decimal("5")), { id: "a", kind: "accepted" }));
  const fill: OrderEvent = { id: "fill-1", kind: "fill", quantity: decimal("2"), price: decimal("10") };
  const once = ok(applyEvent(working, fill));
  const again = applyEvent(once, fill);
  assert.ok(again.ok && again.duplicate);
  assert.equal(formatDecimal(again.state.filledQuantity), "2");
});

test("status codes are the API's, and the named sets agree with the table", () => {
  assert.equal(ORDER_STATUS_CODES.PendingNew, "A");
  assert.equal(ORDER_STATUS_CODES.Expired, "C");
  assert.equal(statusOfCode("2"), "Filled");
  assert.equal(statusOfCode("9"), undefined);
  const all = Object.keys(ORDER_STATUS_CODES) as OrderStatus[];
  const events = [
    "held",
    "accepted",
    "partiallyFilled",
    "filled",
    "canceled",
    "replaced",
    "expired",
    "rejected",
  ] as const;
  for (const status of all) {
    const moves = events.filter((e) => transition(status, e).ok);
    assert.equal(TERMINAL.has(status), moves.length === 0, `${status} is terminal exactly when nothing moves it`);
    if (WORKING.has(status)) assert.ok(transition(status, "filled").ok);
    if (CANCELLABLE.has(status)) assert.ok(transition(status, "canceled").ok && ACTIVE.has(status));
  }
});

/** Random event streams, with repeats, against a much simpler model of what must hold. */
test("no sequence of events reaches an illegal state or loses quantity", () => {
  const event = fc.oneof(
    fc
      .constantFrom("held", "accepted", "canceled", "replaced", "expired", "rejected")
      .map((kind) => ({ kind }) as const),
    fc.integer({ min: 1, max: 600 }).map((q) => ({ kind: "fill" as const, quantity: q })),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1000 }),
      fc.array(fc.tuple(event, fc.nat(5)), { maxLength: 40 }),
      (qty, stream) => {
        const quantity = fromInteger(qty);
        let order = newOrder(quantity);
        let acceptedFills = ZERO;
        for (const [step, idSeed] of stream) {
          // Small id space: the same event id comes back now and then, as redelivered events do.
          const id = `${step.kind}-${"quantity" in step ? step.quantity : ""}-${idSeed}`;
          const e: OrderEvent =
            step.kind === "fill"
              ? { id, kind: "fill", quantity: fromInteger(step.quantity), price: decimal("12.34") }
              : { id, kind: step.kind };
          const before = order;
          const applied = applyEvent(order, e);
          if (!applied.ok) {
            assert.deepEqual(order, before, "a refused event changes nothing");
            continue;
          }
          if (!applied.duplicate && e.kind === "fill") acceptedFills = add(acceptedFills, e.quantity);
          if (TERMINAL.has(before.status)) assert.ok(applied.duplicate, "nothing leaves a terminal status");
          order = applied.state;
          assert.ok(compare(order.filledQuantity, quantity) <= 0, "never more filled than ordered");
          assert.equal(order.filledQuantity, acceptedFills, "filled = the sum of the fills taken");
          assert.equal(
            order.status === "Filled",
            compare(order.filledQuantity, quantity) === 0,
            "filled exactly when complete",
          );
          if (order.status === "PartiallyFilled") assert.ok(compare(order.filledQuantity, ZERO) > 0);
        }
      },
    ),
  );
});
