import { actingForSystem, mayFollow, reachesPerson } from "../../services/legacy-access.js";
import { mayReadOrdersOf, mayReadPerformanceOf } from "../../services/order-access.js";
import { LegacyFailure, type LegacyRequestContext } from "./command.js";

/**
 * Asking the services whether the key reaches the system or person a command
 * names (its `systemid`, `personid`...), and the legacy answer when it does not.
 */

const unreachable = (strategyId: number) =>
  new LegacyFailure("Forbidden", `This apikey cannot reach system ${strategyId}`);

/** The context to act in for the system's owner, when the key acts for them. */
export async function systemActedFor(ctx: LegacyRequestContext, strategyId: number) {
  const acting = await actingForSystem(ctx, ctx.platformId, strategyId);
  if (!acting) throw unreachable(strategyId);
  return { strategyId, acting };
}

/** Refuses a system whose orders, positions and trades the key may not read; `subscribers` for the commands open to them (context S). */
export async function mustReadSystem(ctx: LegacyRequestContext, strategyId: number, subscribers: boolean) {
  if (!(await mayReadOrdersOf(ctx, strategyId, { platformId: ctx.platformId, subscribers }))) {
    throw unreachable(strategyId);
  }
}

/** Refuses a system whose performance (equity) the key may not read: subscribers of any kind may, simulated ones included. */
export async function mustReadPerformance(ctx: LegacyRequestContext, strategyId: number) {
  if (!(await mayReadPerformanceOf(ctx, strategyId, { platformId: ctx.platformId, subscribers: true }))) {
    throw unreachable(strategyId);
  }
}

/** The person named, or the key's own when none is. */
export const personOr = (ctx: LegacyRequestContext, personId: number | undefined): number =>
  personId ?? Number(ctx.caller.personId);

/** Refuses a person the key does not reach, with the message given. */
export async function mustReachPerson(ctx: LegacyRequestContext, personId: number, message: string): Promise<void> {
  if (!(await reachesPerson(ctx, ctx.platformId, personId))) throw new LegacyFailure("UnreachablePerson", message);
}

/** Refuses a system the key may not have a person follow (followable: public, or reached). */
export async function mustFollowSystem(ctx: LegacyRequestContext, strategyId: number): Promise<void> {
  if (!(await mayFollow(ctx, ctx.platformId, strategyId))) throw unreachable(strategyId);
}
