import { marginOf, markPositions, openingRequirement, summarize } from "../core/account.js";
import { add, compare, type Decimal, formatDecimal, sub, ZERO } from "../core/decimal.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import { type Book, type BookEvent, type BookOrder, cancel, replace, submit } from "../core/orders/book.js";
import { type HeldPosition, type MarketView, type TradingState, withBook } from "../core/orders/execution.js";
import { childrenOf } from "../core/orders/indexed-book.js";
import { leavesQuantity } from "../core/orders/order.js";
import { CANCELLABLE, TERMINAL } from "../core/orders/status.js";
import {
  checkOrder,
  entryPriceOf,
  exitTermsOf,
  type OpenClose,
  type OrderRequest,
  type OrderTerms,
  SIGNAL_TYPES,
} from "../core/orders/terms.js";
import type { Instrument } from "../core/symbols/instrument.js";
import { editable } from "../core/transient.js";
import type { StrategyOfAccount } from "../engine/frame/account.js";
import type { AccountOperation } from "../engine/frame/frame.js";
import { type TradingCall, tradeOn } from "./trading.js";

/** The orders waiting on a parent (its exits, its held children), found through the book's index rather than a pass over it. */
const childOrders = (book: Book, parentId: number): BookOrder[] =>
  childrenOf(book, parentId).flatMap((childId) => book.get(childId) ?? []);

/** An order as the owner sends it (NewStrategyOrder, ReplaceStrategyOrder; legacy submitSignal later). */
export interface OrderInput extends Omit<OrderRequest, "conditional"> {
  readonly strategyId: number;
  readonly parentSignalId?: number | undefined;
  readonly cancelReplaceSignalId?: number | undefined;
  readonly parkedUntilMs?: number | undefined;
  readonly doNotCreateOcaGroup?: boolean | undefined;
  readonly doNotSyncToOpen?: boolean | undefined;
  /** The legacy API's caller-chosen signalid: unique per strategy across all time. */
  readonly localSignalId?: string | undefined;
  /** The legacy API's caller-chosen id for the exits' OCA group: unique per strategy, never a signal's id. */
  readonly localOcaId?: string | undefined;
  /** A future as the client wrote it, when not in the service's form (sentSymbolOf); its exits take it too. */
  readonly sentSymbol?: string | null | undefined;
}

/** The SignalId result. */
export interface PlacedOrder {
  readonly signalId: number;
  readonly profitTargetSignalId: number | null;
  readonly stopLossSignalId: number | null;
  readonly exitSignalsOcaGroupId: number | null;
  readonly parkedUntilMs: number | null;
}

const signalField = "Order";

/** The state with an order of the account (a parent or the one replaced) in its book; refused when there is none. */
function ensureLoaded(op: AccountOperation, state: TradingState, id: number, field: string): TradingState {
  const loaded = op.withOrder(state, id);
  if (!loaded) throw refuse("NotFound", { field, message: `No signal ${id} in strategy ${op.account.strategy.id}` });
  return loaded;
}

/** Opening orders must fit in the account's excess equity (equity − margin used) at their price. */
export function checkBuyingPower(
  state: TradingState,
  terms: OrderTerms,
  market: MarketView,
  /** A position that a close sent first will release, with the margin it ties up. */
  closing?: HeldPosition,
): void {
  if (terms.openClose !== "open") return;
  const price = entryPriceOf(terms, market.quote(terms.instrument))?.price ?? null;
  const rate = market.usdRate(terms.instrument.currency);
  if (rate === null) {
    throw refuse("NewOrderRejected", {
      field: `${signalField}.ServiceSymbol`,
      message: `No ${terms.instrument.currency}/USD rate is quoted to value ${terms.instrument.fullSymbol}`,
    });
  }
  if (price === null) return;
  const account = summarize(state.cash, markPositions(state.positions.values(), market));
  const released = closing
    ? markPositions([closing], market).reduce(
        (sum, held) => add(sum, marginOf(held.instrument, held.position.quantity, held.mark, held.usdRate)),
        ZERO,
      )
    : ZERO;
  const excess = add(sub(account.equity, account.marginUsed), released);
  const required = openingRequirement(terms.instrument, terms.side, terms.quantity, price, rate);
  if (compare(required, excess) > 0) {
    throw refuse("NewOrderRejected", {
      field: `${signalField}.OrderQuantity`,
      message: `Insufficient buying power: the order needs ${formatDecimal(required)} USD of margin and ${formatDecimal(excess)} USD is available (buying power ${formatDecimal(account.buyingPower)} USD)`,
      meta: {
        Required: formatDecimal(required),
        Available: formatDecimal(excess),
        BuyingPower: formatDecimal(account.buyingPower),
      },
    });
  }
}

