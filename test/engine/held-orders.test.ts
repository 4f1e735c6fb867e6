import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type HeldOrder, HeldOrders } from "../../src/engine/autotrade/followers.js";

/**
 * A follower account's open orders, indexed by setup and symbol
 * (src/engine/autotrade/followers.ts): after any sequence of sets, row
 * replacements, deletes and clears, a setup's orders in a symbol are exactly
 * those a pass over every order finds, in the same order (the desk keeps the
 * first automatic stop it finds).
 */

const SETUPS: readonly (number | null)[] = [1, 2, null];
const SYMBOLS = ["AAPL", "MSFT"] as const;

const heldOf = (setupId: number | null, symbol: string, quantity: number): HeldOrder => ({
  row: { setup_id: setupId, symbol, quantity: String(quantity) } as unknown as HeldOrder["row"],
  stored: true,
  asking: false,
  fillIds: new Set(),
});

type Command =
  | { readonly kind: "set"; readonly key: string; readonly setupId: number | null; readonly symbol: string }
  | { readonly kind: "replaceRow"; readonly key: string }
  | { readonly kind: "delete"; readonly key: string }
  | { readonly kind: "clear" };

const key = fc.constantFrom("a", "b", "c", "d", "e");
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("set" as const),
      key,
      setupId: fc.constantFrom(...SETUPS),
      symbol: fc.constantFrom(...SYMBOLS),
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant("replaceRow" as const), key }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("delete" as const), key }), weight: 2 },
  { arbitrary: fc.constant({ kind: "clear" as const }), weight: 1 },
);

test("a setup's orders in a symbol are what a pass over every order finds, in the same order", () => {
  fc.assert(
    fc.property(fc.array(command, { maxLength: 60 }), (commands) => {
      const orders = new HeldOrders();
      const model = new Map<string, HeldOrder>();
      let quantity = 0;
      for (const c of commands) {
        if (c.kind === "set") {
          const held = heldOf(c.setupId, c.symbol, ++quantity);
          orders.set(c.key, held);
          // Another setup or symbol under a key is another order: it goes last.
          const was = model.get(c.key);
          if (was && (was.row.setup_id !== c.setupId || was.row.symbol !== c.symbol)) model.delete(c.key);
          model.set(c.key, held);
        } else if (c.kind === "replaceRow") {
          // As the desk moves an order: a new row of the same order, set again under its key.
          const held = orders.get(c.key);
          if (!held) continue;
          held.row = { ...held.row, quantity: String(++quantity) };
          orders.set(c.key, held);
        } else if (c.kind === "delete") {
          assert.equal(orders.delete(c.key), model.delete(c.key));
        } else {
          orders.clear();
          model.clear();
        }
        assert.deepEqual([...orders.keys()], [...model.keys()]);
        for (const setupId of SETUPS.filter((s): s is number => s !== null)) {
          for (const symbol of SYMBOLS) {
            const found = [...orders.ofSetup(setupId, symbol)].map((held) => held.row.quantity);
            const passed = [...orders.values()]
              .filter((held) => held.row.setup_id === setupId && held.row.symbol === symbol)
              .map((held) => held.row.quantity);
            assert.deepEqual(found, passed, "the same orders, in the map's order");
          }
        }
      }
    }),
  );
});
