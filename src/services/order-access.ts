import { administers, type Caller, isServiceAdmin, type Membership, membership } from "../core/access.js";
import { type Refusal, refuse } from "../core/errors.js";
import type { PlatformId } from "../core/ids.js";
import { STRATEGY_COLUMNS, type StrategyRow } from "../store/trading-state.js";
import type { Tx } from "../store/transaction.js";
import { reachesPerson } from "./legacy-access.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { follows, subscribesTo } from "./subscriptions.js";

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

/**
 * Who may read a strategy's orders, positions and trades: one rule for the v4
 * reads and the legacy commands. Those who may trade the strategy (its owner,
 * the owner's site administrators, service admins); a key that reaches the
 * owner (./legacy-access.ts: acting through a platform of the owner's
 * white-label site); and, where subscribers are let in, a person whose
 * subscription gives access now (real, live, paid up: givesAccess; simulated
 * subscribers see aggregate performance only). Reading never lets anyone trade: placing and canceling
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

/**
 * Who may read a strategy's aggregate performance (its equity) where its
 * orders are closed to them: those who may read its orders, and a person
 * holding a live subscription of any kind (a simulated one included).
 */
export async function mayReadPerformanceOf(
  ctx: RequestContext,
  strategyId: number,
  access: ReadAccess,
): Promise<boolean> {
  return (
    (await mayReadOrdersOf(ctx, strategyId, access)) ||
    (access.subscribers && (await subscribesTo(ctx, strategyId, Number(ctx.caller.personId))))
  );
}

/** The refusal of a strategy that does not exist: also what a caller gets for one it may not know of. */
export const noStrategy = (strategyId: number, field = "StrategyId"): Refusal =>
  refuse("NotFound", { field, message: `No strategy ${strategyId}` });

/**
 * Whether the caller may know that the strategy exists: a public one, or a
 * private one whose orders it may read, or that a live subscription of any kind
 * lets the caller follow (a simulated subscriber sees the aggregate
 * performance, never the orders). A caller that may not is answered as
 * if there were no such strategy (noStrategy), so that ids do not reveal
 * private strategies; one that may see it but not do the thing gets 403.
 */
export async function maySeeStrategy(ctx: RequestContext, strategy: StrategyRow): Promise<boolean> {
  return (
    strategy.is_private !== 1 ||
    (await mayReadOrders(ctx, strategy, v4Reader(ctx))) ||
    (await subscribesTo(ctx, strategy.id, Number(ctx.caller.personId)))
  );
}