export interface Placement {
  readonly state: TradingState;
  readonly placed: PlacedOrder;
}

/** Records the entry and its exits and puts them in the book. */
function place(
  op: AccountOperation,
  state: TradingState,
  terms: OrderTerms,
  input: OrderInput,
  links: { parentId: number | null; replacing: { id: number; keepOcaGroup: boolean } | null },
): Placement {
  const { nowMs } = op;
  const events: BookEvent[] = [];
  const parkedUntilMs = input.parkedUntilMs !== undefined && input.parkedUntilMs > nowMs ? input.parkedUntilMs : null;
  const id = op.newOrder({
    terms,
    cancelReplaceId: links.replacing?.id ?? null,
    parkedUntilMs,
    doNotCreateOca: input.doNotCreateOcaGroup === true,
    doNotSyncToOpen: input.doNotSyncToOpen === true,
    localSignalId: input.localSignalId ?? null,
    sentSymbol: input.sentSymbol ?? null,
  });
  let current: TradingState = { ...state, terms: editable(state.terms).set(id, terms) };
  current = links.replacing
    ? withBook(
        current,
        replace(
          current.book,
          links.replacing.id,
          { id, quantity: terms.quantity, parentId: links.parentId, parkedUntilMs },
          links.replacing.keepOcaGroup,
          nowMs,
        ),
        events,
      )
    : withBook(
        current,
        submit(current.book, { id, quantity: terms.quantity, parentId: links.parentId, parkedUntilMs }, nowMs),
        events,
      );
  const exits = exitTermsOf(terms);
  const both = exits.profitTarget !== null && exits.stopLoss !== null;
  const ocaGroup = both && input.doNotCreateOcaGroup !== true ? op.newOcaGroup(input.localOcaId ?? null) : null;
  const exitIds: { profitTarget: number | null; stopLoss: number | null } = { profitTarget: null, stopLoss: null };
  for (const kind of ["profitTarget", "stopLoss"] as const) {
    const exit = exits[kind];
    if (!exit) continue;
    const exitId = op.newOrder({
      terms: exit,
      cancelReplaceId: null,
      parkedUntilMs: null,
      doNotCreateOca: input.doNotCreateOcaGroup === true,
      doNotSyncToOpen: input.doNotSyncToOpen === true,
      localSignalId: null,
      sentSymbol: input.sentSymbol ?? null,
    });
    current = { ...current, terms: editable(current.terms).set(exitId, exit) };
    current = withBook(
      current,
      submit(current.book, { id: exitId, quantity: exit.quantity, parentId: id, ocaGroup, exit: true }, nowMs),
      events,
    );
    exitIds[kind] = exitId;
  }
  if (links.replacing) {
    // The replaced order's exits now belong to the replacement.
    for (const child of childOrders(current.book, id)) {
      if (TERMINAL.has(child.state.status)) continue;
      const signalType = current.terms.get(child.id)?.signalType;
      if (signalType === SIGNAL_TYPES.profitTarget) exitIds.profitTarget ??= child.id;
      if (signalType === SIGNAL_TYPES.stopLoss) exitIds.stopLoss ??= child.id;
    }
  }
  const exitGroup =
    ocaGroup ??
    [exitIds.profitTarget, exitIds.stopLoss]
      .map((exitId) => (exitId === null ? null : (current.book.get(exitId)?.ocaGroup ?? null)))
      .find((group) => group !== null) ??
    null;
  return {
    state: current,
    placed: {
      signalId: id,
      profitTargetSignalId: exitIds.profitTarget,
      stopLossSignalId: exitIds.stopLoss,
      exitSignalsOcaGroupId: exitGroup,
      parkedUntilMs,
    },
  };
}

/**
 * The position an order will meet: the one held now, or for an order waiting
 * on a parent in the same symbol, the one the parent's fill will leave.
 */
function positionMet(state: TradingState, instrument: Instrument, parentId: number | null): Decimal {
  const held = state.positions.get(instrument.fullSymbol)?.position.quantity ?? ZERO;
  const parent = parentId === null ? undefined : state.book.get(parentId);
  const parentTerms = parentId === null ? undefined : state.terms.get(parentId);
  if (!parent || !parentTerms || parent.state.status === "Filled") return held;
  if (parentTerms.instrument.fullSymbol !== instrument.fullSymbol) return held;
  const leaves = leavesQuantity(parent.state);
  return parentTerms.side === "buy" ? add(held, leaves) : sub(held, leaves);
}

