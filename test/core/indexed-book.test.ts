import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { decimal } from "../../src/core/decimal.js";
import type { BookOrder } from "../../src/core/orders/book.js";
import { childrenOf, heldAfterFill, heldOrders, IndexedBook, membersOf } from "../../src/core/orders/indexed-book.js";
import { IndexedTerms, ordersInSymbol } from "../../src/core/orders/indexed-terms.js";
import { newOrder } from "../../src/core/orders/order.js";
import type { OrderStatus } from "../../src/core/orders/status.js";
import type { OrderTerms } from "../../src/core/orders/terms.js";
import type { TransientMap } from "../../src/core/transient.js";

/**
 * The indexes of an account's book and terms held in memory, against the
 * same questions asked of a plain copy (answered by a pass over every entry),
 * after any sequence of sets, deletes, opens, undos and closes.
 */

const IDS = 8;
const STATUSES: readonly OrderStatus[] = ["PendingNew", "Working", "PartiallyFilled", "Filled", "Canceled"];
const SYMBOLS = ["AAPL", "MSFT", "@ESM26"];

type Command<V> =
  | { readonly kind: "set"; readonly id: number; readonly value: V }
  | { readonly kind: "delete"; readonly id: number }
  | { readonly kind: "open" | "undo" | "close" };

const commands = <V>(value: fc.Arbitrary<V>) =>
  fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant("set" as const), id: fc.integer({ min: 1, max: IDS }), value }),
      fc.record({ kind: fc.constant("delete" as const), id: fc.integer({ min: 1, max: IDS }) }),
      fc.record({ kind: fc.constantFrom("open" as const, "undo" as const, "close" as const) }),
    ),
    { maxLength: 40 },
  );

function run<V>(map: TransientMap<number, V>, command: Command<V>): void {
  if (command.kind === "set") map.set(command.id, command.value);
  else if (command.kind === "delete") map.delete(command.id);
  else if (command.kind === "open") map.open();
  else if (command.kind === "undo") map.undo();
  else map.close();
}

const bookOrder = fc
  .record({
    status: fc.constantFrom(...STATUSES),
    parentId: fc.option(fc.integer({ min: 1, max: IDS }), { nil: null }),
    ocaGroup: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    exit: fc.boolean(),
    parkedUntilMs: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
  })
  .map(
    ({ status, ...links }): Omit<BookOrder, "id"> => ({
      ...links,
      state: { ...newOrder(decimal("1")), status },
    }),
  );

const orderTerms = fc
  .record({ symbol: fc.constantFrom(...SYMBOLS), openClose: fc.constantFrom("open" as const, "close" as const) })
  .map(({ symbol, openClose }) => ({ instrument: { fullSymbol: symbol }, openClose }) as unknown as OrderTerms);

describe("IndexedBook", () => {
  test("held orders, children, OCA members and what a fill may release are what a pass over a plain copy finds", () => {
    fc.assert(
      fc.property(commands(bookOrder), (steps) => {
        const book = new IndexedBook();
        for (const step of steps) {
          run(book, step.kind === "set" ? { ...step, value: { ...step.value, id: step.id } } : step);
          const plain = new Map(book);
          assert.deepEqual(heldOrders(book), heldOrders(plain));
          for (let id = 1; id <= IDS; id++) {
            assert.deepEqual(childrenOf(book, id), childrenOf(plain, id));
            assert.deepEqual(heldAfterFill(book, id), heldAfterFill(plain, id));
          }
          for (let group = 1; group <= 3; group++) assert.deepEqual(membersOf(book, group), membersOf(plain, group));
        }
      }),
    );
  });

  test("holding() indexes the orders it is given", () => {
    const order = (id: number, parentId: number | null): BookOrder => ({
      id,
      state: newOrder(decimal("1")),
      parentId,
      ocaGroup: 7,
      parkedUntilMs: null,
      exit: parentId !== null,
    });
    const book = IndexedBook.holding([order(3, null), order(1, 3), order(2, 3)]);
    assert.deepEqual(heldOrders(book), [1, 2, 3]);
    assert.deepEqual(childrenOf(book, 3), [1, 2]);
    assert.deepEqual(membersOf(book, 7), [1, 2, 3]);
  });
});

describe("IndexedTerms", () => {
  test("orders by symbol, and closing orders by symbol, are what a pass over a plain copy finds", () => {
    fc.assert(
      fc.property(commands(orderTerms), (steps) => {
        const terms = new IndexedTerms();
        for (const step of steps) {
          run(terms, step);
          const plain = new Map(terms);
          for (const symbol of SYMBOLS) {
            for (const closing of [false, true]) {
              const sorted = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);
              assert.deepEqual(
                sorted(ordersInSymbol(terms, symbol, closing)),
                sorted(ordersInSymbol(plain, symbol, closing)),
              );
            }
          }
        }
      }),
    );
  });
});
