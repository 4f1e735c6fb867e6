import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { cursorCodec, queryBinding } from "../../src/http/cursor.js";

const codec = cursorCodec("secret-1");
const binding = queryBinding("GetThings", { WhiteLabelSiteId: 4 });

test("a cursor decodes to the position it was made from", () => {
  fc.assert(
    fc.property(
      fc.constantFrom("after" as const, "before" as const),
      fc.array(fc.oneof(fc.integer(), fc.string()), { minLength: 1, maxLength: 3 }),
      fc.boolean(),
      (direction, key, ascending) => {
        const cursor = codec.encode(binding, ascending, { direction, key });
        assert.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
        assert.deepEqual(codec.decode(binding, ascending, cursor), { direction, key });
      },
    ),
  );
});

test("any change to a cursor is detected", () => {
  const cursor = codec.encode(binding, true, { direction: "after", key: [42] });
  fc.assert(
    fc.property(fc.nat(cursor.length - 1), fc.constantFrom(..."ABCabc012-_."), (index, replacement) => {
      fc.pre(cursor[index] !== replacement);
      const altered = cursor.slice(0, index) + replacement + cursor.slice(index + 1);
      assert.equal(codec.decode(binding, true, altered), null);
    }),
  );
});

test("a cursor is refused by another secret, another query and another order", () => {
  const cursor = codec.encode(binding, true, { direction: "after", key: [42] });
  assert.equal(cursorCodec("secret-2").decode(binding, true, cursor), null);
  assert.equal(codec.decode(queryBinding("GetThings", { WhiteLabelSiteId: 5 }), true, cursor), null);
  assert.equal(codec.decode(binding, false, cursor), null);
});

test("the binding does not depend on the order filters were given in", () => {
  assert.equal(queryBinding("Op", { A: 1, B: 2 }), queryBinding("Op", { B: 2, A: 1 }));
});
