import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import type { ClockSetting } from "../../../core/clock.js";
import { toNumber } from "../../../core/decimal.js";
import { applyClockSetting } from "../../../services/clock.js";
import { setHandQuote } from "../../../services/quotes.js";
import { SANDBOX_OUTCOMES, setSandboxOutcome } from "../../../services/sandbox-payments.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { ClockRecord, PaymentOutcomeRecord, QuoteRecord } from "../records.js";
import { DateTime, Nullable } from "../schemas.js";

/**
 * Sandbox operations: service admins drive the service's clock and market by
 * hand. Absent unless the sandbox is enabled.
 */
export const sandboxOperations = [
  defineOperation({
    id: "SetClock",
    method: "POST",
    path: "/Sandbox/SetClock",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Sets the service clock to Now; from then on it stands still until set or advanced again. Now null (or omitted) returns the clock to real time. Orders due to be released or expired by then are, the subscription charges due by then are made, the markets open then are synced (AutoSync), and the webhook deliveries due by then attempted, before the answer.",
    input: Type.Object({
      Now: Type.Optional(
        Nullable(DateTime({ description: "ISO 8601; UTC unless an offset is given. Null: real time again" })),
      ),
    }),
    result: ClockRecord,
    permission: onlyRoles("admin"),
    sandbox: true,
    paginated: false,
    example: { Now: "2026-03-10T15:30:00Z" },
    handler: async (ctx, input) => {
      const setting: ClockSetting =
        input.Now === undefined || input.Now === null
          ? { kind: "system" }
          : { kind: "fixed", atMs: Date.parse(input.Now) };
      const now = await applyClockSetting(ctx.storage, ctx.clock, setting);
      await ctx.fillLoop.catchUp();
      await ctx.biller.run();
      await ctx.approvals.run();
      await ctx.desk.run();
      await ctx.sync.run();
      await ctx.snapshots.run();
      await ctx.webhooks.run();
      return [{ Now: now }];
    },
  }),
  defineOperation({
    id: "AdvanceClock",
    method: "POST",
    path: "/Sandbox/AdvanceClock",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Moves the service clock forward by Seconds; it stands still afterwards. Orders due by then are released or expired, the subscription charges due by then made, the markets open then synced (AutoSync), and the webhook deliveries due by then attempted, before the answer.",
    input: Type.Object({ Seconds: Type.Number({ minimum: 0, maximum: 3.2e9 }) }),
    result: ClockRecord,
    permission: onlyRoles("admin"),
    sandbox: true,
    paginated: false,
    example: { Seconds: 3600 },
    handler: async (ctx, input) => {
      const now = await applyClockSetting(ctx.storage, ctx.clock, ctx.clock.advancedBy(input.Seconds));
      await ctx.fillLoop.catchUp();
      await ctx.biller.run();
      await ctx.approvals.run();
      await ctx.desk.run();
      await ctx.sync.run();
      await ctx.snapshots.run();
      await ctx.webhooks.run();
      return [{ Now: now }];
    },
  }),
  defineOperation({
    id: "SetQuote",
    method: "POST",
    path: "/Sandbox/SetQuote",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Sets a symbol's quote by hand and works the orders it fills before answering. From then on the simulated or replayed feed leaves that symbol alone, so scenarios stay deterministic.",
    input: Type.Object({
      Symbol: Type.String({
        minLength: 1,
        maxLength: 40,
        description: "ServiceSymbol FullSymbol, e.g. AAPL, @ESM26, EURUSD",
      }),
      Bid: Type.Number({ exclusiveMinimum: 0 }),
      Ask: Type.Number({ exclusiveMinimum: 0 }),
      Last: Type.Number({ exclusiveMinimum: 0 }),
      BidSize: Type.Optional(Type.Number({ minimum: 0, description: "Size at the bid; omitted: unlimited" })),
      AskSize: Type.Optional(Type.Number({ minimum: 0, description: "Size at the ask; omitted: unlimited" })),
    }),
    result: QuoteRecord,
    permission: onlyRoles("admin"),
    sandbox: true,
    paginated: false,
    example: { Symbol: EXAMPLE.symbol, Bid: 201.1, Ask: 201.15, Last: 201.12, BidSize: 300, AskSize: 200 },
    handler: async (ctx, input) => {
      const quote = setHandQuote(ctx.market, ctx.clock, {
        symbol: input.Symbol,
        bid: input.Bid,
        ask: input.Ask,
        last: input.Last,
        bidSize: input.BidSize,
        askSize: input.AskSize,
      });
      await ctx.fillLoop.quoteChanged(quote);
      await ctx.fillLoop.settleTrades();
      return [
        {
          Symbol: quote.symbol,
          Bid: toNumber(quote.bid),
          Ask: toNumber(quote.ask),
          Last: toNumber(quote.last),
          BidSize: quote.bidSize === null ? null : toNumber(quote.bidSize),
          AskSize: quote.askSize === null ? null : toNumber(quote.askSize),
          Time: new Date(quote.atMs),
        },
      ];
    },
  }),
  defineOperation({
    id: "SetPaymentOutcome",
    method: "POST",
    path: "/Sandbox/SetPaymentOutcome",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Sets what the sandbox payment provider answers the charges that follow (every process of the service; until set again): approve (settled), decline, or require_action (the customer must confirm a further step; the confirmed charge settles). A charge already answered keeps its outcome.",
    input: Type.Object({
      Outcome: Type.Union(
        SANDBOX_OUTCOMES.map((outcome) => Type.Literal(outcome)),
        { description: "approve (the default), decline or require_action" },
      ),
      Reason: Type.Optional(
        Type.String({ minLength: 1, maxLength: 200, description: "Why a charge is declined or needs a step" }),
      ),
    }),
    result: PaymentOutcomeRecord,
    permission: onlyRoles("admin"),
    sandbox: true,
    paginated: false,
    example: { Outcome: "approve" },
    handler: async (ctx, input) => {
      const setting = { outcome: input.Outcome, reason: input.Outcome === "approve" ? null : (input.Reason ?? null) };
      await setSandboxOutcome(ctx.storage.db, setting);
      return [{ Outcome: setting.outcome, Reason: setting.reason }];
    },
  }),
];
