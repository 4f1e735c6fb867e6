import { marginOf, markPositions, openingRequirement, summarize } from "../core/account.js";
import { add, compare, type Decimal, formatDecimal, sub, ZERO } from "../core/decimal.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import { type Book, type BookEvent, cancel, replace, submit } from "../core/orders/book.js";
import { type HeldPosition, type MarketView, type TradingState, withBook } from "../core/orders/execution.js";
import { leavesQuantity } from "../core/orders/order.js";
import { CANCELLABLE, TERMINAL } from "../core/orders/status.js";
import {
  checkOrder,
  entryPriceOf,
  exitTermsOf,
  isExitSignal,
  type OpenClose,
  type OrderRequest,
  type OrderTerms,
  SIGNAL_TYPES,
} from "../core/orders/terms.js";
import type { Instrument } from "../core/symbols/instrument.js";
import {
  insertOrder,
  newOcaGroup,
  type OrderRow,
  type StrategyRow,
  stateOfRow,
  termsOfRow,
} from "../store/trading-state.js";
import type { Tx } from "../store/transaction.js";
import { marketViewAt, type TradingContext, tradeOn } from "./trading.js";

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

/** Adds an order of the strategy (a parent or the one replaced) to the loaded state when it is not there. */
async function ensureLoaded(tx: Tx, state: TradingState, strategyId: number, id: number, field: string) {
  if (state.book.has(id)) return state;
  const row = (await tx
    .selectFrom("orders")
    .selectAll()
    .where("id", "=", id)
    .where("strategy_id", "=", strategyId)
    .executeTakeFirst()) as OrderRow | undefined;
  if (!row) throw refuse("NotFound", { field, message: `No signal ${id} in strategy ${strategyId}` });
  return {
    ...state,
    book: new Map(state.book).set(id, {
      id,
      state: stateOfRow(row),
      parentId: row.parent_id,
      ocaGroup: row.oca_group_id,
      parkedUntilMs: row.parked_until,
      exit: isExitSignal(row.signal_type),
    }),
    terms: new Map(state.terms).set(id, termsOfRow(row)),
  };
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

interface Placement {
  readonly state: TradingState;
  readonly placed: PlacedOrder;
}

/** Stores the entry and its exits and puts them in the book. */
async function place(
  tx: Tx,
  strategy: StrategyRow,
  state: TradingState,
  terms: OrderTerms,
  input: OrderInput,
  links: { parentId: number | null; replacing: { id: number; keepOcaGroup: boolean } | null },
  nowMs: number,
): Promise<Placement> {
  const events: BookEvent[] = [];
  const old = links.replacing ? state.book.get(links.replacing.id) : undefined;
  const ocaOfOld = links.replacing?.keepOcaGroup ? (old?.ocaGroup ?? null) : null;
  const parkedUntilMs = input.parkedUntilMs !== undefined && input.parkedUntilMs > nowMs ? input.parkedUntilMs : null;
  const id = await insertOrder(
    tx,
    strategy.id,
    {
      terms,
      parentId: links.parentId,
      ocaGroupId: ocaOfOld,
      cancelReplaceId: links.replacing?.id ?? null,
      parkedUntilMs,
      doNotCreateOca: input.doNotCreateOcaGroup === true,
      doNotSyncToOpen: input.doNotSyncToOpen === true,
      localSignalId: input.localSignalId ?? null,
    },
    nowMs,
  );
  let current: TradingState = { ...state, terms: new Map(state.terms).set(id, terms) };
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
  const ocaGroup =
    both && input.doNotCreateOcaGroup !== true ? await newOcaGroup(tx, strategy.id, input.localOcaId ?? null) : null;
  const exitIds: { profitTarget: number | null; stopLoss: number | null } = { profitTarget: null, stopLoss: null };
  for (const kind of ["profitTarget", "stopLoss"] as const) {
    const exit = exits[kind];
    if (!exit) continue;
    const exitId = await insertOrder(
      tx,
      strategy.id,
      {
        terms: exit,
        parentId: id,
        ocaGroupId: ocaGroup,
        cancelReplaceId: null,
        parkedUntilMs: null,
        doNotCreateOca: input.doNotCreateOcaGroup === true,
        doNotSyncToOpen: input.doNotSyncToOpen === true,
      },
      nowMs,
    );
    current = { ...current, terms: new Map(current.terms).set(exitId, exit) };
    current = withBook(
      current,
      submit(current.book, { id: exitId, quantity: exit.quantity, parentId: id, ocaGroup, exit: true }, nowMs),
      events,
    );
    exitIds[kind] = exitId;
  }
  if (links.replacing) {
    // The replaced order's exits now belong to the replacement.
    for (const child of current.book.values()) {
      if (child.parentId !== id || TERMINAL.has(child.state.status)) continue;
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

/** Checks an order's terms against the strategy's position; throws the refusal with every problem found. */
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
async function checkLocalIds(tx: Tx, strategyId: number, input: OrderInput): Promise<void> {
  for (const [id, field] of [
    [input.localSignalId, "signalid"],
    [input.localOcaId, "ocaid"],
  ] as const) {
    if (id === undefined) continue;
    const signal = await tx
      .selectFrom("orders")
      .select("id")
      .where("strategy_id", "=", strategyId)
      .where((eb) =>
        eb.or([eb("local_signal_id", "=", id), ...(/^\d{1,15}$/.test(id) ? [eb("id", "=", Number(id))] : [])]),
      )
      .executeTakeFirst();
    const group = await tx
      .selectFrom("oca_groups")
      .select("id")
      .where("strategy_id", "=", strategyId)
      .where("local_id", "=", id)
      .executeTakeFirst();
    if (signal || group) {
      throw refuse("AlreadyExists", { field, message: `${id} is already used in this strategy as a signal or OCA id` });
    }
  }
}

/** While the legacy desired-positions mode holds a strategy's portfolio, no signal is entered by hand. */
function checkSignalEntry(strategy: StrategyRow): void {
  if (strategy.desired_positions !== null) {
    throw refuse("NewOrderRejected", {
      field: "StrategyId",
      message: "The strategy is in desired-positions mode: set its positions, or turn the mode off (stop/stop) first",
    });
  }
}

/** Places one order (with its exits) in a locked strategy. */
async function placeStep(
  tx: Tx,
  strategy: StrategyRow,
  loaded: TradingState,
  input: OrderInput,
  nowMs: number,
  market: MarketView,
) {
  checkSignalEntry(strategy);
  let state = loaded;
  await checkLocalIds(tx, strategy.id, input);
  const parentId = input.parentSignalId ?? null;
  if (parentId !== null) {
    state = await ensureLoaded(tx, state, strategy.id, parentId, `${signalField}.ParentSignalId`);
    const parent = state.book.get(parentId);
    if (parent && TERMINAL.has(parent.state.status) && parent.state.status !== "Filled") {
      throw refuse("NewOrderRejected", {
        field: `${signalField}.ParentSignalId`,
        message: `Signal ${parentId} is ${parent.state.status} and will never fill`,
      });
    }
  }
  const terms = termsFor(input, state, parentId, nowMs, market);
  checkBuyingPower(state, terms, market);
  return place(tx, strategy, state, terms, input, { parentId, replacing: null }, nowMs);
}

/** NewStrategyOrder: places an order (with its exits); with CancelReplaceSignalId it replaces that one. */
export async function placeOrder(ctx: TradingContext, input: OrderInput): Promise<PlacedOrder> {
  if (input.cancelReplaceSignalId !== undefined) return replaceOrder(ctx, input);
  return tradeOn(ctx, input.strategyId, ctx.caller, async (tx, strategy, loaded, nowMs) => {
    const { state, placed } = await placeStep(tx, strategy, loaded, input, nowMs, marketViewAt(ctx.market, nowMs));
    return { state, result: placed };
  });
}

/** A parent and an order conditional on it, placed together (the legacy inline conditionalUponSignal). */
export async function placeWithParent(
  ctx: TradingContext,
  parent: OrderInput,
  child: OrderInput,
): Promise<{ readonly parent: PlacedOrder; readonly child: PlacedOrder }> {
  return tradeOn(ctx, child.strategyId, ctx.caller, async (tx, strategy, loaded, nowMs) => {
    const market = marketViewAt(ctx.market, nowMs);
    const first = await placeStep(tx, strategy, loaded, parent, nowMs, market);
    const second = await placeStep(
      tx,
      strategy,
      first.state,
      { ...child, parentSignalId: first.placed.signalId },
      nowMs,
      market,
    );
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
export async function replaceOrder(ctx: TradingContext, input: OrderInput): Promise<PlacedOrder> {
  const oldId = input.cancelReplaceSignalId;
  if (oldId === undefined) {
    throw refuse("MissingValue", {
      field: `${signalField}.CancelReplaceSignalId`,
      message: "CancelReplaceSignalId is required",
    });
  }
  return tradeOn(ctx, input.strategyId, ctx.caller, async (tx, strategy, loaded, nowMs) => {
    const field = `${signalField}.CancelReplaceSignalId`;
    checkSignalEntry(strategy);
    await checkLocalIds(tx, strategy.id, input);
    const state = await ensureLoaded(tx, loaded, strategy.id, oldId, field);
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
    const hasExits = [...state.book.values()].some((o) => o.parentId === oldId && o.state.status === "PendingNew");
    if (hasExits && (input.profitTarget !== undefined || input.stopLoss !== undefined)) {
      errors.push({
        name: "InvalidValue",
        field: `${signalField}.${input.profitTarget !== undefined ? "ProfitTarget" : "StopLoss"}`,
        message: `Signal ${oldId}'s exits pass to the replacement: replace them by their own signal ids`,
      });
    }
    if (errors.length > 0) throw new Refusal(errors);
    const market = marketViewAt(ctx.market, nowMs);
    const checked = termsFor(input, state, old.parentId, nowMs, market, oldTerms.openClose);
    const terms: OrderTerms = { ...checked, signalType: oldTerms.signalType };
    // Only what the replacement adds to the old order's quantity needs new buying power.
    if (compare(terms.quantity, oldTerms.quantity) > 0) {
      checkBuyingPower(state, { ...terms, quantity: sub(terms.quantity, oldTerms.quantity) }, market);
    }
    const placement = await place(
      tx,
      strategy,
      state,
      terms,
      input,
      { parentId: old.parentId, replacing: { id: oldId, keepOcaGroup: input.doNotCreateOcaGroup !== true } },
      nowMs,
    );
    return { state: placement.state, result: placement.placed };
  });
}

/** CancelStrategyOrder: cancels a live signal with its exits and OCA siblings. */
export async function cancelOrder(ctx: TradingContext, strategyId: number, signalId: number): Promise<PlacedOrder> {
  return tradeOn(ctx, strategyId, ctx.caller, async (tx, strategy, loaded) => {
    const state = await ensureLoaded(tx, loaded, strategy.id, signalId, "SignalId");
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
    const exits = [...next.book.values()].filter((o) => o.parentId === signalId);
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
