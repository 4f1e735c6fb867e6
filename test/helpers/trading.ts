import assert from "node:assert/strict";
import { ADMIN_KEY, type CallResult, type TestService } from "./service.js";

/** Trading scenario helpers: strategies, hand quotes and orders through the v4 API. */

/** A Tuesday at 10:00 New York: US stocks, futures and forex all trade. */
export const MARKET_OPEN = "2026-03-10T14:00:00Z";

export async function newStrategy(
  service: TestService,
  key: string,
  capital = 100_000,
  name = "Test Strategy",
): Promise<number> {
  const r = await service.call("GEN", "POST", "/Strategies/AddStrategy", {
    key,
    body: { StrategyName: name, StartingCapital: capital },
  });
  assert.equal(r.status, 200, r.text);
  return r.json.Results[0].StrategyId as number;
}

export async function setQuote(
  service: TestService,
  symbol: string,
  bid: number,
  ask: number,
  sizes: { bidSize?: number; askSize?: number } = {},
): Promise<void> {
  const r = await service.call("GEN", "POST", "/Sandbox/SetQuote", {
    key: ADMIN_KEY,
    body: {
      Symbol: symbol,
      Bid: bid,
      Ask: ask,
      Last: bid,
      ...(sizes.bidSize === undefined ? {} : { BidSize: sizes.bidSize }),
      ...(sizes.askSize === undefined ? {} : { AskSize: sizes.askSize }),
    },
  });
  assert.equal(r.status, 200, r.text);
}

/** An OrderDTO for a stock with the wire codes spelled out by name. */
export function stockOrder(
  strategyId: number,
  symbol: string,
  side: "buy" | "sell",
  quantity: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    StrategyId: strategyId,
    OrderType: "1",
    Side: side === "buy" ? "1" : "2",
    TIF: "1",
    OrderQuantity: quantity,
    ServiceSymbol: { FullSymbol: symbol },
    ...extra,
  };
}

export const newOrder = (
  service: TestService,
  key: string,
  order: Record<string, unknown>,
  server: "WL" | "GEN" = "GEN",
): Promise<CallResult> => service.call(server, "POST", "/Strategies/NewStrategyOrder", { key, body: { Order: order } });

export async function placed(service: TestService, key: string, order: Record<string, unknown>) {
  const r = await newOrder(service, key, order);
  assert.equal(r.status, 200, r.text);
  return r.json.Results[0] as {
    SignalId: number;
    ProfitTargetSignalId: number | null;
    StopLossSignalId: number | null;
    ExitSignalsOCAGroupId: number | null;
    ParkedUntilDate: string | null;
  };
}

export async function activeOrders(service: TestService, key: string, strategyId: number) {
  const r = await service.call("GEN", "GET", "/Strategies/GetStrategyActiveOrders", {
    key,
    query: { StrategyIds: String(strategyId) },
  });
  assert.equal(r.status, 200, r.text);
  return r.json.Results as Record<string, unknown>[];
}

export async function positions(service: TestService, key: string, strategyId: number) {
  const r = await service.call("GEN", "GET", "/Strategies/GetStrategyOpenPositions", {
    key,
    query: { StrategyIds: String(strategyId) },
  });
  assert.equal(r.status, 200, r.text);
  return r.json.Results as { Quantity: number; AvgPx: number; ServiceSymbol: { FullSymbol: string } }[];
}

/** One signal in whatever state, through GetStrategyHistoricalOrders?SignalId=. */
export async function signal(service: TestService, key: string, signalId: number) {
  const r = await service.call("GEN", "GET", "/Strategies/GetStrategyHistoricalOrders", {
    key,
    query: { SignalId: String(signalId) },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.Results.length, 1);
  return r.json.Results[0] as Record<string, unknown> & { OrderStatus: string; FilledQuantity: number };
}

/** Asserts a refusal: the HTTP status and an error entry with the service code (and field, when given). */
export function assertRefused(r: CallResult, status: number, code: string, field?: string): void {
  assert.equal(r.status, status, r.text);
  const errors = (r.json?.ResponseStatus?.Errors ?? []) as { ErrorCode: string; FieldName: string }[];
  assert.ok(
    errors.some((e) => e.ErrorCode === code && (field === undefined || e.FieldName === field)),
    `expected error ${code}${field === undefined ? "" : ` on ${field}`}: ${r.text}`,
  );
}

export const cancelOrder = (
  service: TestService,
  key: string,
  strategyId: number,
  signalId: number,
  server: "WL" | "GEN" = "GEN",
): Promise<CallResult> =>
  service.call(server, "DELETE", "/Strategies/CancelStrategyOrder", {
    key,
    query: { StrategyId: String(strategyId), SignalId: String(signalId) },
  });

export const replaceOrder = (
  service: TestService,
  key: string,
  order: Record<string, unknown>,
  server: "WL" | "GEN" = "GEN",
): Promise<CallResult> =>
  service.call(server, "PUT", "/Strategies/ReplaceStrategyOrder", { key, body: { Order: order } });

/** POST SetDesiredPositions: /v2/Strategies/... on WL, /Strategies/... on GEN. */
export const setDesiredPositions = (
  service: TestService,
  key: string,
  strategyId: number,
  desired: Record<string, unknown>[],
  server: "WL" | "GEN" = "WL",
): Promise<CallResult> =>
  service.call(
    server,
    "POST",
    server === "WL" ? "/v2/Strategies/SetDesiredPositions" : "/Strategies/SetDesiredPositions",
    {
      key,
      body: { StrategyId: strategyId, Positions: desired },
    },
  );
