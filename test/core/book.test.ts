import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { decimal } from "../../src/core/decimal.js";
import {
  type Book,
  type BookResult,
  cancel,
  expire,
  fill,
  release,
  replace,
  submit,
} from "../../src/core/orders/book.js";
import { IndexedBook } from "../../src/core/orders/indexed-book.js";
import type { OrderStatus } from "../../src/core/orders/status.js";

const q = decimal;
const NOW = 1_000_000;

const ok = (result: BookResult): Book => {
  assert.ok(result.ok, result.ok ? "" : result.reason);
  return result.book;
};
const status = (book: Book, id: number): OrderStatus | undefined => book.get(id)?.state.status;

/** An entry (1) with a profit target (2) and a stop loss (3) in OCA group 7. */
function bracket(): Book {
  let book: Book = new Map();
  book = ok(submit(book, { id: 1, quantity: q("10") }, NOW));
  book = ok(submit(book, { id: 2, quantity: q("10"), parentId: 1, ocaGroup: 7, exit: true }, NOW));
  book = ok(submit(book, { id: 3, quantity: q("10"), parentId: 1, ocaGroup: 7, exit: true }, NOW));
  return book;
}

test("a bracket's exits wait for the entry and start working at its first fill, partial or not", () => {
  const book = bracket();
  assert.deepEqual([status(book, 1), status(book, 2), status(book, 3)], ["Working", "PendingNew", "PendingNew"]);
  const partly = fill(book, 1, q("4"), q("100"), "f1", NOW);
  assert.ok(partly.ok);
  assert.deepEqual(
    [status(partly.book, 1), status(partly.book, 2), status(partly.book, 3)],
    ["PartiallyFilled", "Working", "Working"],
    "the 4 filled are protected at once",
  );
  assert.deepEqual(
    partly.events.map((e) => [e.orderId, e.event.kind]),
    [
      [1, "fill"],
      [2, "accepted"],
      [3, "accepted"],
    ],
  );
  const done = fill(partly.book, 1, q("6"), q("100"), "f2", NOW);
  assert.ok(done.ok);
  assert.deepEqual(
    [status(done.book, 1), status(done.book, 2), status(done.book, 3)],
    ["Filled", "Working", "Working"],
  );
  assert.deepEqual(
    done.events.map((e) => [e.orderId, e.event.kind]),
    [[1, "fill"]],
  );
  const whole = ok(fill(bracket(), 1, q("10"), q("100"), "f", NOW));
  assert.deepEqual([status(whole, 2), status(whole, 3)], ["Working", "Working"], "a complete first fill too");
});

test("an order conditional on another (no exit) waits for its parent's complete fill", () => {
  let book = ok(submit(new Map(), { id: 1, quantity: q("10") }, NOW));
  book = ok(submit(book, { id: 2, quantity: q("5"), parentId: 1 }, NOW));
  book = ok(fill(book, 1, q("4"), q("100"), "f1", NOW));
  assert.equal(status(book, 2), "PendingNew", "a partial fill is not enough");
  assert.equal(status(ok(cancel(book, 1)), 2), "Canceled", "nor is a parent canceled after a partial fill");
  book = ok(fill(book, 1, q("6"), q("100"), "f2", NOW));
  assert.equal(status(book, 2), "Working");
});

test("working exits outlive the unfilled rest of their entry: canceled, expired or replaced", () => {
  const partly = ok(fill(bracket(), 1, q("4"), q("100"), "f1", NOW));
  const canceled = cancel(partly, 1);
  assert.ok(canceled.ok);
  assert.deepEqual(
    [status(canceled.book, 1), status(canceled.book, 2), status(canceled.book, 3)],
    ["Canceled", "Working", "Working"],
  );
  assert.deepEqual(
    canceled.events.map((e) => [e.orderId, e.event.kind]),
    [[1, "canceled"]],
  );
  const expired = ok(expire(partly, [1], NOW));
  assert.deepEqual([status(expired, 1), status(expired, 2), status(expired, 3)], ["Expired", "Working", "Working"]);
  const replaced = ok(replace(partly, 1, { id: 8, quantity: q("6") }, true, NOW));
  assert.deepEqual(
    [replaced.get(2)?.parentId, replaced.get(3)?.parentId],
    [1, 1],
    "they stay with the filled part they protect",
  );
  assert.deepEqual([status(replaced, 2), status(replaced, 3), status(replaced, 8)], ["Working", "Working", "Working"]);
  assert.equal(replaced.get(8)?.exit, false, "the replacement is an entry");
});

test("a filled profit target cancels the stop loss (one-cancels-all)", () => {
  let book = ok(fill(bracket(), 1, q("10"), q("100"), "f1", NOW));
  book = ok(fill(book, 2, q("10"), q("110"), "f2", NOW));
  assert.deepEqual([status(book, 2), status(book, 3)], ["Filled", "Canceled"]);
});

