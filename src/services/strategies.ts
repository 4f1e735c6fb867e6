import { administers, type Caller, isServiceAdmin } from "../core/access.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import { fold } from "../core/search.js";
import { checkStartingCapital, checkStrategyName, STRATEGY_LIMITS } from "../core/strategy.js";
import type { DescriptionReview } from "../store/schema.js";
import { insertStrategy, touchModelAccount } from "../store/strategy-rows.js";
import { STRATEGY_COLUMNS } from "../store/trading-state.js";
import { withTransaction } from "../store/transaction.js";
import { maySeeStrategy, noStrategy } from "./order-access.js";
import { memberOf, personsWithSites } from "./person-view.js";
import type { RequestContext } from "./runtime.js";

export interface NewStrategy {
  readonly name: string;
  readonly startingCapital?: number | undefined;
  /** WL only: the customer the strategy is made for (administrators). */
  readonly ownerPersonId?: number | undefined;
  /** WL only: publicly visible from the start (administrators); hidden by default. */
  readonly initialSiteVisibility?: boolean | undefined;
}

const isAdministrator = (caller: Caller) =>
  isServiceAdmin(caller) || caller.role === "whitelabel-admin" || caller.role === "geo-admin";

/** Creates an empty strategy: a model account holding its starting capital in cash. */
export async function addStrategy(ctx: RequestContext, input: NewStrategy): Promise<{ readonly strategyId: number }> {
  const errors: ErrorEntry[] = [];
  const name = checkStrategyName(input.name, "StrategyName");
  if (!name.ok) errors.push(name.error);
  const capital = input.startingCapital === undefined ? null : checkStartingCapital(input.startingCapital);
  if (capital === null)
    errors.push({ name: "MissingValue", field: "StartingCapital", message: "StartingCapital is required" });
  else if (!capital.ok) errors.push(capital.error);
  if (errors.length > 0 || !name.ok || !capital?.ok) throw new Refusal(errors);
  const { caller } = ctx;
  if (input.initialSiteVisibility !== undefined && !isAdministrator(caller)) {
    throw refuse("Forbidden", {
      field: "InitialSiteVisibility",
      message: "Only administrators may set the initial visibility",
    });
  }
  return withTransaction(ctx, async ({ tx }) => {
    const ownerId = input.ownerPersonId ?? caller.personId;
    const owner = await personsWithSites(tx).where("p.id", "=", ownerId).executeTakeFirst();
    if (!owner) throw refuse("NotFound", { field: "StrategyOwnerPersonId", message: `No person ${ownerId}` });
    if (owner.id !== caller.personId && !administers(caller, memberOf(owner))) {
      throw refuse("Forbidden", {
        field: "StrategyOwnerPersonId",
        message: "Only an administrator of that person may make strategies for them",
      });
    }
    const strategyId = await insertStrategy(tx, {
      name: name.value,
      owner,
      startingCapital: capital.value,
      isPublic: input.initialSiteVisibility === true,
      nowMs: ctx.clock.nowMs(),
    });
    return { strategyId };
  });
}

export interface StrategyChanges {
  readonly strategyId: number;
  readonly name?: string | undefined;
  readonly shortDescription?: string | undefined;
  readonly longDescription?: string | undefined;
}

/**
 * Renames a strategy at once and puts description changes up for compliance
 * review: they are published only when approved. Only the owner (or a service
 * admin) may change a strategy, and only these fields.
 */
export async function updateStrategy(
  ctx: RequestContext,
  changes: StrategyChanges,
): Promise<{ readonly strategyId: number }> {
  const errors: ErrorEntry[] = [];
  const name = changes.name === undefined ? undefined : checkStrategyName(changes.name);
  if (name && !name.ok) errors.push(name.error);
  for (const [field, value, max] of [
    ["ShortDescription", changes.shortDescription, STRATEGY_LIMITS.shortDescription],
    ["LongDescription", changes.longDescription, STRATEGY_LIMITS.longDescription],
  ] as const) {
    if (value !== undefined && value.length > max) {
      errors.push({ name: "InvalidValue", field, message: `${field} must be at most ${max} characters` });
    }
  }
  if (errors.length > 0) throw new Refusal(errors);
  return withTransaction(ctx, async (inTx) => {
    const { tx } = inTx;
    const strategy = await tx
      .selectFrom("strategies")
      .select(STRATEGY_COLUMNS)
      .where("id", "=", changes.strategyId)
      .executeTakeFirst();
    if (!strategy || !(await maySeeStrategy(inTx, strategy))) throw noStrategy(changes.strategyId);
    if (strategy.owner_person_id !== ctx.caller.personId && !isServiceAdmin(ctx.caller)) {
      throw refuse("Forbidden", { field: "StrategyId", message: "Only the strategy's owner may change it" });
    }
    const describing = changes.shortDescription !== undefined || changes.longDescription !== undefined;
    const update = {
      ...(name?.ok ? { name: name.value, name_folded: fold(name.value) } : {}),
      ...(changes.shortDescription !== undefined ? { pending_short_description: changes.shortDescription.trim() } : {}),
      ...(changes.longDescription !== undefined ? { pending_long_description: changes.longDescription.trim() } : {}),
      ...(describing ? { review_status: "pending" as DescriptionReview, review_note: null } : {}),
    };
    if (Object.keys(update).length > 0) {
      await tx
        .updateTable("strategies")
        .set({ ...update, updated_at: ctx.clock.nowMs() })
        .where("id", "=", strategy.id)
        .execute();
      if (update.name !== undefined) await touchModelAccount(tx, strategy.id);
    }
    return { strategyId: strategy.id };
  });
}

/** A service admin's verdict on the description changes waiting for review. */
export async function reviewStrategyDescriptions(
  ctx: RequestContext,
  strategyId: number,
  approve: boolean,
  note: string | undefined,
): Promise<{ readonly strategyId: number; readonly status: DescriptionReview }> {
  return withTransaction(ctx, async ({ tx }) => {
    const strategy = await tx.selectFrom("strategies").selectAll().where("id", "=", strategyId).executeTakeFirst();
    if (!strategy) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${strategyId}` });
    if (strategy.review_status !== "pending") {
      throw refuse("WrongState", { field: "StrategyId", message: "No description change waits for review" });
    }
    const publish = (pending: string | null, current: string | null) =>
      pending === null ? current : pending === "" ? null : pending;
    const status: DescriptionReview = approve ? "approved" : "rejected";
    await tx
      .updateTable("strategies")
      .set({
        ...(approve
          ? {
              short_description: publish(strategy.pending_short_description, strategy.short_description),
              long_description: publish(strategy.pending_long_description, strategy.long_description),
            }
          : {}),
        pending_short_description: null,
        pending_long_description: null,
        review_status: status,
        review_note: note ?? null,
        updated_at: ctx.clock.nowMs(),
      })
      .where("id", "=", strategyId)
      .execute();
    return { strategyId, status };
  });
}