/** The order's terms, checked against the position it will meet; throws the refusal with every problem found. */
function termsFor(
  input: OrderInput,
  state: TradingState,
  parentId: number | null,
  nowMs: number,
  market: MarketView,
  openClose?: OpenClose,
) {
  const held = positionMet(state, input.instrument, parentId);
  const conditional = isHeldBy(state.book, parentId);
  const checked = checkOrder(
    {
      instrument: input.instrument,
      type: input.type,
      side: input.side,
      tif: input.tif,
      quantity: input.quantity,
      openClose: input.openClose ?? openClose,
      limit: input.limit,
      stop: input.stop,
      profitTarget: input.profitTarget,
      stopLoss: input.stopLoss,
      conditional,
      quote: market.quote(input.instrument),
    },
    held,
    nowMs,
    signalField,
  );
  if (!checked.ok) throw new Refusal(checked.errors);
  return checked.terms;
}

const isHeldBy = (book: Book, parentId: number | null) =>
  parentId !== null && book.get(parentId)?.state.status !== "Filled";

/** Refuses caller-chosen ids already used in the strategy (signal ids and OCA ids, across all time). */
function checkLocalIds(op: AccountOperation, input: OrderInput): void {
  for (const [id, field] of [
    [input.localSignalId, "signalid"],
    [input.localOcaId, "ocaid"],
  ] as const) {
    if (id !== undefined && op.localIdInUse(id)) {
      throw refuse("AlreadyExists", { field, message: `${id} is already used in this strategy as a signal or OCA id` });
    }
  }
}

/** While the legacy desired-positions mode holds a strategy's portfolio, no signal is entered by hand. */
function checkSignalEntry(strategy: StrategyOfAccount): void {
  if (strategy.desiredPositions !== null) {
    throw refuse("NewOrderRejected", {
      field: "StrategyId",
      message: "The strategy is in desired-positions mode: set its positions, or turn the mode off (stop/stop) first",
    });
  }
}

/** Places one order (with its exits) in the account. */
export function placeStep(op: AccountOperation, loaded: TradingState, input: OrderInput): Placement {
  checkSignalEntry(op.account.strategy);
  let state = loaded;
  checkLocalIds(op, input);
  const parentId = input.parentSignalId ?? null;
  if (parentId !== null) {
    state = ensureLoaded(op, state, parentId, `${signalField}.ParentSignalId`);
    const parent = state.book.get(parentId);
    if (parent && TERMINAL.has(parent.state.status) && parent.state.status !== "Filled") {
      throw refuse("NewOrderRejected", {
        field: `${signalField}.ParentSignalId`,
        message: `Signal ${parentId} is ${parent.state.status} and will never fill`,
      });
    }
  }
  const terms = termsFor(input, state, parentId, op.nowMs, op.market);
  checkBuyingPower(state, terms, op.market);
  return place(op, state, terms, input, { parentId, replacing: null });
}

/** NewStrategyOrder: places an order (with its exits); with CancelReplaceSignalId it replaces that one. */
export async function placeOrder(ctx: TradingCall, input: OrderInput): Promise<PlacedOrder> {
  if (input.cancelReplaceSignalId !== undefined) return replaceOrder(ctx, input);
  return tradeOn(ctx, input.strategyId, (op) => {
    const { state, placed } = placeStep(op, op.account.state, input);
    return { state, result: placed };
  });
}

/** A parent and an order conditional on it, placed together (the legacy inline conditionalUponSignal). */
export async function placeWithParent(
  ctx: TradingCall,
  parent: OrderInput,
  child: OrderInput,
): Promise<{ readonly parent: PlacedOrder; readonly child: PlacedOrder }> {
  return tradeOn(ctx, child.strategyId, (op) => {
    const first = placeStep(op, op.account.state, parent);
    const second = placeStep(op, first.state, { ...child, parentSignalId: first.placed.signalId });
    return { state: second.state, result: { parent: first.placed, child: second.placed } };
  });
}

/**
 * ReplaceStrategyOrder: cancels the working signal CancelReplaceSignalId and
 * puts this order in its place, in one step. The replacement trades the same
 * symbol on the same side; it keeps the old order's OCA group unless
 * DoNotCreateOCAGroup (then the old order's OCA siblings are canceled), its
 * parent, its kind (a replaced stop loss is still a stop loss) and its exits.
 */
export async function replaceOrder(ctx: TradingCall, input: OrderInput): Promise<PlacedOrder> {
  const oldId = input.cancelReplaceSignalId;
  if (oldId === undefined) {
    throw refuse("MissingValue", {
      field: `${signalField}.CancelReplaceSignalId`,
      message: "CancelReplaceSignalId is required",
    });
  }
  return tradeOn(ctx, input.strategyId, (op) => {
    const placement = replaceStep(op, input, oldId);
    return { state: placement.state, result: placement.placed };
  });
}

