import { compare, formatDecimal, parseDecimal } from "../core/decimal.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import type { PlatformId } from "../core/ids.js";
import { fold } from "../core/search.js";
import { checkStartingCapital, checkStrategyName, STRATEGY_LIMITS } from "../core/strategy.js";
import { insertStrategy, touchModelAccount } from "../store/strategy-rows.js";
import { withTransaction } from "../store/transaction.js";
import { reachOf } from "./legacy-access.js";
import { dbOf, type RequestContext, type Runtime } from "./runtime.js";

/**
 * Strategies as the legacy API manages them ("systems"): created for an owner
 * and changed attribute by attribute. The same rules as v4 apply where both
 * speak (names, starting capital, descriptions waiting for compliance review);
 * the legacy limits apply to what only it sets. A key lists the systems it
 * reaches (./legacy-access.ts).
 */
export const LEGACY_LIMITS = {
  longDescription: 8000,
  shortDescription: 255,
  creditSystemSeconds: 86_400 * 365 * 20,
  freeSignalCredits: 9_999_999_999,
  trialDays: 365,
} as const;

export interface NewSystem {
  readonly ownerPersonId: number;
  readonly name: string;
  readonly startingCapital: string;
  readonly longDescription?: string | undefined;
  readonly isPublic: boolean;
  readonly creditSystemSeconds?: number | undefined;
}

const invalid = (field: string, message: string): ErrorEntry => ({ name: "InvalidValue", field, message });

function wholeIn(value: number, low: number, high: number, field: string, errors: ErrorEntry[]): void {
  if (!Number.isInteger(value) || value < low || value > high)
    errors.push(invalid(field, `${field} must be a whole number from ${low} to ${high}`));
}

/** The starting capital's refusal, naming the legacy field in its message as well as in its field. */
const legacyCapital = (error: ErrorEntry, field: string): ErrorEntry => {
  const { min, max } = STRATEGY_LIMITS.startingCapital;
  return { ...error, field, message: `${field} must be ${formatDecimal(min)} to ${formatDecimal(max)}` };
};

export async function createSystem(runtime: Runtime, input: NewSystem): Promise<number> {
  const errors: ErrorEntry[] = [];
  const name = checkStrategyName(input.name, "name");
  if (!name.ok) errors.push(name.error);
  const capital = checkStartingCapital(input.startingCapital);
  // Named as the legacy client sent it (the shared rule's message names v4's StartingCapital).
  if (!capital.ok) errors.push(legacyCapital(capital.error, "startingcapital"));
  if (input.longDescription !== undefined && input.longDescription.length > LEGACY_LIMITS.longDescription) {
    errors.push(
      invalid("longDescription", `longDescription must be at most ${LEGACY_LIMITS.longDescription} characters`),
    );
  }
  if (input.creditSystemSeconds !== undefined) {
    wholeIn(input.creditSystemSeconds, 0, LEGACY_LIMITS.creditSystemSeconds, "creditSystemTimeInSeconds", errors);
  }
  if (errors.length > 0 || !name.ok || !capital.ok) throw new Refusal(errors);
  return withTransaction(runtime, async ({ tx }) => {
    const owner = await tx
      .selectFrom("persons")
      .select(["id", "white_label_site_id"])
      .where("id", "=", input.ownerPersonId)
      .executeTakeFirst();
    if (!owner) throw refuse("NotFound", { field: "ownerpersonid", message: `No person ${input.ownerPersonId}` });
    const now = runtime.clock.nowMs();
    const description = input.longDescription?.trim();
    return insertStrategy(
      tx,
      { name: name.value, owner, startingCapital: capital.value, isPublic: input.isPublic, nowMs: now },
      {
        ...(description ? { pending_long_description: description, review_status: "pending" as const } : {}),
        credit_system_until: input.creditSystemSeconds === undefined ? null : now + input.creditSystemSeconds * 1000,
      },
    );
  });
}

export interface SystemChanges {
  readonly name?: string | undefined;
  readonly longDescription?: string | undefined;
  readonly shortDescription?: string | undefined;
  readonly ownerPersonId?: number | undefined;
  readonly startingCapital?: string | undefined;
  readonly monthlyFee?: number | undefined;
  readonly trialDays?: number | undefined;
  readonly creditSystemSeconds?: number | undefined;
  readonly freeSignalCredits?: number | undefined;
  readonly isTest?: boolean | undefined;
  readonly isAlive?: boolean | undefined;
  readonly minimumPortfolio?: string | undefined;
}

/**
 * changeSystemAttribute: applies every change given, or none when one is
 * refused, and answers what changed ("name updated"...). Descriptions wait
 * for compliance review as in v4; the starting capital may change only before
 * the strategy's first fill (its record is measured from it). The caller has
 * found that the key reaches the system and any new owner, as for createSystem.
 */
