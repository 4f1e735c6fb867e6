import { type Decimal, storedDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { type Judgement, judgeCopyFill, RULE575_DEFAULTS, type Rule575Terms } from "../core/rule575.js";
import { type Page, type PageRequest, pageOfList } from "../store/page.js";
import type { Tx } from "../store/transaction.js";
import { type CopyFillRow, copyFillsOf, strategyFillsOf } from "./rule575-fills.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { commerceSite } from "./site-scope.js";

/**
 * GetRule575Status (docs/decisions.md "Rule 575 (issue 14)"): a white-label
 * site's customers' copy fills in a window, each judged against the
 * strategy's fills of the order it copies under the site's terms; the
 * exceptions, a page at a time, and summaries of every copy fill of the
 * window by strategy and by day (UTC). StrategyId only narrows what the
 * site's fills are (another strategy answers an empty report). Judged when asked: a strategy order
 * that fills further, or a tolerance changed, shows in the next report.
 */

/** The longest window one report covers. */
export const RULE575_MAX_DAYS = 93;

export interface JudgedFill extends Judgement {
  readonly fill: CopyFillRow;
  readonly strategyFilledQuantity: Decimal | null;
  readonly strategyFirstFillAt: number | null;
  readonly strategyLastFillAt: number | null;
}

export interface Rule575Summary {
  readonly copyFills: number;
  readonly exceptionFills: number;
  readonly slippageExceptions: number;
  readonly windowExceptions: number;
  /** The largest slippage of a copy fill with a strategy price to compare to (bps), and that fill. */
  readonly worstSlippageBps: Decimal | null;
  readonly worstSlippageFillId: number | null;
}

export interface Rule575Report {
  readonly siteId: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly strategyId: number | null;
  readonly terms: Rule575Terms;
  readonly isDefaultTolerance: boolean;
  readonly isDefaultWindow: boolean;
  readonly total: Rule575Summary;
  readonly byStrategy: readonly (Rule575Summary & { readonly strategyId: number; readonly strategyName: string })[];
  readonly byDay: readonly (Rule575Summary & { readonly day: string })[];
  /** The exceptions of this page. */
  readonly exceptions: readonly JudgedFill[];
}

export interface Rule575Query {
  readonly siteId: number | undefined;
  readonly startMs: number;
  readonly endMs: number;
  readonly strategyId: number | undefined;
}

/** The site's terms: its own where an operator set them, else the service's. */
export async function rule575TermsOf(
  db: Tx,
  siteId: number,
): Promise<{ readonly terms: Rule575Terms; readonly isDefaultTolerance: boolean; readonly isDefaultWindow: boolean }> {
  const site = await db
    .selectFrom("sites")
    .select(["rule575_tolerance_bps", "rule575_window_seconds"])
    .where("id", "=", siteId)
    .executeTakeFirstOrThrow();
  return {
    terms: {
      toleranceBps:
        site.rule575_tolerance_bps === null ? RULE575_DEFAULTS.toleranceBps : storedDecimal(site.rule575_tolerance_bps),
      windowSeconds: site.rule575_window_seconds ?? RULE575_DEFAULTS.windowSeconds,
    },
    isDefaultTolerance: site.rule575_tolerance_bps === null,
    isDefaultWindow: site.rule575_window_seconds === null,
  };
}

export async function rule575Report(
  ctx: RequestContext,
  query: Rule575Query,
  page: PageRequest,
): Promise<Page<Rule575Report>> {
  const db = dbOf(ctx);
  if (query.endMs <= query.startMs) {
    throw refuse("InvalidValue", { field: "EndDate", message: "EndDate must be after StartDate" });
  }
  if (query.endMs - query.startMs > RULE575_MAX_DAYS * 86_400_000) {
    throw refuse("InvalidValue", {
      field: "EndDate",
      message: `One report covers at most ${RULE575_MAX_DAYS} days`,
      meta: { Limit: RULE575_MAX_DAYS },
    });
  }
  const site = await commerceSite(ctx, db, query.siteId);
  const { terms, isDefaultTolerance, isDefaultWindow } = await rule575TermsOf(db, site.id);
  const fills = await copyFillsOf(db, site.id, { startMs: query.startMs, endMs: query.endMs }, query.strategyId);
  const strategyFills = await strategyFillsOf(
    db,
    fills.map((fill) => fill.source_order_id),
  );
  const judged: JudgedFill[] = fills.map((fill) => {
    const strategy = strategyFills.get(fill.source_order_id) ?? null;
    return {
      ...judgeCopyFill(
        { side: fill.side, price: storedDecimal(fill.price), filledAt: fill.filled_at },
        strategy,
        terms,
      ),
      fill,
      strategyFilledQuantity: strategy?.quantity ?? null,
      strategyFirstFillAt: strategy?.firstAt ?? null,
      strategyLastFillAt: strategy?.lastAt ?? null,
    };
  });
  const exceptions = pageOfList(
    judged.filter((j) => j.reasons.length > 0),
    (j) => [j.fill.filled_at, j.fill.id],
    page,
  );
  const report: Rule575Report = {
    siteId: site.id,
    startMs: query.startMs,
    endMs: query.endMs,
    strategyId: query.strategyId ?? null,
    terms,
    isDefaultTolerance,
    isDefaultWindow,
    total: summarize(judged),
    byStrategy: [...groupBy(judged, (j) => j.fill.strategy_id)]
      .sort(([a], [b]) => a - b)
      .map(([strategyId, group]) => ({
        strategyId,
        strategyName: group[0]?.fill.strategy_name ?? "",
        ...summarize(group),
      })),
    byDay: [...groupBy(judged, (j) => new Date(j.fill.filled_at).toISOString().slice(0, 10))]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([day, group]) => ({ day, ...summarize(group) })),
    exceptions: exceptions.items,
  };
  return { items: [report], nextKey: exceptions.nextKey, prevKey: exceptions.prevKey };
}

function groupBy<K, T>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

function summarize(judged: readonly JudgedFill[]): Rule575Summary {
  let worst: JudgedFill | null = null;
  for (const j of judged) {
    if (j.slippageBps === null) continue;
    if (worst === null || (worst.slippageBps !== null && j.slippageBps > worst.slippageBps)) worst = j;
  }
  return {
    copyFills: judged.length,
    exceptionFills: judged.filter((j) => j.reasons.length > 0).length,
    slippageExceptions: judged.filter((j) => j.reasons.includes("Slippage")).length,
    windowExceptions: judged.filter((j) => j.reasons.includes("OutsideWindow")).length,
    worstSlippageBps: worst?.slippageBps ?? null,
    worstSlippageFillId: worst?.fill.id ?? null,
  };
}
