import type { PlatformId } from "../core/ids.js";
import { STRATEGY_COLUMNS, type StrategyRow } from "../store/trading-state.js";
import { reachesPerson } from "./legacy-access.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { follows } from "./subscriptions.js";
import { mayTrade } from "./trading.js";

/**
 * Who may read a strategy's orders, positions and trades: one rule for the v4
 * reads and the legacy commands. Those who may trade the strategy (its owner,
 * the owner's site administrators, service admins); a key that reaches the
 * owner (./legacy-access.ts: acting through a platform of the owner's
 * white-label site); and, where subscribers are let in, a person who follows
 * the strategy now. Reading never lets anyone trade: placing and canceling
 * stay with those who may trade (mayTrade).
 */
export interface ReadAccess {
  /** The platform the key acts through: the path's in legacy Private Platform context, the key's own on v4. */
  readonly platformId: PlatformId | null;
  /** Whether following the strategy is enough: on v4, and for the legacy commands open to subscribers. */
  readonly subscribers: boolean;
}

/** The access of a v4 read: the key's own platform, subscribers let in. */
export const v4Reader = (ctx: RequestContext): ReadAccess => ({ platformId: ctx.caller.platformId, subscribers: true });

export async function mayReadOrders(ctx: RequestContext, strategy: StrategyRow, access: ReadAccess): Promise<boolean> {
  if (await mayTrade(dbOf(ctx), ctx.caller, strategy)) return true;
  if (await reachesPerson(ctx, access.platformId, strategy.owner_person_id)) return true;
  return access.subscribers && (await follows(ctx, strategy.id, Number(ctx.caller.personId)));
}

/** The same rule for a strategy by id: false when there is no such strategy. */
export async function mayReadOrdersOf(ctx: RequestContext, strategyId: number, access: ReadAccess): Promise<boolean> {
  const strategy = await dbOf(ctx)
    .selectFrom("strategies")
    .select(STRATEGY_COLUMNS)
    .where("id", "=", strategyId)
    .executeTakeFirst();
  return strategy !== undefined && (await mayReadOrders(ctx, strategy, access));
}