export async function changeSystem(runtime: Runtime, strategyId: number, changes: SystemChanges): Promise<string[]> {
  const errors: ErrorEntry[] = [];
  const name = changes.name === undefined ? undefined : checkStrategyName(changes.name, "name");
  if (name && !name.ok) errors.push(name.error);
  const capital = changes.startingCapital === undefined ? undefined : checkStartingCapital(changes.startingCapital);
  if (capital && !capital.ok) errors.push(legacyCapital(capital.error, "equitycurve_startingcapital"));
  const minimum = changes.minimumPortfolio === undefined ? undefined : parseDecimal(changes.minimumPortfolio);
  const { min, max } = STRATEGY_LIMITS.startingCapital;
  if (
    changes.minimumPortfolio !== undefined &&
    (minimum === null || minimum === undefined || compare(minimum, min) < 0 || compare(minimum, max) > 0)
  ) {
    errors.push(invalid("minimum_portfolio_size_required", "minimum_portfolio_size_required must be 1000 to 10000000"));
  }
  for (const [field, value, limit] of [
    ["longDescription", changes.longDescription, LEGACY_LIMITS.longDescription],
    ["shortDescription", changes.shortDescription, LEGACY_LIMITS.shortDescription],
  ] as const) {
    if (value !== undefined && value.length > limit)
      errors.push(invalid(field, `${field} must be at most ${limit} characters`));
  }
  if (changes.monthlyFee !== undefined) wholeIn(changes.monthlyFee, 0, 1_000_000, "monthlyfee", errors);
  if (changes.trialDays !== undefined) wholeIn(changes.trialDays, 0, LEGACY_LIMITS.trialDays, "trialdays", errors);
  if (changes.creditSystemSeconds !== undefined) {
    wholeIn(changes.creditSystemSeconds, 0, LEGACY_LIMITS.creditSystemSeconds, "creditSystemTimeInSeconds", errors);
  }
  if (changes.freeSignalCredits !== undefined) {
    wholeIn(changes.freeSignalCredits, 0, LEGACY_LIMITS.freeSignalCredits, "freeSignalEntryCredits", errors);
  }
  if (errors.length > 0) throw new Refusal(errors);
  return withTransaction(runtime, async ({ tx }) => {
    const strategy = await tx.selectFrom("strategies").selectAll().where("id", "=", strategyId).executeTakeFirst();
    if (!strategy) throw refuse("NotFound", { field: "systemid", message: `No system ${strategyId}` });
    const now = runtime.clock.nowMs();
    const done: string[] = [];
    const set: Record<string, unknown> = {};
    if (name?.ok) {
      Object.assign(set, { name: name.value, name_folded: fold(name.value) });
      done.push("name updated");
    }
    if (changes.longDescription !== undefined || changes.shortDescription !== undefined) {
      if (changes.longDescription !== undefined) set.pending_long_description = changes.longDescription.trim();
      if (changes.shortDescription !== undefined) set.pending_short_description = changes.shortDescription.trim();
      Object.assign(set, { review_status: "pending", review_note: null });
      if (changes.longDescription !== undefined) done.push("longDescription submitted for review");
      if (changes.shortDescription !== undefined) done.push("shortDescription submitted for review");
    }
    if (changes.ownerPersonId !== undefined && changes.ownerPersonId !== strategy.owner_person_id) {
      const owner = await tx
        .selectFrom("persons")
        .select(["id", "white_label_site_id"])
        .where("id", "=", changes.ownerPersonId)
        .executeTakeFirst();
      if (!owner) throw refuse("NotFound", { field: "ownerpersonid", message: `No person ${changes.ownerPersonId}` });
      Object.assign(set, { owner_person_id: owner.id, white_label_site_id: owner.white_label_site_id });
      done.push("ownerpersonid updated");
    }
    if (capital?.ok && formatDecimal(capital.value) !== strategy.starting_capital) {
      const fill = await tx
        .selectFrom("fills")
        .select("id")
        .where("strategy_id", "=", strategyId)
        .limit(1)
        .executeTakeFirst();
      if (fill) {
        throw refuse("WrongState", {
          field: "equitycurve_startingcapital",
          message: "The starting capital cannot change once the system has traded: its record is measured from it",
        });
      }
      const amount = formatDecimal(capital.value);
      Object.assign(set, { starting_capital: amount });
      await tx
        .updateTable("accounts")
        .set({ cash: amount, starting_cash: amount })
        .where("strategy_id", "=", strategyId)
        .execute();
      done.push("equitycurve_startingcapital updated");
    }
    if (changes.monthlyFee !== undefined) {
      set.monthly_cost = String(changes.monthlyFee);
      done.push("monthlyfee updated");
    }
    if (changes.trialDays !== undefined) {
      set.trial_days = changes.trialDays;
      done.push("trialdays updated");
    }
    if (changes.creditSystemSeconds !== undefined) {
      set.credit_system_until = now + changes.creditSystemSeconds * 1000;
      done.push("creditSystemTimeInSeconds updated");
    }
    if (changes.freeSignalCredits !== undefined) {
      set.free_signal_credits = changes.freeSignalCredits;
      done.push("freeSignalEntryCredits updated");
    }
    if (changes.isTest !== undefined) {
      set.is_test = changes.isTest ? 1 : 0;
      done.push("test_system updated");
    }
    if (changes.isAlive !== undefined && (strategy.is_alive === 1) !== changes.isAlive) {
      Object.assign(set, { is_alive: changes.isAlive ? 1 : 0, inactive_since: changes.isAlive ? null : now });
      done.push("isAlive updated");
    }
    if (minimum !== undefined && minimum !== null) {
      set.minimum_portfolio = formatDecimal(minimum);
      done.push("minimum_portfolio_size_required updated");
    }
    if (Object.keys(set).length > 0) {
      await tx
        .updateTable("strategies")
        .set({ ...set, updated_at: now })
        .where("id", "=", strategyId)
        .execute();
      await touchModelAccount(tx, strategyId);
    }
    return done;
  });
}