test("a partial fill of one OCA member leaves the other working", () => {
  let book = ok(fill(bracket(), 1, q("10"), q("100"), "f1", NOW));
  book = ok(fill(book, 3, q("3"), q("95"), "f2", NOW));
  assert.deepEqual([status(book, 2), status(book, 3)], ["Working", "PartiallyFilled"]);
});

test("canceling or expiring one OCA member cancels its sibling", () => {
  const working = ok(fill(bracket(), 1, q("10"), q("100"), "f1", NOW));
  const canceled = ok(cancel(working, 2));
  assert.deepEqual([status(canceled, 2), status(canceled, 3)], ["Canceled", "Canceled"]);
  const expired = ok(expire(working, [3], NOW));
  assert.deepEqual([status(expired, 2), status(expired, 3)], ["Canceled", "Expired"]);
});

test("children of an entry that never fills never work", () => {
  const canceled = ok(cancel(bracket(), 1));
  assert.deepEqual(
    [status(canceled, 1), status(canceled, 2), status(canceled, 3)],
    ["Canceled", "Canceled", "Canceled"],
  );
  const expired = ok(expire(bracket(), [1], NOW));
  assert.deepEqual([status(expired, 2), status(expired, 3)], ["Canceled", "Canceled"]);
  const refused = submit(canceled, { id: 9, quantity: q("1"), parentId: 1 }, NOW);
  assert.deepEqual(
    [status(ok(replace(bracket(), 1, { id: 8, quantity: q("10") }, true, NOW)), 2)],
    ["PendingNew"],
    "nor does a replaced entry's: its held exits pass to the replacement",
  );
  assert.equal(refused.ok, false, "a conditional order on a dead parent is refused");
  const afterFill = submit(
    ok(fill(bracket(), 1, q("10"), q("1"), "f", NOW)),
    { id: 9, quantity: q("1"), parentId: 1 },
    NOW,
  );
  assert.ok(afterFill.ok);
  assert.equal(status(afterFill.book, 9), "Working", "conditional on a filled parent: works at once");
});

test("a parked order is held until its time, and released then", () => {
  let book = ok(submit(new Map(), { id: 1, quantity: q("5"), parkedUntilMs: NOW + 60_000 }, NOW));
  assert.equal(status(book, 1), "PendingNew");
  book = ok(release(book, NOW + 59_999));
  assert.equal(status(book, 1), "PendingNew");
  book = ok(release(book, NOW + 60_000));
  assert.equal(status(book, 1), "Working");
  assert.equal(
    fill(ok(submit(new Map(), { id: 2, quantity: q("1"), parkedUntilMs: NOW + 1 }, NOW)), 2, q("1"), q("1"), "f", NOW)
      .ok,
    false,
    "a held order does not fill",
  );
});

test("replace: keeping the OCA group, or not", () => {
  const working = ok(fill(bracket(), 1, q("10"), q("100"), "f1", NOW));
  const kept = ok(replace(working, 2, { id: 4, quantity: q("10") }, true, NOW));
  assert.deepEqual([status(kept, 2), status(kept, 3), status(kept, 4)], ["Replaced", "Working", "Working"]);
  assert.equal(kept.get(4)?.ocaGroup, 7);
  const afterFill = ok(fill(kept, 4, q("10"), q("112"), "f2", NOW));
  assert.equal(status(afterFill, 3), "Canceled", "the new order cancels the old sibling");
  const dropped = ok(replace(working, 2, { id: 5, quantity: q("10") }, false, NOW));
  assert.deepEqual([status(dropped, 3), status(dropped, 5)], ["Canceled", "Working"]);
  assert.equal(dropped.get(5)?.ocaGroup, null);
});

test("replacing an entry before it fills moves its children to the new entry", () => {
  const replaced = ok(replace(bracket(), 1, { id: 8, quantity: q("12") }, true, NOW));
  assert.deepEqual([replaced.get(2)?.parentId, replaced.get(3)?.parentId], [8, 8]);
  assert.deepEqual(
    [status(replaced, 2), status(replaced, 3)],
    ["PendingNew", "PendingNew"],
    "the replace does not cancel them",
  );
  assert.deepEqual([replaced.get(2)?.exit, replaced.get(8)?.exit], [true, false]);
  const filled = ok(fill(replaced, 8, q("12"), q("99"), "f", NOW));
  assert.deepEqual([status(filled, 2), status(filled, 3)], ["Working", "Working"]);
  const newStop = ok(replace(filled, 3, { id: 10, quantity: q("12") }, true, NOW));
  assert.deepEqual(
    [newStop.get(10)?.exit, newStop.get(10)?.parentId, status(newStop, 10)],
    [true, 8, "Working"],
    "a replaced exit is an exit of the same entry, working at once for what it filled",
  );
  assert.equal(
    replace(filled, 8, { id: 9, quantity: q("1") }, true, NOW).ok,
    false,
    "a filled order cannot be replaced",
  );
});

