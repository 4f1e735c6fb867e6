import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { MAX_INTERVAL_COUNT, POLL_INTERVAL_MS } from "../../../core/checkout.js";
import { refuse } from "../../../core/errors.js";
import { dollarsOf } from "../../../core/money.js";
import { type CheckoutView, checkoutPath, checkoutStatus, createCheckout } from "../../../services/checkout.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { SubscriptionCheckoutRecord } from "../records.js";
import { Id } from "../schemas.js";

/** The GEN subscription checkout (API.md 4.4): the caller buys a subscription for themself. */
export const checkoutOperations = [
  defineOperation({
    id: "CreateSubscriptionCheckout",
    method: "POST",
    path: "/General/CreateSubscriptionCheckout",
    servers: ["GEN"],
    summary: `Starts the caller's checkout of a paid strategy's subscription; nothing is charged until the caller opens ApprovalUrl, consents and pays. BillingIntervalCount is 1 to ${MAX_INTERVAL_COUNT.month} months or 1 to ${MAX_INTERVAL_COUNT.year} years. Asked again while a checkout with the same terms is pending, it answers that one; other terms supersede it.`,
    input: Type.Object({
      StrategyId: Id(),
      BillingInterval: Type.Optional(
        Type.Union([Type.Literal("month"), Type.Literal("year")], {
          description: "month (default), or year for strategies offering annual billing",
        }),
      ),
      BillingIntervalCount: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "Intervals per charge (default 1), int32" }),
      ),
    }),
    result: SubscriptionCheckoutRecord,
    permission: anyCaller,
    paginated: false,
    example: { StrategyId: EXAMPLE.strategyId, BillingInterval: "month", BillingIntervalCount: 1 },
    handler: async (ctx, input) => [
      checkoutRecord(
        await createCheckout(ctx, {
          strategyId: input.StrategyId,
          interval: input.BillingInterval ?? "month",
          count: input.BillingIntervalCount ?? 1,
        }),
      ),
    ],
  }),
  defineOperation({
    id: "GetSubscriptionCheckoutStatus",
    method: "GET",
    path: "/General/GetSubscriptionCheckoutStatus",
    servers: ["GEN"],
    summary: `A checkout's status, for its customer (and service admins). Poll no more than once every ${POLL_INTERVAL_MS / 1000} seconds per checkout: a faster poll is answered 429 with Retry-After.`,
    input: Type.Object({ IntentId: Id() }),
    result: SubscriptionCheckoutRecord,
    permission: anyCaller,
    paginated: false,
    example: { IntentId: 1 },
    handler: async (ctx, input) => {
      const waitMs = ctx.checkoutPolls.admit(`${input.IntentId}:${ctx.caller.personId}`);
      if (waitMs !== null) {
        const seconds = Math.max(1, Math.ceil(waitMs / 1000));
        throw refuse("RateLimited", {
          field: "IntentId",
          message: `Poll a checkout no more than once every ${POLL_INTERVAL_MS / 1000} seconds`,
          meta: { RetryAfterSeconds: seconds },
        });
      }
      return [checkoutRecord(await checkoutStatus(ctx, input.IntentId))];
    },
  }),
];

function checkoutRecord({ row, token }: CheckoutView) {
  const url = token === null ? null : checkoutPath(token);
  return {
    IntentId: row.id,
    Status: row.status,
    StatusDetail: row.status_detail,
    ApprovalUrl: url,
    WebCheckoutUrl: url,
    Price: dollarsOf(row.price_cents),
    Currency: "USD",
    BillingInterval: row.billing_interval,
    BillingIntervalCount: row.billing_interval_count,
    StrategyId: row.strategy_id,
    SubscriptionId: row.status === "Active" ? row.subscription_id : null,
    TrialDays: 0,
  };
}