/**
 * The systems the key reaches (acting through the platform, when one is
 * given), and with `subscribed` those its person's subscriptions give
 * real-time access to (listAllSystems), oldest first.
 */
export async function reachedSystems(
  ctx: RequestContext,
  platformId: PlatformId | null,
  { subscribed }: { readonly subscribed: boolean },
) {
  const reach = await reachOf(ctx, platformId);
  let query = dbOf(ctx)
    .selectFrom("strategies as st")
    .innerJoin("persons as p", "p.id", "st.owner_person_id")
    .select([
      "st.id",
      "st.name",
      "st.owner_person_id",
      "st.long_description",
      "st.short_description",
      "st.created_at",
      "st.monthly_cost",
      "st.starting_capital",
      "st.minimum_portfolio",
      "st.trial_days",
      "st.is_alive",
      "st.inactive_since",
      "st.trades_stocks",
      "st.trades_options",
      "st.trades_futures",
      "st.trades_forex",
      "p.alias as owner_alias",
    ]);
  if (!reach.everyone) {
    const { personId, siteId } = reach;
    const now = ctx.clock.nowMs();
    query = query.where((eb) =>
      eb.or([
        eb("st.owner_person_id", "=", personId),
        ...(siteId === null ? [] : [eb("p.white_label_site_id", "=", siteId)]),
        // Systems the person's subscription gives real-time access to (givesAccess: real, live, paid up).
        ...(subscribed
          ? [
              eb(
                "st.id",
                "in",
                eb
                  .selectFrom("subscriptions as sub")
                  .select("sub.strategy_id")
                  .where("sub.person_id", "=", personId)
                  .where("sub.kind", "=", "real")
                  .where((w) => w.or([w("sub.ended_at", "is", null), w("sub.ended_at", ">", now)]))
                  .where((w) => w.or([w("sub.paid_until", "is", null), w("sub.paid_until", ">", now)])),
              ),
            ]
          : []),
      ]),
    );
  }
  return query.orderBy("st.id").execute();
}

/** How long a stopped system stays on the recently_active roster. */
const RECENTLY_INACTIVE_MS = 30 * 86_400_000;

/** getSystemRoster: the live systems the key reaches; recently_active adds those stopped within the last 30 days. */
export async function systemRoster(
  ctx: RequestContext,
  platformId: PlatformId | null,
  filter: "active" | "recently_active",
) {
  const now = ctx.clock.nowMs();
  return (await reachedSystems(ctx, platformId, { subscribed: false })).filter(
    (s) =>
      s.is_alive === 1 ||
      (filter === "recently_active" && s.inactive_since !== null && now - s.inactive_since <= RECENTLY_INACTIVE_MS),
  );
}

/** The kinds of instrument (symbol types) each of the systems has sold to open. */
export async function shortedKinds(
  runtime: Runtime,
  strategyIds: readonly number[],
): Promise<ReadonlyMap<number, ReadonlySet<string>>> {
  const shorted = new Map<number, Set<string>>();
  if (strategyIds.length === 0) return shorted;
  const rows = await dbOf(runtime)
    .selectFrom("orders")
    .select(["strategy_id", "symbol_type"])
    .where("strategy_id", "in", [...strategyIds])
    .where("side", "=", "sell")
    .where("open_close", "=", "open")
    .groupBy(["strategy_id", "symbol_type"])
    .execute();
  for (const row of rows)
    shorted.set(row.strategy_id, (shorted.get(row.strategy_id) ?? new Set()).add(row.symbol_type));
  return shorted;
}