/** Replaces the account's order `oldId` with this one, in one step (ReplaceStrategyOrder's rules). */
export function replaceStep(op: AccountOperation, input: OrderInput, oldId: number): Placement {
  const field = `${signalField}.CancelReplaceSignalId`;
  checkSignalEntry(op.account.strategy);
  checkLocalIds(op, input);
  const state = ensureLoaded(op, op.account.state, oldId, field);
  const old = state.book.get(oldId);
  const oldTerms = state.terms.get(oldId);
  if (!old || !oldTerms) throw refuse("NotFound", { field, message: `No signal ${oldId}` });
  if (!CANCELLABLE.has(old.state.status)) {
    throw refuse("CancelRejected", {
      field,
      message:
        old.state.status === "Filled"
          ? `Signal ${oldId} was traded and cannot be replaced`
          : `Signal ${oldId} is ${old.state.status} and cannot be replaced`,
    });
  }
  const errors: ErrorEntry[] = [];
  if (input.instrument.fullSymbol !== oldTerms.instrument.fullSymbol) {
    errors.push({
      name: "InvalidValue",
      field: `${signalField}.ServiceSymbol`,
      message: `The replacement must trade ${oldTerms.instrument.fullSymbol}`,
    });
  }
  if (input.side !== oldTerms.side) {
    errors.push({
      name: "InvalidValue",
      field: `${signalField}.Side`,
      message: `The replacement must be a ${oldTerms.side} like signal ${oldId}`,
    });
  }
  if (input.parentSignalId !== undefined && input.parentSignalId !== old.parentId) {
    errors.push({
      name: "InvalidValue",
      field: `${signalField}.ParentSignalId`,
      message: "A replacement keeps the parent of the order it replaces",
    });
  }
  const hasExits = childOrders(state.book, oldId).some((o) => o.state.status === "PendingNew");
  for (const [exit, given] of [
    ["ProfitTarget", input.profitTarget],
    ["StopLoss", input.stopLoss],
  ] as const) {
    if (!hasExits || given === undefined) continue;
    errors.push({
      name: "InvalidValue",
      field: `${signalField}.${exit}`,
      message: `Signal ${oldId}'s exits pass to the replacement: replace them by their own signal ids`,
    });
  }
  if (errors.length > 0) throw new Refusal(errors);
  const checked = termsFor(input, state, old.parentId, op.nowMs, op.market, oldTerms.openClose);
  const terms: OrderTerms = { ...checked, signalType: oldTerms.signalType };
  // Only what the replacement adds to the old order's quantity needs new buying power.
  if (compare(terms.quantity, oldTerms.quantity) > 0) {
    checkBuyingPower(state, { ...terms, quantity: sub(terms.quantity, oldTerms.quantity) }, op.market);
  }
  return place(op, state, terms, input, {
    parentId: old.parentId,
    replacing: { id: oldId, keepOcaGroup: input.doNotCreateOcaGroup !== true },
  });
}

/** CancelStrategyOrder: cancels a live signal with its exits and OCA siblings. */
export async function cancelOrder(ctx: TradingCall, strategyId: number, signalId: number): Promise<PlacedOrder> {
  return tradeOn(ctx, strategyId, (op) => {
    const state = ensureLoaded(op, op.account.state, signalId, "SignalId");
    const order = state.book.get(signalId);
    if (!order) throw refuse("NotFound", { field: "SignalId", message: `No signal ${signalId}` });
    if (!CANCELLABLE.has(order.state.status)) {
      throw refuse("CancelRejected", {
        field: "SignalId",
        message:
          order.state.status === "Filled"
            ? `Signal ${signalId} was traded and could not be canceled`
            : `Signal ${signalId} is ${order.state.status} and could not be canceled`,
        meta: { OrderStatus: order.state.status },
      });
    }
    const events: BookEvent[] = [];
    const next = withBook(state, cancel(state.book, signalId), events);
    const exits = childOrders(next.book, signalId);
    const exitOf = (signalType: number) =>
      exits.find((o) => next.terms.get(o.id)?.signalType === signalType)?.id ?? null;
    return {
      state: next,
      result: {
        signalId,
        profitTargetSignalId: exitOf(SIGNAL_TYPES.profitTarget),
        stopLossSignalId: exitOf(SIGNAL_TYPES.stopLoss),
        exitSignalsOcaGroupId: exits.find((o) => o.ocaGroup !== null)?.ocaGroup ?? null,
        parkedUntilMs: order.parkedUntilMs,
      },
    };
  });
}
