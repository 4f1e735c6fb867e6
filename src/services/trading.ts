import { administers, type Caller, isServiceAdmin, type Membership, membership } from "../core/access.js";
import { type AccountSummary, markPositions, summarize } from "../core/account.js";
import { COMMISSION_PLANS } from "../core/commissions.js";
import { type Decimal, decimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { TradingState } from "../core/orders/execution.js";
import type { StrategyOfAccount } from "../engine/frame/account.js";
import type { AccountOperation, TradeOptions, TradingFrame } from "../engine/frame/frame.js";
import type { MarketData } from "../engine/market-data.js";
import { marketViewAt } from "../engine/market-view.js";
import { instrumentOf, type StrategyRow } from "../store/trading-state.js";
import type { Tx } from "../store/transaction.js";
import type { RequestContext, Runtime } from "./runtime.js";

/**
 * Trading operations run in the account-scoped frame (src/engine/frame): an
 * operation's step changes the strategy's model account in memory, the market
 * then acts on it (a marketable order fills before the answer), and the
 * answer comes once the change is durably committed.
 */
export interface TradingRuntime extends Runtime {
  readonly market: MarketData;
  readonly frame: TradingFrame;
}

export interface TradingContext extends TradingRuntime, RequestContext {}

/** Model accounts pay the Default commission plan. */
export const MODEL_ACCOUNT_PLAN = COMMISSION_PLANS[0] as (typeof COMMISSION_PLANS)[number];

/** Who may trade a strategy and read its orders: its owner, the owner's site administrators, service admins. */
export function mayTradeStrategy(
  caller: Caller,
  strategy: { readonly ownerPersonId: number; readonly owner: Membership },
): boolean {
  return strategy.ownerPersonId === caller.personId || isServiceAdmin(caller) || administers(caller, strategy.owner);
}

/** mayTradeStrategy for a strategy row read from storage (the owner's sites are read when it matters). */
export async function mayTrade(tx: Tx, caller: Caller, strategy: StrategyRow): Promise<boolean> {
  if (strategy.owner_person_id === caller.personId || isServiceAdmin(caller)) return true;
  if (caller.role === "person") return false;
  const owner = await tx
    .selectFrom("persons as p")
    .leftJoin("sites as s", "s.id", "p.white_label_site_id")
    .select(["p.white_label_site_id", "p.geo_site_id", "s.geo_site_id as site_geo_id"])
    .where("p.id", "=", strategy.owner_person_id)
    .executeTakeFirst();
  return (
    owner !== undefined &&
    mayTradeStrategy(caller, {
      ownerPersonId: strategy.owner_person_id,
      owner: membership(owner.white_label_site_id, owner.geo_site_id ?? owner.site_geo_id),
    })
  );
}

const authorize = (caller: Caller, strategy: StrategyOfAccount) => {
  if (!mayTradeStrategy(caller, strategy)) {
    throw refuse("Forbidden", {
      field: "StrategyId",
      message: "Only the strategy's owner, the owner's site administrators and service admins may trade it",
    });
  }
};

export interface TradeStep<T> {
  readonly state: TradingState;
  readonly result: T;
}

/**
 * Runs one trading operation on a strategy's model account. The caller is
 * authorized first; without a caller (the fill loop, the schedulers) nothing
 * is. `step` changes the account's state synchronously; refusing throws.
 */
export function tradeOn<T>(
  ctx: TradingRuntime & Partial<Pick<RequestContext, "caller" | "actor" | "idempotency">>,
  strategyId: number,
  step: (op: AccountOperation) => TradeStep<T>,
  options?: TradeOptions,
): Promise<T> {
  const { caller, actor } = ctx;
  return ctx.frame.trade(
    {
      clock: ctx.clock,
      market: ctx.market,
      actorPersonId: (actor ?? caller)?.personId ?? null,
      onBehalfOfPersonId: actor && caller && actor.personId !== caller.personId ? caller.personId : null,
      idempotency: ctx.idempotency ?? null,
    },
    strategyId,
    (op) => {
      if (caller) authorize(caller, op.account.strategy);
      return step(op);
    },
    options,
  );
}

/**
 * Lets the market and the clock act on a strategy: fills, releases, expiries
 * and excursions due now; `focus` says which working orders are tried (by
 * default all of them).
 */
export const workStrategy = (runtime: TradingRuntime, strategyId: number, work: TradeOptions = {}): Promise<void> =>
  tradeOn(runtime, strategyId, (op) => ({ state: op.account.state, result: undefined }), {
    ...work,
    focus: work.focus ?? "all",
  });

/** The model account of a strategy now: starting cash, cash, equity, margin used and buying power, in dollars. */
export async function modelAccount(
  runtime: TradingRuntime,
  strategyId: number,
): Promise<AccountSummary & { readonly startingCash: Decimal }> {
  const account = (await runtime.frame.committedAccounts([strategyId])).get(strategyId);
  if (!account) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${strategyId}` });
  const held = [...account.positions.values()].map((row) => ({
    instrument: instrumentOf(row.symbol, row.symbol_type),
    position: { quantity: decimal(row.quantity), cost: decimal(row.cost) },
  }));
  const summary = summarize(account.cash, markPositions(held, marketViewAt(runtime.market, runtime.clock.nowMs())));
  return { ...summary, startingCash: account.strategy.startingCapital };
}

/** A strategy's trading version: its model account's commits, as stored now (a cache of its record keeps the newest). */
export async function tradingVersion(runtime: TradingRuntime, strategyId: number): Promise<number> {
  const account = (await runtime.frame.committedAccounts([strategyId])).get(strategyId);
  if (!account) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${strategyId}` });
  return account.version;
}
