import { addId, removeId } from "../id-sets.js";
import { TransientMap } from "../transient.js";
import type { OrderTerms } from "./terms.js";

/**
 * Orders' terms that know which orders trade each symbol, and which of those
 * close a position, so a step finds the orders a quote or a fill concerns
 * without a pass over every order. Like IndexedBook, it is the transient map
 * of an account held in memory, kept right through every set, delete and
 * undo; any other map is searched term by term, with the same answers.
 */
export class IndexedTerms extends TransientMap<number, OrderTerms> {
  readonly #bySymbol = new Map<string, Set<number>>();
  readonly #closingBySymbol = new Map<string, Set<number>>();

  /** Terms holding the entries. */
  static holding(entries: Iterable<readonly [number, OrderTerms]>): IndexedTerms {
    const terms = new IndexedTerms();
    for (const [id, order] of entries) terms.set(id, order);
    return terms;
  }

  override set(id: number, terms: OrderTerms): this {
    const was = this.get(id);
    if (was !== undefined) this.#forget(id, was);
    super.set(id, terms);
    this.#note(id, terms);
    return this;
  }

  override delete(id: number): boolean {
    const was = this.get(id);
    if (was !== undefined) this.#forget(id, was);
    return super.delete(id);
  }

  override undo(): void {
    const changed = [...this.before.keys()];
    for (const id of changed) {
      const now = this.get(id);
      if (now !== undefined) this.#forget(id, now);
    }
    super.undo();
    for (const id of changed) {
      const restored = this.get(id);
      if (restored !== undefined) this.#note(id, restored);
    }
  }

  inSymbol(symbol: string): ReadonlySet<number> | undefined {
    return this.#bySymbol.get(symbol);
  }

  closingInSymbol(symbol: string): ReadonlySet<number> | undefined {
    return this.#closingBySymbol.get(symbol);
  }

  #note(id: number, terms: OrderTerms): void {
    addId(this.#bySymbol, terms.instrument.fullSymbol, id);
    if (terms.openClose === "close") addId(this.#closingBySymbol, terms.instrument.fullSymbol, id);
  }

  #forget(id: number, terms: OrderTerms): void {
    removeId(this.#bySymbol, terms.instrument.fullSymbol, id);
    removeId(this.#closingBySymbol, terms.instrument.fullSymbol, id);
  }
}

/** The ids of the orders in a symbol (with `closing`, only those that close a position), in no set order. */
export function ordersInSymbol(
  terms: ReadonlyMap<number, OrderTerms>,
  symbol: string,
  closing: boolean,
): Iterable<number> {
  if (terms instanceof IndexedTerms) return (closing ? terms.closingInSymbol(symbol) : terms.inSymbol(symbol)) ?? [];
  const ids: number[] = [];
  for (const [id, order] of terms) {
    if (order.instrument.fullSymbol === symbol && (!closing || order.openClose === "close")) ids.push(id);
  }
  return ids;
}
