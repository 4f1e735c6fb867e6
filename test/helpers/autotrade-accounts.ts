import assert from "node:assert/strict";
import { decimal } from "../../src/core/decimal.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import type { Backend } from "../../src/store/storage.js";
import { follow, settleAutotrade, startAutotrade } from "./autotrade.js";
import {
  ADMIN_KEY,
  type CallResult,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "./service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "./trading.js";

/**
 * Scenarios of autotraded brokerage accounts over the API (issue 14): person
 * B's account at the simulated broker following a strategy of person A's,
 * its orders read and entered through the /Autotrade account operations.
 */
let made = 0;

/** A service on hand quotes only (AAPL at 200/200.1, and these), its clock at MARKET_OPEN, and its people. */
export async function accountsService(
  backend: Backend,
  quotes: readonly (readonly [string, number, number])[] = [],
): Promise<{ service: TestService; p: Population }> {
  const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
  const p = await populate(service);
  await service.call("GEN", "POST", "/Sandbox/SetClock", { key: ADMIN_KEY, body: { Now: MARKET_OPEN } });
  for (const [symbol, bid, ask] of [["AAPL", 200, 200.1] as const, ...quotes])
    await setQuote(service, symbol, bid, ask);
  return { service, p };
}

export interface Following {
  readonly strategyId: number;
  readonly account: string;
}

/** A new strategy of A's (100,000 dollars) followed by a new account of B's at the simulated broker. */
export async function followingAccount(
  service: TestService,
  p: Population,
  options: { readonly extra?: Record<string, unknown>; readonly cash?: string; readonly paper?: boolean } = {},
): Promise<Following> {
  made += 1;
  const strategyId = await newStrategy(service, p.keys.personA, 100_000, `Account orders ${made}`);
  const account = `ACC-${service.backend}-${made}-${Math.random().toString(36).slice(2, 6)}`;
  await openSimulatedBrokerAccount(service.app.runtime, {
    personId: p.people.personB,
    brokerId: 1,
    account,
    cash: decimal(options.cash ?? "50000"),
    paper: options.paper ?? false,
  });
  await startFollowing(service, p, strategyId, account, options.extra);
  return { strategyId, account };
}

/** B's account starts following the strategy (B follows it first). */
export async function startFollowing(
  service: TestService,
  p: Population,
  strategyId: number,
  account: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await follow(service, p.people.personB, strategyId);
  const started = await startAutotrade(service, ADMIN_KEY, {
    Account: account,
    PersonId: p.people.personB,
    StrategyId: strategyId,
    EnableStocks: true,
    ...extra,
  });
  assert.equal(started.status, 200, started.text);
  await settleAutotrade(service);
}

/** The strategy (A's) trades AAPL, at market unless told; autotrade settles. */
export async function strategyTrades(
  service: TestService,
  p: Population,
  strategyId: number,
  side: "buy" | "sell",
  quantity: number,
  extra: Record<string, unknown> = {},
  symbol = "AAPL",
) {
  const result = await placed(service, p.keys.personA, stockOrder(strategyId, symbol, side, quantity, extra));
  await settleAutotrade(service);
  return result;
}

/** A manual order's body for B's account (a sell limit of AAPL unless told). */
export const manualOrder = (
  p: Population,
  following: Following,
  order: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) => ({
  Account: following.account,
  PersonId: p.people.personB,
  Order: {
    StrategyId: following.strategyId,
    OrderType: "2",
    Side: "2",
    TIF: "1",
    OrderQuantity: 10,
    Limit: 250,
    ServiceSymbol: { FullSymbol: "AAPL" },
    ...order,
  },
  ...extra,
});

/** NewAutotradeOrder as `key` (B's own key unless told); autotrade settles. */
export async function sendManual(
  service: TestService,
  key: string,
  body: unknown,
  server: "WL" | "GEN" | "GEO" = "GEN",
  headers: Record<string, string> = {},
): Promise<CallResult> {
  const r = await service.call(server, "POST", "/Autotrade/NewAutotradeOrder", { key, body, headers });
  await settleAutotrade(service);
  return r;
}

/** A GET or DELETE of an account operation, every value as a client sends it in the query. */
export async function accountQuery(
  service: TestService,
  key: string,
  method: "GET" | "DELETE",
  operation: string,
  query: Record<string, string | number>,
  server: "WL" | "GEN" | "GEO" = "GEN",
): Promise<CallResult> {
  const r = await service.call(server, method, `/Autotrade/${operation}`, {
    key,
    query: Object.fromEntries(Object.entries(query).map(([name, value]) => [name, String(value)])),
  });
  if (method === "DELETE") await settleAutotrade(service);
  return r;
}

/** One of B's account's order lists, read as B. */
const ordersRead =
  (operation: "GetAutotradeActiveOrders" | "GetAutotradeHistoricalOrders") =>
  async (service: TestService, p: Population, account: string, extra: Record<string, string> = {}) => {
    const query = { Account: account, PersonId: p.people.personB, ...extra };
    const r = await accountQuery(service, p.keys.personB, "GET", operation, query);
    assert.equal(r.status, 200, r.text);
    return r.json.Results as Record<string, unknown>[];
  };

/** The account's working orders (GetAutotradeActiveOrders). */
export const activeOf = ordersRead("GetAutotradeActiveOrders");

/** The account's ended orders, one page of up to 1000 (GetAutotradeHistoricalOrders). */
export const historyOf = ordersRead("GetAutotradeHistoricalOrders");

/** What the setups hold in the account, read through GetAutoTradeOpenPositions as B. */
export async function positionsOf(service: TestService, p: Population, account: string) {
  const r = await accountQuery(service, p.keys.personB, "GET", "GetAutoTradeOpenPositions", { Account: account });
  assert.equal(r.status, 200, r.text);
  return r.json.Results as {
    StrategyId: number;
    Quantity: number;
    AvgPx: number;
    ServiceSymbol: { FullSymbol: string };
  }[];
}

/** The account's orders as stored, oldest first: `purpose side quantity type status`. */
export async function storedOrders(service: TestService, account: string): Promise<string[]> {
  const rows = await service.storage.db
    .selectFrom("account_orders as o")
    .innerJoin("broker_accounts as b", "b.account_id", "o.account_id")
    .select(["o.purpose", "o.side", "o.quantity", "o.order_type", "o.status"])
    .where("b.account_number", "=", account)
    .orderBy("o.id")
    .execute();
  return rows.map((o) => `${o.purpose} ${o.side} ${o.quantity} ${o.order_type} ${o.status}`);
}

/** What the simulated broker holds of the symbol in the account. */
export async function heldAtBroker(service: TestService, account: string, symbol = "AAPL"): Promise<number> {
  const held = await service.app.brokers.simulated.positions({ brokerId: 1, account });
  const position = held.find((h) => h.symbol === symbol);
  return position ? Number(position.quantity) / 1e8 : 0;
}

/** Sets a fault on the account at the simulated broker (sandbox), then settles. */
export async function brokerFault(service: TestService, account: string, body: Record<string, unknown>): Promise<void> {
  const r = await service.call("GEN", "POST", "/Sandbox/SetBrokerFault", {
    key: ADMIN_KEY,
    body: { Account: account, ...body },
  });
  assert.equal(r.status, 200, r.text);
  await settleAutotrade(service);
}
