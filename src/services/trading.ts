import { type AccountSummary, markPositions, summarize } from "../core/account.js";
import { COMMISSION_PLANS } from "../core/commissions.js";
import { type Decimal, decimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { TradingState } from "../core/orders/execution.js";
import type { AccountOperation, TradeOptions, TradingFrame } from "../engine/frame/frame.js";
import type { MarketData } from "../engine/market-data.js";
import { marketViewAt } from "../engine/market-view.js";
import { instrumentOf } from "../store/trading-state.js";
import { mayReadOrdersOf, mayTradeStrategy, noStrategy, v4Reader } from "./order-access.js";
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

/** Whom a trading operation is for: a caller (authorized first), or nobody (the fill loop, the mirror of a parent strategy). */
export type TradingCall = TradingRuntime & Partial<Pick<RequestContext, "caller" | "actor" | "idempotency">>;

/** Model accounts pay the Default commission plan. */
export const MODEL_ACCOUNT_PLAN = COMMISSION_PLANS[0] as (typeof COMMISSION_PLANS)[number];

export interface TradeStep<T> {
  readonly state: TradingState;
  readonly result: T;
}

/**
 * Runs one trading operation on a strategy's model account. The caller is
 * authorized first; without a caller (the fill loop, the schedulers) nothing
 * is. `step` changes the account's state synchronously; refusing throws. A
 * caller who may not trade the strategy gets 403 when it may see it, and the
 * 404 of a strategy that does not exist when it is private and hidden from it.
 */
export function tradeOn<T>(
  ctx: TradingCall,
  strategyId: number,
  step: (op: AccountOperation) => TradeStep<T>,
  options?: TradeOptions,
): Promise<T> {
  const { caller, actor } = ctx;
  let refusedPrivate = false;
  const trading = ctx.frame.trade(
    {
      clock: ctx.clock,
      market: ctx.market,
      actorPersonId: (actor ?? caller)?.personId ?? null,
      onBehalfOfPersonId: actor && caller && actor.personId !== caller.personId ? caller.personId : null,
      idempotency: ctx.idempotency ?? null,
    },
    strategyId,
    (op) => {
      if (caller && !mayTradeStrategy(caller, op.account.strategy)) {
        refusedPrivate = op.account.strategy.isPrivate;
        throw refuse("Forbidden", {
          field: "StrategyId",
          message: "Only the strategy's owner, the owner's site administrators and service admins may trade it",
        });
      }
      return step(op);
    },
    options,
  );
  if (!caller) return trading;
  return trading.catch(async (error: unknown) => {
    // Subscribers and platform keys may read a private strategy they may not trade: to them it exists.
    if (refusedPrivate && !(await mayReadOrdersOf({ ...ctx, caller }, strategyId, v4Reader({ ...ctx, caller })))) {
      throw noStrategy(strategyId);
    }
    throw error;
  });
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
