import { type Decimal, isZero } from "../decimal.js";
import { editable } from "../transient.js";
import { childrenOf, heldAfterFill, heldOrders, membersOf } from "./indexed-book.js";
import { type Applied, applyEvent, newOrder, type OrderEvent, type OrderState } from "./order.js";
import { TERMINAL, WORKING } from "./status.js";

/**
 * A strategy's orders and the contingencies between them, applied in one
 * place after every fill, cancel, expiry and replace:
 *
 * - An order conditional on another signal is held until its parent fills
 *   completely, and never works if the parent ends any other way.
 * - An exit (the profit target or stop loss of an entry) is held until its
 *   entry first fills, so the part filled is protected at once. It is
 *   canceled with an entry that ends without any fill; once working it
 *   outlives the entry's unfilled rest (canceled, expired or replaced). How
 *   much it may close, what the entry filled less what its exits closed, is
 *   the fill step's to enforce, as is never closing more than is held.
 * - Members of an OCA (one-cancels-all) group: when one fills completely, is
 *   canceled or expires, the others are canceled. A partial fill leaves them
 *   working.
 * - A parked order is held until its release time.
 * - A replaced order hands its place to the new one: its held children follow
 *   it (working exits stay with the filled part they protect), and its OCA
 *   group either passes to the new order or its siblings are canceled.
 */
export interface BookOrder {
  readonly id: number;
  readonly state: OrderState;
  readonly parentId: number | null;
  readonly ocaGroup: number | null;
  readonly parkedUntilMs: number | null;
  /** A profit target or stop loss of its parent (see above). */
  readonly exit: boolean;
}

export type Book = ReadonlyMap<number, BookOrder>;

/** What happened to which order, in order: the record to persist and report. */
export interface BookEvent {
  readonly orderId: number;
  readonly event: OrderEvent;
}

export type BookResult =
  | { readonly ok: true; readonly book: Book; readonly events: readonly BookEvent[] }
  | { readonly ok: false; readonly reason: string };

export interface NewBookOrder {
  readonly id: number;
  readonly quantity: Decimal;
  readonly parentId?: number | null;
  readonly ocaGroup?: number | null;
  readonly parkedUntilMs?: number | null;
  readonly exit?: boolean;
}

/** An event to apply; without an id it gets one from the operation it belongs to. */
type EventInput = OrderEvent extends infer E ? (E extends OrderEvent ? Omit<E, "id"> & { id?: string } : never) : never;

/** Applies events to orders of a book, keeping the record of what was applied. */
class Changes {
  readonly orders: Map<number, BookOrder>;
  readonly events: BookEvent[] = [];
  #serial = 0;

  constructor(
    book: Book,
    private readonly eventPrefix: string,
  ) {
    this.orders = editable(book);
  }

  apply(orderId: number, event: EventInput): Applied {
    const order = this.orders.get(orderId);
    if (!order) return { ok: false, reason: `no order ${orderId}` };
    // The id before the event's keys (docs/decisions.md, "Objects keep their hidden classes").
    const full = (
      event.id === undefined ? { id: `${this.eventPrefix}:${this.#serial++}`, ...event } : event
    ) as OrderEvent;
    const applied = applyEvent(order.state, full);
    if (applied.ok && !applied.duplicate) {
      this.orders.set(orderId, { ...order, state: applied.state });
      this.events.push({ orderId, event: full });
    }
    return applied;
  }

  put(order: BookOrder): void {
    this.orders.set(order.id, order);
  }

  done(): BookResult {
    return { ok: true, book: this.orders, events: this.events };
  }
}

const isLive = (order: BookOrder) => !TERMINAL.has(order.state.status);

/** Whether a child works for what its parent has filled: an exit of a parent with a fill. */
const protectsFill = (child: BookOrder, parent: BookOrder) => child.exit && !isZero(parent.state.filledQuantity);

/** Cancels what an order's end takes with it: its OCA siblings and its held children. */
function cascade(changes: Changes, orderId: number, cancelSiblings: boolean): void {
  const order = changes.orders.get(orderId);
  // A filled order outside any OCA group takes nothing with it.
  if (!order || ((!cancelSiblings || order.ocaGroup === null) && order.state.status === "Filled")) return;
  const siblings = cancelSiblings && order.ocaGroup !== null ? membersOf(changes.orders, order.ocaGroup) : [];
  const orphans = order.state.status !== "Filled" ? childrenOf(changes.orders, orderId) : [];
  const candidates = orphans.length === 0 ? siblings : [...new Set([...siblings, ...orphans])].sort((a, b) => a - b);
  for (const id of candidates) {
    const other = changes.orders.get(id);
    if (!other || other.id === orderId || !isLive(other)) continue;
    const sibling = cancelSiblings && order.ocaGroup !== null && other.ocaGroup === order.ocaGroup;
    const orphan = other.parentId === orderId && order.state.status !== "Filled" && !protectsFill(other, order);
    if (sibling || orphan) {
      changes.apply(other.id, { kind: "canceled" });
      cascade(changes, other.id, true);
    }
  }
}

/** Whether a held order may start working now. */
function mayWork(book: ReadonlyMap<number, BookOrder>, order: BookOrder, nowMs: number): boolean {
  if (order.parkedUntilMs !== null && order.parkedUntilMs > nowMs) return false;
  if (order.parentId === null) return true;
  const parent = book.get(order.parentId);
  return parent !== undefined && (parent.state.status === "Filled" || protectsFill(order, parent));
}

