import type { Selectable } from "kysely";
import { copyDecision, type SkipReason } from "../core/autotrade/copy.js";
import { lastSyncOf, settingsOfText, willSyncOf } from "../core/autotrade/settings.js";
import { type SyncVenue, venueOf } from "../core/autotrade/sync-markets.js";
import { type SyncPlan, syncPlan } from "../core/autotrade/sync-plan.js";
import { SYNC_BLOCK_TEXT } from "../core/autotrade/sync-reasons.js";
import { add, type Decimal, div, fromInteger, neg, storedDecimal, sub, ZERO } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { MarketView } from "../core/market/view.js";
import { hasExpired } from "../core/orders/contract-expiry.js";
import { currentOrNextSession, sessionAt, type TradingSession } from "../core/sessions.js";
import type { Instrument } from "../core/symbols/instrument.js";
import { OPEN_STATUSES } from "../engine/autotrade/followers.js";
import { marketViewAt } from "../engine/market-view.js";
import type { AccountOrdersTable } from "../store/schema.js";
import { instrumentOf } from "../store/trading-state.js";
import type { Tx } from "../store/transaction.js";
import { personActedOn, type SetupView, setupRows } from "./autotrade-reads.js";
import {
  exclusionOf,
  modelValueOf,
  readStrategyFacts,
  type StrategyFacts,
  type SyncSetup,
} from "./autotrade-sync-facts.js";
import { dbOf } from "./runtime.js";
import type { TradingContext } from "./trading.js";

/**
 * GetAutotradeSyncStatusReport: for each live setup of a person's account,
 * a row per position (of the strategy, or of the setup in the account:
 * ReportType 1) and per working signal of the strategy (ReportType 2), each
 * saying what the account holds (or works), what the strategy holds (or
 * works), the scaled quantity AutoSync (or the copier) makes of it, and
 * whether the account is in sync, or why not. Read in a fixed number of
 * statements whatever the number of setups (docs/decisions.md, issue 14).
 */
export const REPORT_TYPES = { position: 1, signal: 2 } as const;

export interface SyncReportRow {
  readonly setup: SetupView;
  readonly reportType: (typeof REPORT_TYPES)[keyof typeof REPORT_TYPES];
  readonly signal: { readonly id: number; readonly signalType: number } | null;
  readonly instrument: Instrument;
  readonly accountQuantity: Decimal;
  readonly strategyQuantity: Decimal;
  readonly scaledQuantity: Decimal | null;
  readonly inSync: boolean;
  readonly notInSyncReason: string | null;
}

type AccountOrder = Selectable<AccountOrdersTable>;

const WORKING_SIGNALS = ["Working", "PartiallyFilled"];

/** Skips that leave nothing for the account to work: the copy is rightly nothing. */
const NOTHING_TO_COPY: ReadonlySet<SkipReason> = new Set([
  "class_disabled",
  "long_disabled",
  "short_disabled",
  "closing_orders_only",
  "rounds_to_zero",
  "at_maximum",
  "nothing_to_close",
]);

const signed = (side: string, quantity: Decimal): Decimal => (side === "buy" ? quantity : neg(quantity));
const iso = (ms: number) => new Date(ms).toISOString();

export async function syncStatusReport(
  ctx: TradingContext,
  personId: number,
  account: string,
  strategyId: number | undefined,
): Promise<SyncReportRow[]> {
  const db = dbOf(ctx);
  await personActedOn(db, ctx.caller, personId);
  const owned = await db
    .selectFrom("broker_accounts")
    .select("account_id")
    .where("person_id", "=", personId)
    .where("account_number", "=", account)
    .execute();
  if (owned.length === 0)
    throw refuse("NotFound", { field: "Account", message: `Person ${personId} has no account ${account}` });
  let query = setupRows(db)
    .where("s.person_id", "=", personId)
    .where(
      "s.account_id",
      "in",
      owned.map((row) => row.account_id),
    );
  if (strategyId !== undefined) query = query.where("s.strategy_id", "=", strategyId);
  const setups = await query.orderBy("s.id").execute();
  if (setups.length === 0) return [];
  const nowMs = ctx.clock.nowMs();
  const view = marketViewAt(ctx.market, nowMs);
  const rows: SyncReportRow[] = [];
  for (const accountId of [...new Set(setups.map((s) => s.account_id))]) {
    const ofAccount = setups.filter((s) => s.account_id === accountId);
    const read = await readAccount(db, accountId, ofAccount);
    for (const setup of ofAccount) rows.push(...setupRowsOf(setup, read, view, nowMs));
  }
  return rows;
}

