import { type Decimal, isZero, storedDecimal, sub, ZERO } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { scaled } from "../core/mux.js";
import type { MuxAction, MuxOutcome } from "../store/schema.js";
import type { Tx } from "../store/transaction.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { commerceSite } from "./site-scope.js";
import { MUX_CONSUMER } from "./strategy-mux.js";
import type { TradingRuntime } from "./trading.js";

/**
 * GetStrategyMuxStatus (docs/decisions.md "StrategyMux (issue 14)"): for
 * each family of a white-label site (a parent of the site and its
 * variants), how far the mirror has read the parent's events, and for each
 * variant its positions beside the parent's scaled, the orders mirrored and
 * the exceptions (parent orders that failed to mirror or were skipped, with
 * their reasons).
 */
const RECENT_EXCEPTIONS = 20;

export interface PositionSync {
  readonly symbol: string;
  readonly symbolType: string;
  readonly parentQuantity: Decimal;
  readonly expectedQuantity: Decimal;
  readonly childQuantity: Decimal;
  readonly inSync: boolean;
}

export interface MuxException {
  readonly parentOrderId: number;
  readonly childOrderId: number | null;
  readonly action: MuxAction;
  readonly status: MuxOutcome;
  readonly reason: string | null;
  readonly message: string | null;
  readonly at: number;
}

export interface VariantStatus {
  readonly childStrategyId: number;
  readonly childStrategyName: string;
  readonly scalingPercentage: Decimal;
  readonly linkedAt: number;
  readonly positions: readonly PositionSync[];
  readonly inSync: boolean;
  readonly ordersMirrored: number;
  readonly exceptionCount: number;
  readonly exceptionsByReason: readonly { readonly reason: string; readonly count: number }[];
  readonly lastMirroredAt: number | null;
  readonly recentExceptions: readonly MuxException[];
}

export interface FamilyStatus {
  readonly parentStrategyId: number;
  readonly parentStrategyName: string;
  readonly siteId: number;
  /** The parent's events the mirror has not read yet. */
  readonly pendingEvents: number;
  readonly variants: readonly VariantStatus[];
}

/** The parents of the site's families (a strategy's site: its own white-label site, else its owner's). */
async function parentsOf(db: Tx, siteId: number, strategyId: number | undefined) {
  let query = db
    .selectFrom("strategies as st")
    .innerJoin("persons as o", "o.id", "st.owner_person_id")
    .innerJoin("accounts as a", (join) => join.onRef("a.strategy_id", "=", "st.id").on("a.kind", "=", "model"))
    .leftJoin("outbox_positions as p", (join) =>
      join.onRef("p.account_id", "=", "a.id").on("p.consumer", "=", MUX_CONSUMER),
    )
    .select(["st.id", "st.name", "a.event_seq", "p.seq as read_seq"])
    .where((eb) => eb(eb.fn.coalesce("st.white_label_site_id", "o.white_label_site_id"), "=", siteId));
  if (strategyId !== undefined) query = query.where("st.id", "=", strategyId);
  else query = query.where("st.id", "in", db.selectFrom("strategy_mux").select("parent_strategy_id"));
  return query.orderBy("st.id").execute();
}

