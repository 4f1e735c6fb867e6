import { tradesAsCfd } from "../../core/autotrade/settings.js";
import type { SyncVenue } from "../../core/autotrade/sync-markets.js";
import { venueOf } from "../../core/autotrade/sync-markets.js";
import { type SyncPlan, syncPlan } from "../../core/autotrade/sync-plan.js";
import { add, type Decimal, div, formatDecimal, fromInteger, storedDecimal, sub, ZERO } from "../../core/decimal.js";
import type { MarketView } from "../../core/market/view.js";
import { hasExpired } from "../../core/orders/contract-expiry.js";
import { exclusionOf, modelValueOf, type StrategyFacts, type SyncSetup } from "../../services/autotrade-sync-facts.js";
import type { NewAccountOrder } from "../../store/journal/batch.js";
import { instrumentOf } from "../../store/trading-state.js";
import { type FollowedSetup, type FollowerAccount, positionKey } from "./followers.js";

/**
 * A setup's sync at some venues, worked out from what the desk holds of its
 * account (what the setup holds, its working orders) and what the strategy
 * holds: per symbol the plan (src/core/autotrade/sync-plan.ts), and the
 * market orders it makes, as account order rows with purpose `sync`.
 */
export interface SymbolSync {
  readonly symbol: string;
  readonly venue: SyncVenue;
  readonly plan: SyncPlan;
}

export interface SetupSync {
  readonly rows: NewAccountOrder[];
  readonly symbols: SymbolSync[];
  /** Symbols an opening leg was made in: the desk stops following the strategy to flat there. */
  readonly opened: string[];
}

export interface SetupSyncInput {
  readonly account: FollowerAccount;
  readonly setup: FollowedSetup;
  readonly sync: SyncSetup;
  readonly facts: StrategyFacts;
  /** Only the symbols of these venues are synced. */
  readonly venues: ReadonlySet<string>;
  readonly view: MarketView;
  readonly nowMs: number;
  /** The idempotency key of a symbol's leg (0: the first, 1: the open after a reversal's close). */
  readonly keyOf: (venue: SyncVenue, symbol: string, leg: number) => string;
}

/** What the setup's working market orders in the symbol still add (signed): they fill at once, or are waited for. */
export function workingMarketQuantity(account: FollowerAccount, setupId: number, symbol: string): Decimal {
  let total = ZERO;
  for (const { row } of account.orders.values()) {
    if (row.setup_id !== setupId || row.symbol !== symbol || row.order_type !== "market") continue;
    const leaves = sub(storedDecimal(row.quantity), storedDecimal(row.filled_quantity));
    total = row.side === "buy" ? add(total, leaves) : sub(total, leaves);
  }
  return total;
}

/** The symbols either side holds: the strategy's positions and the setup's holdings. */
function symbolsOf(account: FollowerAccount, setup: FollowedSetup, facts: StrategyFacts): Map<string, string> {
  const symbols = new Map<string, string>();
  for (const position of facts.positions.values()) symbols.set(position.symbol, position.symbolType);
  for (const held of account.positions.values())
    if (held.strategyId === setup.strategyId) symbols.set(held.symbol, held.symbolType);
  return symbols;
}

export function planSetupSync(input: SetupSyncInput): SetupSync {
  const { account, setup, facts, view } = input;
  const rows: NewAccountOrder[] = [];
  const symbols: SymbolSync[] = [];
  const opened: string[] = [];
  let modelValue: Decimal | null | undefined;
  for (const [symbol, symbolType] of symbolsOf(account, setup, facts)) {
    const instrument = instrumentOf(symbol, symbolType);
    const venue = venueOf(instrument);
    if (!input.venues.has(venue.id)) continue;
    modelValue ??= modelValueOf(facts, view);
    const position = facts.positions.get(symbol);
    const quote = view.quote(instrument);
    const plan = syncPlan({
      symbolType: instrument.symbolType,
      strategyQuantity: position?.quantity ?? ZERO,
      held: account.positions.get(positionKey(setup.strategyId, symbol))?.position.quantity ?? ZERO,
      working: workingMarketQuantity(account, setup.id, symbol),
      scalingPercentage: setup.scaling,
      accountValue: account.value,
      modelValue,
      price: quote ? div(add(quote.bid, quote.ask), fromInteger(2)) : null,
      settings: setup.settings,
      excluded: position ? exclusionOf(position, input.sync) : null,
      expired: hasExpired(instrument, input.nowMs),
    });
    symbols.push({ symbol, venue, plan });
    plan.legs.forEach((leg, i) => {
      if (leg.openClose === "open") opened.push(symbol);
      rows.push({
        account_id: account.id,
        setup_id: setup.id,
        strategy_id: setup.strategyId,
        source_order_id: null,
        purpose: "sync",
        symbol,
        symbol_type: instrument.symbolType,
        side: leg.side,
        open_close: leg.openClose,
        order_type: "market",
        tif: "day",
        quantity: formatDecimal(leg.quantity),
        limit_price: null,
        stop_price: null,
        status: "PendingNew",
        prior_status: null,
        awaiting_confirmation: setup.confirmationNeeded ? 1 : 0,
        virtual_limit: 0,
        as_cfd: tradesAsCfd(instrument.symbolType, setup.settings) ? 1 : 0,
        filled_quantity: "0",
        filled_notional: "0",
        idempotency_key: input.keyOf(venue, symbol, i),
        broker_order_id: null,
        replaces_id: null,
        reason: setup.confirmationNeeded ? "Held until the customer confirms it" : null,
        created_at: input.nowMs,
        updated_at: input.nowMs,
        sent_at: null,
        closed_at: null,
      });
    });
  }
  return { rows, symbols, opened };
}

/** Whether the desk may sync the setup now: live, copying, AutoSync on, in a linked account. */
export const syncable = (account: FollowerAccount, setup: FollowedSetup): boolean =>
  account.linked && setup.status === "active" && setup.enabled && setup.syncEnabled;