test("random operations on brackets keep the contingency rules", () => {
  const operation = fc.oneof(
    fc.record({
      op: fc.constant("fill" as const),
      id: fc.integer({ min: 1, max: 6 }),
      qty: fc.integer({ min: 1, max: 10 }),
    }),
    fc.record({ op: fc.constant("cancel" as const), id: fc.integer({ min: 1, max: 6 }) }),
    fc.record({ op: fc.constant("expire" as const), id: fc.integer({ min: 1, max: 6 }) }),
  );
  fc.assert(
    fc.property(fc.array(operation, { maxLength: 25 }), (ops) => {
      // Two brackets: entries 1 and 4 with children (2,3) and (5,6) in OCA groups 7 and 8.
      let book: Book = new Map();
      for (const [entry, group] of [
        [1, 7],
        [4, 8],
      ] as const) {
        book = ok(submit(book, { id: entry, quantity: q("10") }, NOW));
        for (const exit of [entry + 1, entry + 2]) {
          book = ok(submit(book, { id: exit, quantity: q("10"), parentId: entry, ocaGroup: group, exit: true }, NOW));
        }
      }
      let serial = 0;
      for (const step of ops) {
        const result =
          step.op === "fill"
            ? fill(book, step.id, q(String(step.qty)), q("100"), `f${serial++}`, NOW)
            : step.op === "cancel"
              ? cancel(book, step.id)
              : expire(book, [step.id], NOW);
        if (!result.ok) continue;
        book = result.book;
        for (const [entry] of [[1], [4]] as const) {
          const children = [entry + 1, entry + 2].map((id) => book.get(id)?.state);
          const entryState = book.get(entry)?.state;
          const entryStatus = entryState?.status;
          for (const child of children) {
            if (child && ["Working", "PartiallyFilled", "Filled"].includes(child.status)) {
              assert.ok(entryState && entryState.filledQuantity > 0n, "an exit works only once its entry has filled");
            }
            if (child?.status === "PendingNew") {
              assert.ok(entryState?.filledQuantity === 0n, "an exit is held only while its entry has no fill");
            }
          }
          const fullyFilled = children.filter((c) => c?.status === "Filled").length;
          assert.ok(fullyFilled <= 1, "at most one member of an OCA group fills completely");
          if (fullyFilled === 1) {
            for (const c of children)
              assert.ok(c && ["Filled", "Canceled"].includes(c.status), "its sibling is canceled");
          }
          if (entryStatus !== undefined && ["Canceled", "Expired"].includes(entryStatus) && entryState) {
            if (entryState.filledQuantity === 0n) {
              for (const c of children)
                assert.ok(c && ["Canceled", "Expired"].includes(c.status) && c.filledQuantity === 0n);
            }
          }
        }
      }
    }),
    { numRuns: 300 },
  );
});

test("a fill in an indexed book starts every held order it lets start: nothing is left for a full pass to release", () => {
  // Orders are named by a pick among those made so far, so most operations land on an order that exists.
  const operation = fc.oneof(
    fc.record({
      op: fc.constant("submit" as const),
      parent: fc.option(fc.nat(), { nil: null, freq: 2 }),
      exit: fc.boolean(),
      parkedFor: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null, freq: 2 }),
    }),
    fc.record({ op: fc.constant("fill" as const), pick: fc.nat(), qty: fc.integer({ min: 1, max: 10 }) }),
    fc.record({ op: fc.constant("cancel" as const), pick: fc.nat() }),
    fc.record({ op: fc.constant("tick" as const) }),
    fc.record({ op: fc.constant("release" as const) }),
  );
  fc.assert(
    fc.property(fc.array(operation, { minLength: 10, maxLength: 40 }), (ops) => {
      // As the trading frame holds it: indexed, open for each operation.
      const book = new IndexedBook();
      const apply = (work: (current: Book) => BookResult): BookResult => {
        book.open();
        const result = work(book);
        if (result.ok) book.close();
        else book.undo();
        return result;
      };
      let now = NOW;
      let made = 0;
      let serial = 0;
      const picked = (pick: number) => (pick % Math.max(made, 1)) + 1;
      for (const step of ops) {
        if (step.op === "tick") {
          now += 1;
        } else if (step.op === "release") {
          // The clock bringing the account to now: parked orders whose time came start.
          apply((current) => release(current, now));
        } else if (step.op === "submit") {
          const parkedUntilMs = step.parkedFor === null ? null : now + step.parkedFor;
          const parentId = step.parent === null || made === 0 ? null : picked(step.parent);
          const id = made + 1;
          if (
            apply((current) =>
              submit(current, { id, quantity: q("10"), parentId, exit: step.exit, parkedUntilMs }, now),
            ).ok
          )
            made = id;
        } else if (step.op === "cancel") {
          apply((current) => cancel(current, picked(step.pick)));
        } else {
          const filled = apply((current) =>
            fill(current, picked(step.pick), q(String(step.qty)), q("100"), `f${serial++}`, now),
          );
          if (!filled.ok) continue;
          const left = release(new Map(book), now);
          assert.ok(left.ok);
          assert.deepEqual(left.events, [], "a full pass after the fill finds nothing more to start");
        }
      }
    }),
    { numRuns: 300 },
  );
});
