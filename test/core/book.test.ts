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
  book = ok(submit(book, { id: 2, quantity: q("10"), parentId: 1, ocaGroup: 7 }, NOW));
  book = ok(submit(book, { id: 3, quantity: q("10"), parentId: 1, ocaGroup: 7 }, NOW));
  return book;
}

test("bracket children wait for the entry and start working when it fills", () => {
  let book = bracket();
  assert.deepEqual([status(book, 1), status(book, 2), status(book, 3)], ["Working", "PendingNew", "PendingNew"]);
  book = ok(fill(book, 1, q("4"), q("100"), "f1", NOW));
  assert.deepEqual(
    [status(book, 2), status(book, 3)],
    ["PendingNew", "PendingNew"],
    "a partial entry fill is not enough",
  );
  const done = fill(book, 1, q("6"), q("100"), "f2", NOW);
  assert.ok(done.ok);
  assert.deepEqual(
    [status(done.book, 1), status(done.book, 2), status(done.book, 3)],
    ["Filled", "Working", "Working"],
  );
  assert.deepEqual(
    done.events.map((e) => [e.orderId, e.event.kind]),
    [
      [1, "fill"],
      [2, "accepted"],
      [3, "accepted"],
    ],
  );
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
  const filled = ok(fill(replaced, 8, q("12"), q("99"), "f", NOW));
  assert.deepEqual([status(filled, 2), status(filled, 3)], ["Working", "Working"]);
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
        book = ok(submit(book, { id: entry + 1, quantity: q("10"), parentId: entry, ocaGroup: group }, NOW));
        book = ok(submit(book, { id: entry + 2, quantity: q("10"), parentId: entry, ocaGroup: group }, NOW));
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
          const entryStatus = status(book, entry);
          for (const child of children) {
            if (child && child.filledQuantity > 0n)
              assert.equal(entryStatus, "Filled", "a child fills only after its parent");
          }
          const fullyFilled = children.filter((c) => c?.status === "Filled").length;
          assert.ok(fullyFilled <= 1, "at most one member of an OCA group fills completely");
          if (fullyFilled === 1) {
            for (const c of children)
              assert.ok(c && ["Filled", "Canceled"].includes(c.status), "its sibling is canceled");
          }
          if (entryStatus !== undefined && ["Canceled", "Expired"].includes(entryStatus)) {
            for (const c of children) assert.ok(c && c.status !== "Working" && c.filledQuantity === 0n);
          }
        }
      }
    }),
    { numRuns: 300 },
  );
});