/**
 * Releases held orders whose parent has filled (an exit's: in part) and whose
 * parking time has passed: of `candidates`, or of every held order.
 */
function releaseReady(changes: Changes, nowMs: number, candidates = heldOrders(changes.orders)): void {
  for (const id of candidates) {
    const order = changes.orders.get(id);
    if (order?.state.status === "PendingNew" && mayWork(changes.orders, order, nowMs)) {
      changes.apply(order.id, { kind: "accepted" });
    }
  }
}

export function submit(book: Book, input: NewBookOrder, nowMs: number): BookResult {
  if (book.has(input.id)) return { ok: false, reason: `order ${input.id} exists already` };
  const parentId = input.parentId ?? null;
  if (parentId !== null) {
    const parent = book.get(parentId);
    if (!parent) return { ok: false, reason: `no parent order ${parentId}` };
    if (TERMINAL.has(parent.state.status) && parent.state.status !== "Filled") {
      return { ok: false, reason: `parent order ${parentId} is ${parent.state.status} and will never fill` };
    }
  }
  const changes = new Changes(book, `submit-${input.id}`);
  const order: BookOrder = {
    id: input.id,
    state: newOrder(input.quantity),
    parentId,
    ocaGroup: input.ocaGroup ?? null,
    parkedUntilMs: input.parkedUntilMs ?? null,
    exit: input.exit ?? false,
  };
  changes.put(order);
  changes.apply(order.id, mayWork(changes.orders, order, nowMs) ? { kind: "accepted" } : { kind: "held" });
  return changes.done();
}

export function fill(
  book: Book,
  orderId: number,
  quantity: Decimal,
  price: Decimal,
  eventId: string,
  nowMs: number,
): BookResult {
  const order = book.get(orderId);
  if (!order) return { ok: false, reason: `no order ${orderId}` };
  if (!WORKING.has(order.state.status)) return { ok: false, reason: `order ${orderId} is not working` };
  const changes = new Changes(book, eventId);
  const applied = changes.apply(orderId, { id: eventId, kind: "fill", quantity, price });
  if (!applied.ok) return applied;
  if (applied.state.status === "Filled") cascade(changes, orderId, true);
  // Only what waits on this order, or on the clock, may start now: not a pass over every held order per fill.
  releaseReady(changes, nowMs, heldAfterFill(changes.orders, orderId));
  return changes.done();
}

export function cancel(book: Book, orderId: number): BookResult {
  const order = book.get(orderId);
  if (!order) return { ok: false, reason: `no order ${orderId}` };
  const changes = new Changes(book, `cancel-${orderId}`);
  const applied = changes.apply(orderId, { kind: "canceled" });
  if (!applied.ok) return applied;
  cascade(changes, orderId, true);
  return changes.done();
}

/** Expires the given orders (DAY orders at their session's close), with what they take along. */
export function expire(book: Book, orderIds: readonly number[], atMs: number): BookResult {
  const changes = new Changes(book, `expire-${atMs}`);
  for (const orderId of orderIds) {
    const order = changes.orders.get(orderId);
    if (!order || !isLive(order)) continue;
    changes.apply(orderId, { kind: "expired" });
    cascade(changes, orderId, true);
  }
  return changes.done();
}

/** Starts working the held orders that may now work (parking time passed). */
export function release(book: Book, nowMs: number): BookResult {
  const changes = new Changes(book, `release-${nowMs}`);
  releaseReady(changes, nowMs);
  return changes.done();
}

/**
 * Replaces a live order with a new one. With `keepOcaGroup` the new order
 * takes the old one's place in its OCA group; otherwise the old one's
 * siblings are canceled. Held children of the old order follow the new one;
 * exits working for what the old order filled stay with it. The new order is
 * an exit when it replaces one.
 */
export function replace(
  book: Book,
  oldId: number,
  input: Omit<NewBookOrder, "ocaGroup">,
  keepOcaGroup: boolean,
  nowMs: number,
): BookResult {
  const old = book.get(oldId);
  if (!old) return { ok: false, reason: `no order ${oldId}` };
  if (book.has(input.id)) return { ok: false, reason: `order ${input.id} exists already` };
  const changes = new Changes(book, `replace-${oldId}`);
  const replaced = changes.apply(oldId, { kind: "replaced" });
  if (!replaced.ok) return replaced;
  if (!keepOcaGroup) cascadeSiblingsOnly(changes, oldId);
  for (const id of childrenOf(changes.orders, oldId)) {
    const child = changes.orders.get(id);
    if (child && isLive(child) && !protectsFill(child, old)) changes.put({ ...child, parentId: input.id });
  }
  const next: BookOrder = {
    id: input.id,
    state: newOrder(input.quantity),
    parentId: input.parentId ?? old.parentId,
    ocaGroup: keepOcaGroup ? old.ocaGroup : null,
    parkedUntilMs: input.parkedUntilMs ?? null,
    exit: input.exit ?? old.exit,
  };
  changes.put(next);
  changes.apply(next.id, mayWork(changes.orders, next, nowMs) ? { kind: "accepted" } : { kind: "held" });
  return changes.done();
}

function cascadeSiblingsOnly(changes: Changes, orderId: number): void {
  const order = changes.orders.get(orderId);
  if (!order || order.ocaGroup === null) return;
  for (const id of membersOf(changes.orders, order.ocaGroup)) {
    const other = changes.orders.get(id);
    if (other && other.id !== orderId && isLive(other)) {
      changes.apply(other.id, { kind: "canceled" });
      cascade(changes, other.id, true);
    }
  }
}
