import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { dollarsOf } from "../../../core/money.js";
import { instrumentationExport, MAX_EXPORT_DAYS } from "../../../services/instrumentation.js";
import type { SubscriptionRow } from "../../../services/subscription-rows.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { InstrumentationExportRecord } from "../records.js";
import { DateTime, Id } from "../schemas.js";

export const instrumentationOperations = [
  defineOperation({
    id: "GetWlInstrumentationExport",
    method: "GET",
    path: "/General/GetWlInstrumentationExport",
    servers: ["WL"],
    summary: `The site's key sessions (sign-in handshakes), subscriptions, autotrade account stability and executions in [StartDate, EndDate), at most ${MAX_EXPORT_DAYS} days. White-label admins (service admins name the site).`,
    input: Type.Object({
      StartDate: DateTime(),
      EndDate: DateTime(),
      WhiteLabelSiteId: Type.Optional(Id({ description: "Service admin keys only" })),
    }),
    result: InstrumentationExportRecord,
    permission: onlyRoles("admin", "whitelabel-admin"),
    paginated: false,
    example: {
      StartDate: "2026-03-01T00:00:00Z",
      EndDate: "2026-03-11T00:00:00Z",
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
    },
    handler: async (ctx, input) => {
      const report = await instrumentationExport(
        ctx,
        input.WhiteLabelSiteId,
        new Date(input.StartDate),
        new Date(input.EndDate),
      );
      return [
        {
          WhiteLabelSiteId: report.whiteLabelSiteId,
          StartDate: report.startDate,
          EndDate: report.endDate,
          SessionEvents: report.sessionEvents.map((event) => ({
            EventType: "KeySession",
            PersonId: event.personId,
            AccessKeyId: event.accessKeyId,
            Server: event.server,
            IPAddress: event.ipAddress,
            EventDate: event.eventDate,
          })),
          Subscriptions: report.subscriptions.map(subscriptionEvent),
          AutotradeAccountStability: report.autotradeAccountStability.map((event) => ({
            EventId: event.id,
            EventType: event.kind,
            PersonId: event.person_id,
            Account: event.account_number,
            BrokerId: event.broker_id,
            Reason: event.reason,
            EventDate: new Date(event.at),
          })),
          Executions: report.executions.map((fill) => ({
            ExecutionId: fill.id,
            PersonId: fill.person_id,
            Account: fill.account_number,
            BrokerId: fill.broker_id,
            StrategyId: fill.strategy_id,
            SignalId: fill.source_order_id,
            OrderPurpose: fill.purpose,
            Symbol: fill.symbol,
            SymbolType: fill.symbol_type,
            Side: fill.side,
            Quantity: Number(fill.quantity),
            Price: Number(fill.price),
            BrokerExecutionId: fill.broker_fill_id,
            ExecutionDate: new Date(fill.filled_at),
          })),
        },
      ];
    },
  }),
];

const dateOf = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));
const dollarsOrNull = (cents: number | null): number | null => (cents === null ? null : dollarsOf(cents));

/** A subscription as the instrumentation export shows it: its kind, lane, price and billing state. */
export function subscriptionEvent(row: SubscriptionRow) {
  return {
    SubscriptionId: row.id,
    PersonId: row.person_id,
    StrategyId: row.strategy_id,
    Kind: row.kind,
    Lane: row.lane,
    WhiteLabelSiteId: row.site_id,
    Price: dollarsOf(row.price_cents),
    BasePrice: dollarsOf(row.base_price_cents),
    Markup: dollarsOf(row.markup_cents),
    BillingInterval: row.billing_interval,
    BillingIntervalCount: row.billing_interval_count,
    StartDate: new Date(row.started_at),
    EndDate: dateOf(row.ended_at),
    EndReason: row.end_reason,
    PaidUntil: dateOf(row.paid_until),
    NextChargeDate: dateOf(row.next_charge_at),
    NextBillingPrice: dollarsOrNull(row.next_charge_cents),
    IsCancelPending: row.cancel_pending === 1,
    BillingFailureCount: row.failure_count,
    LastBillingFailureReason: row.last_failure_reason,
    LastBillingFailureAt: dateOf(row.last_failure_at),
    LastTransactionDate: dateOf(row.last_charge_at),
    LastTransactionAmount: dollarsOrNull(row.last_charge_cents),
  };
}
