import { addId, removeId } from "../id-sets.js";
import { TransientMap } from "../transient.js";
import type { Book, BookOrder } from "./book.js";

/**
 * A book that knows, beside its orders, which are held, which wait on each
 * parent and who belongs to each OCA group, so the contingencies of a fill or
 * a cancel are found without a pass over the book (a strategy may rest
 * thousands of orders). It is the transient map of an account held in memory
 * (src/engine/frame), kept right through every set, delete and undo. Any
 * other book (a copy, a test's map) is searched order by order, with the same
 * answers in the same order: ascending ids.
 */
export class IndexedBook extends TransientMap<number, BookOrder> {
  readonly #held = new Set<number>();
  /** Held orders parked until a time: a fill may find that time passed. */
  readonly #parked = new Set<number>();
  readonly #children = new Map<number, Set<number>>();
  readonly #members = new Map<number, Set<number>>();

  /** A book holding the orders. */
  static holding(orders: Iterable<BookOrder>): IndexedBook {
    const book = new IndexedBook();
    for (const order of orders) book.set(order.id, order);
    return book;
  }

  override set(id: number, order: BookOrder): this {
    const was = this.get(id);
    if (was !== undefined) this.#forget(was);
    super.set(id, order);
    this.#note(order);
    return this;
  }

  override delete(id: number): boolean {
    const was = this.get(id);
    if (was !== undefined) this.#forget(was);
    return super.delete(id);
  }

  override undo(): void {
    const changed = [...this.before.keys()];
    for (const id of changed) {
      const now = this.get(id);
      if (now !== undefined) this.#forget(now);
    }
    super.undo();
    for (const id of changed) {
      const restored = this.get(id);
      if (restored !== undefined) this.#note(restored);
    }
  }

  get held(): ReadonlySet<number> {
    return this.#held;
  }

  get parked(): ReadonlySet<number> {
    return this.#parked;
  }

  childrenOf(parentId: number): ReadonlySet<number> | undefined {
    return this.#children.get(parentId);
  }

  membersOf(ocaGroup: number): ReadonlySet<number> | undefined {
    return this.#members.get(ocaGroup);
  }

  #note(order: BookOrder): void {
    if (order.state.status === "PendingNew") this.#held.add(order.id);
    if (order.state.status === "PendingNew" && order.parkedUntilMs !== null) this.#parked.add(order.id);
    if (order.parentId !== null) addId(this.#children, order.parentId, order.id);
    if (order.ocaGroup !== null) addId(this.#members, order.ocaGroup, order.id);
  }

  #forget(order: BookOrder): void {
    this.#held.delete(order.id);
    this.#parked.delete(order.id);
    if (order.parentId !== null) removeId(this.#children, order.parentId, order.id);
    if (order.ocaGroup !== null) removeId(this.#members, order.ocaGroup, order.id);
  }
}

const ascending = (a: number, b: number) => a - b;

/** The ids of the book's orders held (PendingNew), ascending. */
export function heldOrders(book: Book): number[] {
  if (book instanceof IndexedBook) return [...book.held].sort(ascending);
  return idsWhere(book, (order) => order.state.status === "PendingNew");
}

/**
 * The held orders a fill of `filledId` may let start, ascending: its held
 * children, and the parked ones (their time may have passed). No other held
 * order's lot changes with a fill: the children of an order that filled
 * before started with that fill.
 */
export function heldAfterFill(book: Book, filledId: number): number[] {
  if (!(book instanceof IndexedBook)) {
    return idsWhere(
      book,
      (order) => order.state.status === "PendingNew" && (order.parentId === filledId || order.parkedUntilMs !== null),
    );
  }
  const ids = [...book.parked];
  for (const id of book.childrenOf(filledId) ?? []) if (book.held.has(id) && !book.parked.has(id)) ids.push(id);
  return ids.sort(ascending);
}

/** The ids of the orders waiting on a parent (held children, exits), ascending. */
export function childrenOf(book: Book, parentId: number): number[] {
  if (book instanceof IndexedBook) return [...(book.childrenOf(parentId) ?? [])].sort(ascending);
  return idsWhere(book, (order) => order.parentId === parentId);
}

/** The ids of an OCA group's orders, ascending. */
export function membersOf(book: Book, ocaGroup: number): number[] {
  if (book instanceof IndexedBook) return [...(book.membersOf(ocaGroup) ?? [])].sort(ascending);
  return idsWhere(book, (order) => order.ocaGroup === ocaGroup);
}

function idsWhere(book: Book, wanted: (order: BookOrder) => boolean): number[] {
  const ids: number[] = [];
  for (const order of book.values()) if (wanted(order)) ids.push(order.id);
  return ids.sort(ascending);
}
