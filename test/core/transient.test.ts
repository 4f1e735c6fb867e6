import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { editable, TransientMap } from "../../src/core/transient.js";

/** The trading frame's transient maps: changed in place while open, copied otherwise, undone exactly. */

const entries = <K, V>(map: ReadonlyMap<K, V>) => [...map.entries()];

describe("editable", () => {
  test("a closed transient map is copied: the original keeps what it held", () => {
    const map = TransientMap.of([
      ["a", 1],
      ["b", 2],
    ]);
    const copy = editable(map);
    assert.notEqual(copy, map);
    copy.set("a", 10).delete("b");
    copy.set("c", 3);
    assert.deepEqual(entries(map), [
      ["a", 1],
      ["b", 2],
    ]);
    assert.equal(map.before.size, 0, "a copy's changes are not the map's");
  });

  test("a plain map is copied too", () => {
    const map = new Map([["a", 1]]);
    const copy = editable(map);
    assert.notEqual(copy, map);
    copy.set("a", 2);
    assert.equal(map.get("a"), 1);
  });

  test("an open transient map is handed out itself and changed in place", () => {
    const map = TransientMap.of([["a", 1]]);
    map.open();
    assert.equal(editable(map), map);
    editable(map).set("a", 2);
    assert.equal(map.get("a"), 2);
    map.close();
    assert.notEqual(editable(map), map, "closed again: copied again");
  });

  test("undo closes the map: editable copies it afterwards", () => {
    const map = TransientMap.of([["a", 1]]);
    map.open();
    map.undo();
    assert.equal(map.isOpen, false);
    assert.notEqual(editable(map), map);
  });
});

describe("TransientMap", () => {
  test("before holds what each changed key held, undefined for a key that was absent", () => {
    const map = TransientMap.of([
      ["a", 1],
      ["b", 2],
    ]);
    map.open();
    map.set("a", 10);
    map.delete("b");
    map.set("c", 3);
    assert.deepEqual(entries(map.before), [
      ["a", 1],
      ["b", 2],
      ["c", undefined],
    ]);
    assert.equal(map.before.has("c"), true, "an absent key is recorded, as undefined");
  });

  test("deleting, setting again and deleting again keep the first value held", () => {
    const map = TransientMap.of([["a", 1]]);
    map.open();
    map.delete("a");
    map.set("a", 2);
    map.set("a", 3);
    map.delete("a");
    map.set("new", 1);
    map.delete("new");
    assert.deepEqual(entries(map.before), [
      ["a", 1],
      ["new", undefined],
    ]);
    map.undo();
    assert.deepEqual(entries(map), [["a", 1]]);
  });

  test("a key set to the value it held is still recorded as changed", () => {
    const map = TransientMap.of([["a", 1]]);
    map.open();
    map.set("a", 1);
    assert.deepEqual(entries(map.before), [["a", 1]]);
  });

  test("deleting an absent key records nothing it did not hold", () => {
    const map = TransientMap.of([["a", 1]]);
    map.open();
    assert.equal(map.delete("missing"), false);
    map.undo();
    assert.deepEqual(entries(map), [["a", 1]]);
  });

  test("clear deletes every key through delete, so undo brings them all back", () => {
    const map = TransientMap.of([
      ["a", 1],
      ["b", 2],
    ]);
    map.open();
    map.clear();
    assert.equal(map.size, 0);
    assert.deepEqual(entries(map.before), [
      ["a", 1],
      ["b", 2],
    ]);
    map.undo();
    assert.deepEqual(
      new Map(map),
      new Map([
        ["a", 1],
        ["b", 2],
      ]),
    );
  });

  test("changes while closed are not recorded", () => {
    const map = TransientMap.of([["a", 1]]);
    map.set("a", 2);
    map.delete("a");
    map.set("b", 1);
    assert.equal(map.before.size, 0);
  });

  test("close keeps the changes and clears before", () => {
    const map = TransientMap.of([["a", 1]]);
    map.open();
    map.set("a", 2);
    map.set("b", 3);
    map.close();
    assert.equal(map.isOpen, false);
    assert.equal(map.before.size, 0);
    assert.deepEqual(entries(map), [
      ["a", 2],
      ["b", 3],
    ]);
    map.undo();
    assert.deepEqual(
      entries(map),
      [
        ["a", 2],
        ["b", 3],
      ],
      "an undo after close has nothing to put back",
    );
  });

  test("open starts a fresh record: what an earlier operation changed is not undone by a later undo", () => {
    const map = TransientMap.of([["a", 1]]);
    map.open();
    map.set("a", 2);
    map.close();
    map.open();
    map.set("a", 3);
    assert.deepEqual(entries(map.before), [["a", 2]]);
    map.undo();
    assert.deepEqual(entries(map), [["a", 2]]);
  });

  /** One change an operation makes: set a key to a value, or delete it (clear: every key). */
  type Change = { kind: "set"; key: number; value: string } | { kind: "delete"; key: number } | { kind: "clear" };
  const keys = fc.integer({ min: 0, max: 7 });
  const change: fc.Arbitrary<Change> = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({ kind: fc.constant("set" as const), key: keys, value: fc.string({ maxLength: 2 }) }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("delete" as const), key: keys }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("clear" as const) }) },
  );
  const initial = fc.uniqueArray(fc.tuple(keys, fc.string({ maxLength: 2 })), {
    selector: ([key]) => key,
    maxLength: 8,
  });

  const apply = (map: Map<number, string>, c: Change) => {
    if (c.kind === "set") map.set(c.key, c.value);
    else if (c.kind === "delete") map.delete(c.key);
    else map.clear();
  };

  test("property: undo restores exactly what the map held at open, whatever the changes", () => {
    fc.assert(
      fc.property(initial, fc.array(change, { maxLength: 30 }), (start, changes) => {
        const map = TransientMap.of(start);
        const copy = new Map(start);
        map.open();
        for (const c of changes) apply(editable(map), c);
        map.undo();
        assert.deepEqual(new Map(map), copy);
        assert.equal(map.before.size, 0);
      }),
    );
  });

  test("property: while open, the map changes as a plain map would, and before names exactly the keys touched with their first values", () => {
    fc.assert(
      fc.property(initial, fc.array(change, { maxLength: 30 }), (start, changes) => {
        const map = TransientMap.of(start);
        const model = new Map(start);
        const firstHeld = new Map<number, string | undefined>();
        map.open();
        for (const c of changes) {
          const touched = c.kind === "clear" ? [...model.keys()] : [c.key];
          for (const key of touched) if (!firstHeld.has(key)) firstHeld.set(key, model.get(key));
          apply(editable(map), c);
          apply(model, c);
        }
        assert.deepEqual(new Map(map), model);
        assert.deepEqual(new Map(map.before), firstHeld);
        map.close();
        assert.deepEqual(new Map(map), model, "close keeps the changes");
        assert.equal(map.before.size, 0);
      }),
    );
  });

  test("property: a closed map handed to editable never changes, whatever is done to the copy", () => {
    fc.assert(
      fc.property(initial, fc.array(change, { maxLength: 30 }), (start, changes) => {
        const map = TransientMap.of(start);
        const copy = editable(map);
        for (const c of changes) apply(copy, c);
        assert.deepEqual(new Map(map), new Map(start));
        assert.equal(map.before.size, 0);
      }),
    );
  });
});