interface AccountRead {
  readonly facts: ReadonlyMap<number, StrategyFacts>;
  /** What each strategy's setup holds, by strategy and symbol. */
  readonly holdings: ReadonlyMap<
    number,
    ReadonlyMap<string, { readonly symbolType: string; readonly quantity: Decimal }>
  >;
  /** The working signals, by strategy. */
  readonly signals: ReadonlyMap<number, readonly SignalRow[]>;
  /** The account's orders, by setup: the open ones, and every one copying a working signal. */
  readonly orders: ReadonlyMap<number, readonly AccountOrder[]>;
  /** Copy skips of the working signals, by `setupId|signalId`. */
  readonly skips: ReadonlyMap<string, { readonly reason: string; readonly message: string }>;
}

interface SignalRow {
  readonly id: number;
  readonly strategy_id: number;
  readonly symbol: string;
  readonly symbol_type: string;
  readonly side: "buy" | "sell";
  readonly open_close: "open" | "close";
  readonly quantity: string;
  readonly limit_price: string | null;
  readonly stop_price: string | null;
  readonly signal_type: number;
}

/**
 * Everything the report needs of one account's setups, in six statements
 * (two more when signals work): ids in lists, not subqueries, so the plans do
 * not hang on the tables' statistics.
 */
async function readAccount(db: Tx, accountId: number, setups: readonly SetupView[]): Promise<AccountRead> {
  const strategyIds = [...new Set(setups.map((setup) => setup.strategy_id))];
  const [facts, holdings, signals, open] = await Promise.all([
    readStrategyFacts(db, strategyIds),
    db.selectFrom("autotrade_positions").selectAll().where("account_id", "=", accountId).execute(),
    db
      .selectFrom("orders")
      .select([
        "id",
        "strategy_id",
        "symbol",
        "symbol_type",
        "side",
        "open_close",
        "quantity",
        "limit_price",
        "stop_price",
        "signal_type",
      ])
      .where("status", "in", WORKING_SIGNALS)
      .where("strategy_id", "in", strategyIds)
      .orderBy("id")
      .execute(),
    db
      .selectFrom("account_orders")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("status", "in", OPEN_STATUSES)
      .execute(),
  ]);
  const signalIds = signals.map((signal) => signal.id);
  const [copies, skips] =
    signalIds.length === 0
      ? [[], []]
      : await Promise.all([
          db
            .selectFrom("account_orders")
            .selectAll()
            .where("account_id", "=", accountId)
            .where("source_order_id", "in", signalIds)
            .execute(),
          db
            .selectFrom("copy_skips")
            .select(["setup_id", "source_order_id", "reason", "message"])
            .where("account_id", "=", accountId)
            .where("source_order_id", "in", signalIds)
            .execute(),
        ]);
  const byKey = new Map<string, AccountOrder>();
  for (const order of [...open, ...copies]) byKey.set(order.idempotency_key, order);
  const held = new Map<number, Map<string, { symbolType: string; quantity: Decimal }>>();
  for (const h of holdings) {
    const of = held.get(h.strategy_id) ?? new Map();
    of.set(h.symbol, { symbolType: h.symbol_type, quantity: storedDecimal(h.quantity) });
    held.set(h.strategy_id, of);
  }
  return {
    facts,
    holdings: held,
    signals: groupBy(signals, (signal) => signal.strategy_id),
    orders: groupBy([...byKey.values()], (order) => order.setup_id ?? 0),
    skips: new Map(skips.map((s) => [`${s.setup_id}|${s.source_order_id}`, { reason: s.reason, message: s.message }])),
  };
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

const isOpen = (order: AccountOrder) => (OPEN_STATUSES as readonly string[]).includes(order.status);

function setupRowsOf(setup: SetupView, read: AccountRead, view: MarketView, nowMs: number): SyncReportRow[] {
  const facts = read.facts.get(setup.strategy_id);
  if (!facts) return [];
  const settings = settingsOfText(setup.settings);
  const sync: SyncSetup = {
    id: setup.id,
    willSync: willSyncOf(setup.sync_to_open),
    doNotJoin: setup.do_not_join_open_positions === 1,
    startedAt: Number(setup.started_at),
  };
  const accountValue = setup.net_liquidation === null ? null : storedDecimal(setup.net_liquidation);
  const modelValue = modelValueOf(facts, view);
  const ordersOfSetup = read.orders.get(setup.id) ?? [];
  const holdings = read.holdings.get(setup.strategy_id) ?? new Map();
  const base = { setup, accountValue, modelValue, settings };
  const rows: SyncReportRow[] = [];

  const symbols = new Map<string, string>();
  for (const p of facts.positions.values()) symbols.set(p.symbol, p.symbolType);
  for (const [symbol, held] of holdings) symbols.set(symbol, held.symbolType);
  for (const [symbol, symbolType] of [...symbols].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const instrument = instrumentOf(symbol, symbolType);
    const position = facts.positions.get(symbol);
    const held = holdings.get(symbol)?.quantity ?? ZERO;
    const plan = syncPlan({
      symbolType: instrument.symbolType,
      strategyQuantity: position?.quantity ?? ZERO,
      held,
      working: workingMarket(ordersOfSetup, symbol),
      scalingPercentage: storedDecimal(setup.scaling_percentage),
      accountValue: base.accountValue,
      modelValue,
      price: middleOf(view, instrument),
      settings,
      excluded: position ? exclusionOf(position, sync) : null,
      expired: hasExpired(instrument, nowMs),
    });
    rows.push({
      setup,
      reportType: REPORT_TYPES.position,
      signal: null,
      instrument,
      accountQuantity: held,
      strategyQuantity: position?.quantity ?? ZERO,
      scaledQuantity: plan.target,
      inSync: plan.inSync,
      notInSyncReason: plan.inSync ? null : positionReason(setup, sync, plan, instrument, nowMs),
    });
  }

  for (const signal of read.signals.get(setup.strategy_id) ?? []) {
    rows.push(signalRowOf(base, read, facts, ordersOfSetup, signal, view));
  }
  return rows;
}

/** The middle of the symbol's quote now, or null when it has none (what the copier and AutoSync value at). */
function middleOf(view: MarketView, instrument: Instrument): Decimal | null {
  const quote = view.quote(instrument);
  return quote ? div(add(quote.bid, quote.ask), fromInteger(2)) : null;
}

/** What the setup's working market orders in the symbol still add (signed). */
function workingMarket(orders: readonly AccountOrder[], symbol: string): Decimal {
  let total = ZERO;
  for (const order of orders) {
    if (order.symbol !== symbol || order.order_type !== "market" || !isOpen(order)) continue;
    total = add(total, signed(order.side, sub(storedDecimal(order.quantity), storedDecimal(order.filled_quantity))));
  }
  return total;
}

/** Why a setup is not synced at all, if it is not. */
function setupReason(setup: SetupView): string | null {
  if (setup.status === "stop_requested") return "A stop of the setup is requested";
  if (setup.is_autotrade_enabled !== 1)
    return `Autotrade is disabled: ${setup.autotrade_disabled_reason ?? "no reason given"}`;
  if (setup.is_linked !== 1) return "The broker delinked the account";
  return null;
}

const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function positionReason(
  setup: SetupView,
  sync: SyncSetup,
  plan: SyncPlan,
  instrument: Instrument,
  nowMs: number,
): string {
  const off = setupReason(setup);
  if (off) return off;
  if (plan.blocked) return sentence(SYNC_BLOCK_TEXT[plan.blocked]);
  if (setup.is_sync_enabled !== 1) return `AutoSync is disabled: ${setup.sync_disabled_reason ?? "no reason given"}`;
  const venue = venueOf(instrument);
  if (!sync.willSync[venue.market]) return `WillSyncToOpen${venue.market} is off: SyncPositionsToOpen syncs it`;
  const { session, nextOpenMs } = timing(venue, nowMs);
  const lastSync = lastSyncOf(setup.last_sync)[venue.market] ?? 0;
  if (session && lastSync < session.opensAtMs)
    return `The ${venue.market} market is open: AutoSync syncs it within moments`;
  return `AutoSync syncs it at the next ${venue.market} open (${iso(nextOpenMs)})`;
}

/** A venue's session now and its next open (after this session), worked out once per venue and instant. */
const timings = new Map<string, { atMs: number; session: TradingSession | null; nextOpenMs: number }>();
function timing(venue: SyncVenue, nowMs: number) {
  const known = timings.get(venue.id);
  if (known?.atMs === nowMs) return known;
  const session = sessionAt(venue.schedule, nowMs);
  const nextOpenMs = currentOrNextSession(venue.schedule, session ? session.closesAtMs : nowMs).opensAtMs;
  const worked = { atMs: nowMs, session, nextOpenMs };
  timings.set(venue.id, worked);
  return worked;
}

function signalRowOf(
  base: {
    readonly setup: SetupView;
    readonly accountValue: Decimal | null;
    readonly modelValue: Decimal;
    readonly settings: ReturnType<typeof settingsOfText>;
  },
  read: AccountRead,
  facts: StrategyFacts,
  ordersOfSetup: readonly AccountOrder[],
  signal: SignalRow,
  view: MarketView,
): SyncReportRow {
  const { setup } = base;
  const instrument = instrumentOf(signal.symbol, signal.symbol_type);
  const quantity = storedDecimal(signal.quantity);
  const copies = ordersOfSetup
    .filter((o) => o.source_order_id === signal.id && o.purpose === "copy")
    .sort((a, b) => a.created_at - b.created_at);
  const copy = copies.at(-1);
  const working = copy !== undefined && isOpen(copy) && copy.awaiting_confirmation !== 1;
  const accountQuantity = working ? signed(copy.side, storedDecimal(copy.quantity)) : ZERO;
  const skip = read.skips.get(`${setup.id}|${signal.id}`);
  let scaled: Decimal | null;
  let reason: string | null = null;
  if (copy) {
    scaled = signed(copy.side, storedDecimal(copy.quantity));
    if (!working)
      reason =
        copy.awaiting_confirmation === 1 && isOpen(copy)
          ? "The copy is held until the customer confirms it"
          : `The copy ended ${copy.status}${copy.reason ? `: ${copy.reason}` : ""}`;
  } else if (skip) {
    scaled = NOTHING_TO_COPY.has(skip.reason as SkipReason) ? ZERO : null;
    reason = skip.message;
  } else {
    // Not copied: it started working before the setup followed the strategy (or while it was off).
    const held = read.holdings.get(setup.strategy_id)?.get(signal.symbol)?.quantity ?? ZERO;
    const decision = copyDecision({
      symbolType: instrument.symbolType,
      side: signal.side,
      openClose: signal.open_close,
      quantity,
      strategyHeld: facts.positions.get(signal.symbol)?.quantity ?? ZERO,
      followerHeld: held,
      scalingPercentage: storedDecimal(setup.scaling_percentage),
      accountValue: base.accountValue ?? ZERO,
      modelValue: base.modelValue,
      // As the copier prices it: a market order at the market's middle.
      price: signal.limit_price
        ? storedDecimal(signal.limit_price)
        : signal.stop_price
          ? storedDecimal(signal.stop_price)
          : middleOf(view, instrument),
      settings: base.settings,
    });
    // As for a skip the copier recorded: nothing is rightly nothing, a skip for want of a value or price is unknown.
    scaled = decision.copy
      ? signed(signal.side, decision.quantity)
      : NOTHING_TO_COPY.has(decision.reason)
        ? ZERO
        : null;
    reason =
      "The signal was not copied: it started working before the setup followed the strategy, or while it was off";
  }
  const inSync = scaled !== null && accountQuantity === scaled;
  return {
    setup,
    reportType: REPORT_TYPES.signal,
    signal: { id: signal.id, signalType: signal.signal_type },
    instrument,
    accountQuantity,
    strategyQuantity: signed(signal.side, quantity),
    scaledQuantity: scaled,
    inSync,
    notInSyncReason: inSync ? null : (setupReason(setup) ?? reason ?? "The copy is not working in the account"),
  };
}
