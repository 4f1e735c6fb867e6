import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ExpiryTimes, mayExpireBy } from "../../src/core/orders/expiry-times.js";

/**
 * The expiry times of an account held in memory (src/core/orders/
 * expiry-times.ts) against a pass over a plain copy: after any sequence of
 * sets, deletes, opens, undos, closes and questions, whether an order may
 * expire by an instant is answered as the pass answers it.
 */

type Command =
  | { readonly kind: "set"; readonly id: number; readonly at: number }
  | { readonly kind: "delete"; readonly id: number }
  | { readonly kind: "open" | "undo" | "close" }
  | { readonly kind: "ask"; readonly nowMs: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant("set" as const),
    id: fc.integer({ min: 1, max: 6 }),
    at: fc.integer({ min: 0, max: 20 }),
  }),
  fc.record({ kind: fc.constant("delete" as const), id: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constantFrom("open" as const, "undo" as const, "close" as const) }),
  fc.record({ kind: fc.constant("ask" as const), nowMs: fc.integer({ min: 0, max: 20 }) }),
);

test("whether an order may expire by an instant is what a pass over a plain copy says", () => {
  fc.assert(
    fc.property(fc.array(command, { maxLength: 60 }), (commands) => {
      const times = new ExpiryTimes();
      for (const c of commands) {
        if (c.kind === "set") times.set(c.id, c.at);
        else if (c.kind === "delete") times.delete(c.id);
        else if (c.kind === "open") times.open();
        else if (c.kind === "undo") times.undo();
        else if (c.kind === "close") times.close();
        else if (c.kind === "ask")
          assert.equal(mayExpireBy(times, c.nowMs), mayExpireBy(new Map(times), c.nowMs), `by ${c.nowMs}`);
      }
    }),
    { numRuns: 500 },
  );
});

test("holding() knows the earliest time of what it is given", () => {
  const times = ExpiryTimes.holding([
    [1, 30],
    [2, 10],
  ]);
  assert.equal(times.mayExpireBy(9), false);
  assert.equal(times.mayExpireBy(10), true);
});

test("an undone operation's times count again: a pass it raised the bound with is forgotten", () => {
  const times = ExpiryTimes.holding([[1, 3]]);
  times.open();
  times.delete(1);
  assert.equal(times.mayExpireBy(10), false, "nothing held while the operation runs");
  times.undo();
  assert.equal(times.mayExpireBy(5), true, "the order's time is back");
});
