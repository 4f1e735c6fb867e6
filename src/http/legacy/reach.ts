import { actingForSystem, mayFollow, reachesPerson } from "../../services/legacy-access.js";
import { mayReadOrdersOf } from "../../services/order-access.js";
import { LegacyFailure, type LegacyRequestContext } from "./command.js";

/**
 * Reading the system or person a command names, and asking the services
 * whether the key reaches it: the legacy answer when it does not.
 */

export function integerOf(value: unknown, field: string): number {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1) {
    throw new LegacyFailure("InvalidRequest", `${field} must be a positive integer`);
  }
  return Number(text);
}

const unreachable = (strategyId: number) =>
  new LegacyFailure("Forbidden", `This apikey cannot reach system ${strategyId}`);

/** The system named by `systemid`, when the key acts for its owner; with the context to act in. */
export async function systemActedFor(ctx: LegacyRequestContext, request: Readonly<Record<string, unknown>>) {
  const strategyId = integerOf(request.systemid, "systemid");
  const acting = await actingForSystem(ctx, ctx.platformId, strategyId);
  if (!acting) throw unreachable(strategyId);
  return { strategyId, acting };
}

/**
 * The system named by `systemid`, when the key may read its orders,
 * positions and trades; `subscribers` for the commands open to them (context S).
 */
export async function systemRead(
  ctx: LegacyRequestContext,
  request: Readonly<Record<string, unknown>>,
  subscribers: boolean,
): Promise<number> {
  const strategyId = integerOf(request.systemid, "systemid");
  if (!(await mayReadOrdersOf(ctx, strategyId, { platformId: ctx.platformId, subscribers }))) {
    throw unreachable(strategyId);
  }
  return strategyId;
}

/** The person named by `field`, or the key's own when it is absent. */
export function personOf(ctx: LegacyRequestContext, request: Readonly<Record<string, unknown>>, field: string): number {
  const value = request[field];
  return value === undefined ? Number(ctx.caller.personId) : integerOf(value, field);
}

/** Refuses a person the key does not reach, with the message given. */
export async function mustReachPerson(ctx: LegacyRequestContext, personId: number, message: string): Promise<void> {
  if (!(await reachesPerson(ctx, ctx.platformId, personId))) throw new LegacyFailure("UnreachablePerson", message);
}

/** The system named by `systemid`, when the key may have a person follow it (public, or reached). */
export async function systemFollowable(
  ctx: LegacyRequestContext,
  request: Readonly<Record<string, unknown>>,
): Promise<number> {
  const strategyId = integerOf(request.systemid, "systemid");
  if (!(await mayFollow(ctx, ctx.platformId, strategyId))) throw unreachable(strategyId);
  return strategyId;
}
