import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { type Decimal, storedDecimal, toNumber } from "../../../core/decimal.js";
import { serviceSymbolOf } from "../../../core/symbols/instrument.js";
import { type JudgedFill, RULE575_MAX_DAYS, type Rule575Summary, rule575Report } from "../../../services/rule575.js";
import { instrumentOf } from "../../../store/trading-state.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { Rule575StatusRecord } from "../rule575-records.js";
import { DateTime, Id } from "../schemas.js";

/**
 * GetRule575Status (API.md 4.5; docs/decisions.md "Rule 575 (issue 14)"):
 * white-label admins read their site's, service admins name one.
 */

const numberOf = (value: Decimal | null) => (value === null ? null : toNumber(value));
const dateOf = (ms: number | null) => (ms === null ? null : new Date(ms));

const summaryOf = (summary: Rule575Summary) => ({
  CopyFills: summary.copyFills,
  ExceptionFills: summary.exceptionFills,
  SlippageExceptions: summary.slippageExceptions,
  WindowExceptions: summary.windowExceptions,
  WorstSlippageBps: numberOf(summary.worstSlippageBps),
  WorstSlippageFillId: summary.worstSlippageFillId,
});

const fillOf = (judged: JudgedFill) => {
  const { fill } = judged;
  return {
    Id: fill.id,
    AccountOrderId: fill.account_order_id,
    PersonId: fill.person_id,
    Account: fill.account_number,
    BrokerId: fill.broker_id,
    StrategyId: fill.strategy_id,
    StrategyName: fill.strategy_name,
    SignalId: fill.source_order_id,
    ServiceSymbol: serviceSymbolOf(instrumentOf(fill.symbol, fill.symbol_type)),
    Side: fill.side === "buy" ? "1" : "2",
    Quantity: toNumber(storedDecimal(fill.quantity)),
    Price: toNumber(storedDecimal(fill.price)),
    FilledDate: new Date(fill.filled_at),
    StrategyAvgFillPrice: numberOf(judged.strategyPrice),
    StrategyFilledQuantity: numberOf(judged.strategyFilledQuantity),
    StrategyFirstFillDate: dateOf(judged.strategyFirstFillAt),
    StrategyLastFillDate: dateOf(judged.strategyLastFillAt),
    WindowEndDate: dateOf(judged.windowEndsAt),
    Slippage: numberOf(judged.slippage),
    SlippageBps: numberOf(judged.slippageBps),
    Reasons: judged.reasons,
  };
};

export const rule575Operations = [
  defineOperation({
    id: "GetRule575Status",
    method: "GET",
    path: "/Strategies/GetRule575Status",
    servers: ["WL"],
    summary: `The site's Rule 575 exceptions in [StartDate, EndDate) (at most ${RULE575_MAX_DAYS} days): its customers' autotrade copy fills priced worse than the strategy's volume-weighted fill of the order by more than the site's tolerance, or filled outside the strategy's window; with summaries of every copy fill by strategy and by UTC day. Pagination walks the exception fills. White-label admins (service admins name the site).`,
    input: Type.Object({
      StartDate: DateTime(),
      EndDate: DateTime(),
      StrategyId: Type.Optional(Id({ description: "Only the copies of this strategy's orders" })),
      WhiteLabelSiteId: Type.Optional(Id({ description: "Service admin keys only: the site" })),
    }),
    result: Rule575StatusRecord,
    permission: onlyRoles("admin", "whitelabel-admin"),
    paginated: true,
    example: {
      StartDate: "2026-03-01T00:00:00Z",
      EndDate: "2026-03-11T00:00:00Z",
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
    },
    handler: async (ctx, input, page) => {
      const result = await rule575Report(
        ctx,
        {
          siteId: input.WhiteLabelSiteId,
          startMs: Date.parse(input.StartDate),
          endMs: Date.parse(input.EndDate),
          strategyId: input.StrategyId,
        },
        page,
      );
      return {
        ...result,
        items: result.items.map((report) => ({
          WhiteLabelSiteId: report.siteId,
          StartDate: new Date(report.startMs),
          EndDate: new Date(report.endMs),
          StrategyId: report.strategyId,
          ToleranceBps: toNumber(report.terms.toleranceBps),
          IsDefaultTolerance: report.isDefaultTolerance,
          WindowSeconds: report.terms.windowSeconds,
          IsDefaultWindow: report.isDefaultWindow,
          Total: summaryOf(report.total),
          Strategies: report.byStrategy.map((s) => ({
            StrategyId: s.strategyId,
            StrategyName: s.strategyName,
            ...summaryOf(s),
          })),
          Days: report.byDay.map((d) => ({ Date: d.day, ...summaryOf(d) })),
          ExceptionFills: report.exceptions.map(fillOf),
        })),
      };
    },
  }),
];