export async function muxStatus(
  ctx: RequestContext & TradingRuntime,
  query: { readonly siteId: number | undefined; readonly strategyId: number | undefined },
): Promise<FamilyStatus[]> {
  const db = dbOf(ctx);
  const site = await commerceSite(ctx, db, query.siteId);
  const parents = await parentsOf(db, site.id, query.strategyId);
  if (query.strategyId !== undefined && parents.length === 0) {
    throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${query.strategyId} on site ${site.id}` });
  }
  const families: FamilyStatus[] = [];
  for (const parent of parents) {
    const variants = await db
      .selectFrom("strategy_mux as m")
      .innerJoin("strategies as s", "s.id", "m.child_strategy_id")
      .select(["m.child_strategy_id", "s.name", "m.scaling_percentage", "m.linked_at"])
      .where("m.parent_strategy_id", "=", parent.id)
      .orderBy("m.child_strategy_id")
      .execute();
    if (variants.length === 0) {
      if (query.strategyId === undefined) continue;
      throw refuse("NotFound", { field: "StrategyId", message: `Strategy ${parent.id} has no variants` });
    }
    const accounts = await ctx.frame.committedAccounts([parent.id, ...variants.map((v) => v.child_strategy_id)]);
    const held = (strategyId: number) => {
      const positions = new Map<string, { quantity: Decimal; symbolType: string }>();
      for (const [symbol, row] of accounts.get(strategyId)?.positions ?? []) {
        positions.set(symbol, { quantity: storedDecimal(row.quantity), symbolType: row.symbol_type });
      }
      return positions;
    };
    const parentHeld = held(parent.id);
    const outcomes = await outcomesOf(
      db,
      variants.map((v) => v.child_strategy_id),
    );
    families.push({
      parentStrategyId: parent.id,
      parentStrategyName: parent.name,
      siteId: site.id,
      pendingEvents: Math.max(0, parent.event_seq - (parent.read_seq ?? parent.event_seq)),
      variants: await Promise.all(
        variants.map(async (variant) => {
          const scaling = storedDecimal(variant.scaling_percentage);
          const positions = positionSync(parentHeld, held(variant.child_strategy_id), scaling);
          const counts = outcomes.get(variant.child_strategy_id) ?? [];
          const exceptions = counts.filter((c) => c.status !== "mirrored");
          return {
            childStrategyId: variant.child_strategy_id,
            childStrategyName: variant.name,
            scalingPercentage: scaling,
            linkedAt: variant.linked_at,
            positions,
            inSync: positions.every((p) => p.inSync),
            ordersMirrored: counts.filter((c) => c.status === "mirrored").reduce((n, c) => n + c.count, 0),
            exceptionCount: exceptions.reduce((n, c) => n + c.count, 0),
            exceptionsByReason: [...sumByReason(exceptions)].map(([reason, count]) => ({ reason, count })),
            lastMirroredAt: counts.reduce<number | null>(
              (last, c) => (c.status === "mirrored" && (last === null || c.lastAt > last) ? c.lastAt : last),
              null,
            ),
            recentExceptions: await recentExceptions(db, variant.child_strategy_id),
          };
        }),
      ),
    });
  }
  return families;
}

/** Every symbol either holds: the child beside the parent's scaled position. */
function positionSync(
  parent: ReadonlyMap<string, { quantity: Decimal; symbolType: string }>,
  child: ReadonlyMap<string, { quantity: Decimal; symbolType: string }>,
  scaling: Decimal,
): PositionSync[] {
  const symbols = [...new Set([...parent.keys(), ...child.keys()])].sort();
  return symbols.map((symbol) => {
    const parentQuantity = parent.get(symbol)?.quantity ?? ZERO;
    const childQuantity = child.get(symbol)?.quantity ?? ZERO;
    const expectedQuantity = scaled(parentQuantity, scaling);
    return {
      symbol,
      symbolType: parent.get(symbol)?.symbolType ?? child.get(symbol)?.symbolType ?? "stock",
      parentQuantity,
      expectedQuantity,
      childQuantity,
      inSync: isZero(sub(childQuantity, expectedQuantity)),
    };
  });
}

interface OutcomeCount {
  readonly status: MuxOutcome;
  readonly reason: string | null;
  readonly count: number;
  readonly lastAt: number;
}

async function outcomesOf(db: Tx, childIds: readonly number[]): Promise<Map<number, OutcomeCount[]>> {
  const rows = await db
    .selectFrom("mux_orders")
    .select((eb) => [
      "child_strategy_id",
      "status",
      "reason",
      eb.fn.countAll<string | number>().as("n"),
      eb.fn.max("at").as("last_at"),
    ])
    .where("child_strategy_id", "in", childIds)
    .groupBy(["child_strategy_id", "status", "reason"])
    .execute();
  const byChild = new Map<number, OutcomeCount[]>();
  for (const row of rows) {
    const list = byChild.get(row.child_strategy_id) ?? [];
    list.push({ status: row.status, reason: row.reason, count: Number(row.n), lastAt: Number(row.last_at) });
    byChild.set(row.child_strategy_id, list);
  }
  return byChild;
}

function sumByReason(counts: readonly OutcomeCount[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const c of [...counts].sort((a, b) => (a.reason ?? "").localeCompare(b.reason ?? ""))) {
    const reason = c.reason ?? "unknown";
    sums.set(reason, (sums.get(reason) ?? 0) + c.count);
  }
  return sums;
}

async function recentExceptions(db: Tx, childId: number): Promise<MuxException[]> {
  const rows = await db
    .selectFrom("mux_orders")
    .selectAll()
    .where("child_strategy_id", "=", childId)
    .where("status", "!=", "mirrored")
    .orderBy("id", "desc")
    .limit(RECENT_EXCEPTIONS)
    .execute();
  return rows.map((row) => ({
    parentOrderId: row.parent_order_id,
    childOrderId: row.child_order_id,
    action: row.action,
    status: row.status,
    reason: row.reason,
    message: row.message,
    at: row.at,
  }));
}
