import assert from "node:assert/strict";
import http from "node:http";
import { after, describe, test } from "node:test";
import { add, type Decimal, decimal, neg, toNumber, ZERO } from "../../src/core/decimal.js";
import { seededRandom } from "../../src/core/random.js";
import { cleanUpProcesses, type Response, type Server, send, startServer } from "../helpers/process.js";
import { BACKENDS, freshStorage, type TestStorage } from "../helpers/service.js";
import { MARKET_OPEN } from "../helpers/trading.js";

/**
 * Durability under a crash: the real service as a child process, under
 * concurrent order load from several clients (resting brackets, market orders
 * that fill, closing sells, cancels), is killed with SIGKILL while requests are
 * in flight and restarted on the same storage. Everything it acknowledged (200)
 * is there, at least as far along as acknowledged; what it never answered may
 * or may not have landed, but never half: no order without its exits, no
 * market order without its fill, no fill without its position and cash change.
 * The service then answers and trades. No assertion depends on timing: which
 * requests were answered varies from run to run; what must hold of them does not.
 */

after(cleanUpProcesses);

const KEY = "crash-admin-key-0123456789abcdef";
const STRATEGIES = 3;
const CLIENTS = 6;
/** The kill comes once this many orders and cancels were acknowledged, while others are in flight. */
const ACKNOWLEDGED_BEFORE_KILL = 150;
const CAPITAL = 1_000_000;
/** Market orders fill against this hand quote (no size: unlimited); their exits never cross it. */
const FILLING = { symbol: "AAPL", bid: 200, ask: 200.05, profitTarget: 220, stopLoss: 180 } as const;
/** Limit buys rest below this quote; after the restart a quote at the limit fills them. */
const RESTING = { symbol: "MSFT", bid: 400, ask: 400.1, limit: 300, profitTarget: 350, stopLoss: 250 } as const;

const STATUS = { held: "A", working: "0", filled: "2", canceled: "4" } as const;
const SIGNAL_TYPE = { owner: 1, profitTarget: 4, stopLoss: 5 } as const;
/** An entry's exits are held until it fills, then work; they end with it when it is canceled. */
const EXIT_STATUS: Readonly<Record<string, string>> = {
  [STATUS.working]: STATUS.held,
  [STATUS.filled]: STATUS.working,
  [STATUS.canceled]: STATUS.canceled,
};

interface SignalIds {
  readonly SignalId: number;
  readonly ProfitTargetSignalId: number | null;
  readonly StopLossSignalId: number | null;
}

type Order =
  | { readonly kind: "resting"; readonly strategyId: number; readonly quantity: number }
  | { readonly kind: "market"; readonly strategyId: number; readonly quantity: number; readonly bracket: boolean }
  | { readonly kind: "sell"; readonly strategyId: number };

type Cancel = { readonly kind: "cancel"; readonly strategyId: number; readonly signalId: number };

/** One request a client sent, and what came of it: an answer, or none because the service died. */
interface Attempt {
  readonly request: Order | Cancel;
  answer?: Response;
}

// biome-ignore lint/suspicious/noExplicitAny: OrderStatus records are read as JSON
type OrderStatusRecord = Record<string, any> & {
  SignalId: number;
  ParentSignalId: number | null;
  SignalType: number;
  OrderType: string;
  Side: string;
  OrderStatus: string;
  OrderQuantity: number;
  FilledQuantity: number;
};

function orderDto(order: Order): Record<string, unknown> {
  const common = { StrategyId: order.strategyId, TIF: "1" };
  switch (order.kind) {
    case "resting":
      return {
        ...common,
        OrderType: "2",
        Side: "1",
        OrderQuantity: order.quantity,
        Limit: RESTING.limit,
        ProfitTarget: RESTING.profitTarget,
        StopLoss: RESTING.stopLoss,
        ServiceSymbol: { FullSymbol: RESTING.symbol },
      };
    case "market":
      return {
        ...common,
        OrderType: "1",
        Side: "1",
        OrderQuantity: order.quantity,
        ...(order.bracket ? { ProfitTarget: FILLING.profitTarget, StopLoss: FILLING.stopLoss } : {}),
        ServiceSymbol: { FullSymbol: FILLING.symbol },
      };
    case "sell":
      return { ...common, OrderType: "1", Side: "2", OrderQuantity: 1, ServiceSymbol: { FullSymbol: FILLING.symbol } };
  }
}

/** The service's v4 GEN server, spoken to as a client with the admin key. */
function client(server: Server, agent?: http.Agent) {
  const port = server.ports.GEN;
  const call = (method: string, path: string, body?: unknown) =>
    send(port, method, path, { key: KEY, ...(body === undefined ? {} : { body }), ...(agent ? { agent } : {}) });
  const ok = async (method: string, path: string, body?: unknown) => {
    const response = await call(method, path, body);
    assert.equal(response.status, 200, `${method} ${path}: ${response.text}`);
    return response.json.Results as unknown[];
  };
  return {
    call,
    ok,
    newOrder: (order: Order) => call("POST", "/Strategies/NewStrategyOrder", { Order: orderDto(order) }),
    cancel: (strategyId: number, signalId: number) =>
      call("DELETE", `/Strategies/CancelStrategyOrder?StrategyId=${strategyId}&SignalId=${signalId}`),
    setQuote: (symbol: string, bid: number, ask: number) =>
      ok("POST", "/Sandbox/SetQuote", { Symbol: symbol, Bid: bid, Ask: ask, Last: bid }),
    async signal(signalId: number) {
      const [order] = await ok("GET", `/Strategies/GetStrategyHistoricalOrders?SignalId=${signalId}`);
      return order as OrderStatusRecord;
    },
    /** Every order of a strategy: the active ones and every page of the ended ones. */
    async orders(strategyId: number): Promise<Map<number, OrderStatusRecord>> {
      const all = new Map<number, OrderStatusRecord>();
      const take = (records: unknown[]) => {
        for (const record of records as OrderStatusRecord[]) {
          assert.ok(!all.has(record.SignalId), `signal ${record.SignalId} listed twice`);
          all.set(record.SignalId, record);
        }
      };
      take(await ok("GET", `/Strategies/GetStrategyActiveOrders?StrategyIds=${strategyId}`));
      let cursor: string | null = null;
      do {
        const path = `/Strategies/GetStrategyHistoricalOrders?StrategyId=${strategyId}&Limit=1000${
          cursor ? `&Cursor=${encodeURIComponent(cursor)}` : ""
        }`;
        const response = await call("GET", path);
        assert.equal(response.status, 200, response.text);
        take(response.json.Results);
        cursor = response.json.Pagination?.next_cursor || null;
      } while (cursor);
      return all;
    },
  };
}

type Client = ReturnType<typeof client>;

function serviceEnv(storage: TestStorage): Record<string, string> {
  return {
    ...storage.env,
    BOOTSTRAP_ADMIN_KEY: KEY,
    SANDBOX: "1",
    MARKET_FEED: "manual",
    LOG_LEVEL: "warn",
    RATE_LIMIT_MAX: "100000000",
  };
}

async function setQuotes(api: Client, resting: { bid: number; ask: number } = RESTING): Promise<void> {
  // Hand quotes live in memory: a restarted service needs them again.
  await api.setQuote(FILLING.symbol, FILLING.bid, FILLING.ask);
  await api.setQuote(RESTING.symbol, resting.bid, resting.ask);
}

/**
 * Clients send orders and cancels until the kill; the kill comes from the
 * answer that brings the acknowledged count to the threshold while at least
 * one other request is in flight. Answers the attempts, in sending order.
 */
async function loadUntilKilled(server: Server, strategyIds: readonly number[]): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  let acknowledged = 0;
  let inFlight = 0;
  let killed: Promise<unknown> | undefined;

  const run = async (clientNo: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const api = client(server, agent);
    const next = seededRandom(clientNo + 1);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    /** This client's resting entries it may cancel, and its own long AAPL shares by strategy. */
    const cancellable: { strategyId: number; signalId: number }[] = [];
    const held = new Map<number, number>();
    try {
      while (killed === undefined) {
        const strategyId = pick(strategyIds);
        const roll = next();
        const quantity = 1 + Math.floor(next() * 3);
        let attempt: Attempt;
        if (roll < 0.15 && cancellable.length > 0) {
          const target = cancellable.splice(Math.floor(next() * cancellable.length), 1)[0] as (typeof cancellable)[0];
          attempt = { request: { kind: "cancel", ...target } };
        } else if (roll < 0.5) attempt = { request: { kind: "resting", strategyId, quantity } };
        else if (roll < 0.65 && (held.get(strategyId) ?? 0) >= 2) {
          // A sell closes one share of this client's own acknowledged buys and leaves one of them,
          // so no sell meets a flat position (a refusal) and no position goes flat again.
          held.set(strategyId, (held.get(strategyId) ?? 0) - 1);
          attempt = { request: { kind: "sell", strategyId } };
        } else attempt = { request: { kind: "market", strategyId, quantity, bracket: next() < 0.5 } };
        attempts.push(attempt);
        inFlight++;
        let answer: Response;
        try {
          const r = attempt.request;
          answer = await (r.kind === "cancel" ? api.cancel(r.strategyId, r.signalId) : api.newOrder(r));
        } catch {
          // No answer: the service is gone. The request may or may not have landed.
          inFlight--;
          return;
        }
        inFlight--;
        attempt.answer = answer;
        if (answer.status !== 200) return;
        acknowledged++;
        const r = attempt.request;
        if (r.kind === "resting")
          cancellable.push({ strategyId: r.strategyId, signalId: answer.json.Results[0].SignalId });
        if (r.kind === "market") held.set(r.strategyId, (held.get(r.strategyId) ?? 0) + r.quantity);
        if (killed === undefined && acknowledged >= ACKNOWLEDGED_BEFORE_KILL && inFlight > 0) {
          killed = server.stop("SIGKILL");
        }
      }
    } finally {
      agent.destroy();
    }
  };

  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => run(i)));
  const refused = attempts.find((a) => a.answer !== undefined && a.answer.status !== 200)?.answer?.text;
  assert.ok(killed, `the load stopped before the kill: ${refused}`);
  assert.deepEqual(await killed, { code: null, signal: "SIGKILL" });
  return attempts;
}

const signalIdsOf = (attempt: Attempt): SignalIds => attempt.answer?.json.Results[0] as SignalIds;

/** Fills from storage (the API shows none): by order, with the strategy's cash and signed quantity by symbol. */
async function fillsOf(storage: TestStorage, strategyId: number) {
  const rows = await storage.storage.db
    .selectFrom("fills")
    .select(["order_id", "symbol", "side", "quantity", "cash"])
    .where("strategy_id", "=", strategyId)
    .execute();
  const byOrder = new Map<number, Decimal>();
  const bySymbol = new Map<string, Decimal>();
  let cash: Decimal = ZERO;
  for (const fill of rows) {
    const quantity = decimal(fill.quantity);
    byOrder.set(fill.order_id, add(byOrder.get(fill.order_id) ?? ZERO, quantity));
    bySymbol.set(fill.symbol, add(bySymbol.get(fill.symbol) ?? ZERO, fill.side === "buy" ? quantity : neg(quantity)));
    cash = add(cash, decimal(fill.cash));
  }
  return { byOrder, bySymbol, cash };
}

/**
 * What must hold of every strategy whatever landed: each entry whole (a market
 * order filled, a bracket with both exits, the exits' status following the
 * entry's), each order's filled quantity its fills, each position the sum of
 * its fills and of its orders' filled quantities, and the cash the starting
 * capital plus the fills' cash. A resting entry is working, or filled once the
 * market has reached its limit, unless a cancel was sent for it. Answers the
 * strategy's orders.
 */
async function assertWhole(
  api: Client,
  storage: TestStorage,
  strategyId: number,
  canceled: ReadonlySet<number>,
  limitReached: boolean,
): Promise<Map<number, OrderStatusRecord>> {
  const orders = await api.orders(strategyId);
  const fills = await fillsOf(storage, strategyId);
  const exitsOf = (entryId: number) => [...orders.values()].filter((order) => order.ParentSignalId === entryId);
  const filledBySymbol = new Map<string, Decimal>();

  for (const order of orders.values()) {
    const where = `strategy ${strategyId}, signal ${order.SignalId}`;
    assert.equal(
      toNumber(fills.byOrder.get(order.SignalId) ?? ZERO),
      order.FilledQuantity,
      `${where}: filled quantity is its fills`,
    );
    const symbol = order.ServiceSymbol.FullSymbol as string;
    const signed = decimal(order.Side === "1" ? order.FilledQuantity : -order.FilledQuantity);
    filledBySymbol.set(symbol, add(filledBySymbol.get(symbol) ?? ZERO, signed));

    if (order.ParentSignalId !== null) {
      assert.ok(orders.has(order.ParentSignalId), `${where}: an exit's entry exists`);
      continue;
    }
    assert.equal(order.SignalType, SIGNAL_TYPE.owner, where);
    if (order.OrderType === "1") {
      assert.equal(order.OrderStatus, STATUS.filled, `${where}: a market order filled in its request`);
      assert.equal(order.FilledQuantity, order.OrderQuantity, where);
    } else {
      const untouched = limitReached ? STATUS.filled : STATUS.working;
      const expected: string[] = canceled.has(order.SignalId) ? [untouched, STATUS.canceled] : [untouched];
      assert.ok(expected.includes(order.OrderStatus), `${where}: ${order.OrderStatus}`);
    }
    const exits = exitsOf(order.SignalId);
    const wanted = [
      ...(order.ProfitTarget === null ? [] : [{ type: SIGNAL_TYPE.profitTarget, orderType: "2", price: "Limit" }]),
      ...(order.StopLoss === null ? [] : [{ type: SIGNAL_TYPE.stopLoss, orderType: "3", price: "Stop" }]),
    ];
    assert.equal(exits.length, wanted.length, `${where}: the entry has its exits`);
    for (const want of wanted) {
      const exit = exits.find((e) => e.SignalType === want.type);
      assert.ok(exit, `${where}: exit of type ${want.type}`);
      assert.equal(exit.OrderType, want.orderType, where);
      assert.equal(exit.Side, "2", where);
      assert.equal(exit.OrderQuantity, order.OrderQuantity, where);
      assert.equal(exit[want.price], want.type === SIGNAL_TYPE.profitTarget ? order.ProfitTarget : order.StopLoss);
      assert.equal(exit.OrderStatus, EXIT_STATUS[order.OrderStatus], `${where}: exit ${exit.SignalId}`);
    }
  }

  const positions = (await api.ok("GET", `/Strategies/GetStrategyOpenPositions?StrategyIds=${strategyId}`)) as {
    Quantity: number;
    ServiceSymbol: { FullSymbol: string };
  }[];
  const held = Object.fromEntries(positions.map((p) => [p.ServiceSymbol.FullSymbol, p.Quantity]));
  const fromFills = Object.fromEntries(
    [...fills.bySymbol].filter(([, quantity]) => quantity !== ZERO).map(([symbol, q]) => [symbol, toNumber(q)]),
  );
  const fromOrders = Object.fromEntries(
    [...filledBySymbol].filter(([, quantity]) => quantity !== ZERO).map(([symbol, q]) => [symbol, toNumber(q)]),
  );
  assert.deepEqual(held, fromFills, `strategy ${strategyId}: each position is the sum of its fills`);
  assert.deepEqual(fromOrders, fromFills, `strategy ${strategyId}: the orders' filled quantities are the fills`);

  const [details] = (await api.ok("GET", `/Strategies/GetStrategyDetails?StrategyId=${strategyId}`)) as {
    Cash: number;
    StartingCash: number;
  }[];
  assert.equal(details?.StartingCash, CAPITAL);
  assert.equal(
    details?.Cash,
    toNumber(add(decimal(CAPITAL), fills.cash)),
    `strategy ${strategyId}: cash is the starting capital plus the fills' cash`,
  );
  return orders;
}

for (const backend of BACKENDS) {
  describe(`a service killed under order load (${backend})`, () => {
    test("loses no acknowledged order, fill or position change, lands nothing by half, and trades after a restart", async () => {
      const storage = await freshStorage(backend);
      const env = serviceEnv(storage);
      const dataDir = storage.env.DATA_DIR;
      let server = await startServer({ dataDir, env });
      try {
        let api = client(server);
        await api.ok("POST", "/Sandbox/SetClock", { Now: MARKET_OPEN });
        await setQuotes(api);
        const strategyIds: number[] = [];
        for (let i = 1; i <= STRATEGIES; i++) {
          const [created] = await api.ok("POST", "/Strategies/AddStrategy", {
            StrategyName: `Crash ${i}`,
            StartingCapital: CAPITAL,
          });
          strategyIds.push((created as { StrategyId: number }).StrategyId);
        }

        const attempts = await loadUntilKilled(server, strategyIds);
        const answered = attempts.filter((a) => a.answer !== undefined);
        assert.deepEqual(
          answered.filter((a) => a.answer?.status !== 200).map((a) => a.answer?.text),
          [],
          "every answer before the kill was 200",
        );
        assert.ok(answered.length >= ACKNOWLEDGED_BEFORE_KILL);

        server = await startServer({ dataDir, env });
        api = client(server);
        assert.equal((await api.call("POST", "/General/Hello", { Name: "Bob" })).status, 200);

        // What was acknowledged is there, at least as far along as acknowledged.
        const cancelsSent = new Set<number>();
        const cancelsAcknowledged = new Set<number>();
        for (const { request, answer } of attempts) {
          if (request.kind !== "cancel") continue;
          cancelsSent.add(request.signalId);
          if (answer) cancelsAcknowledged.add(request.signalId);
        }
        const stillResting: { strategyId: number; signalId: number }[] = [];
        for (const attempt of answered) {
          const { request } = attempt;
          if (request.kind === "cancel") {
            assert.equal((await api.signal(request.signalId)).OrderStatus, STATUS.canceled, "acknowledged cancel");
            continue;
          }
          const ids = signalIdsOf(attempt);
          const entry = await api.signal(ids.SignalId);
          assert.equal(entry.StrategyId, request.strategyId);
          if (request.kind === "resting") {
            const canceled = cancelsAcknowledged.has(ids.SignalId);
            if (!canceled && !cancelsSent.has(ids.SignalId)) {
              assert.equal(entry.OrderStatus, STATUS.working, `resting ${ids.SignalId}`);
              stillResting.push({ strategyId: request.strategyId, signalId: ids.SignalId });
            }
          } else {
            assert.equal(entry.OrderStatus, STATUS.filled, `market ${ids.SignalId}`);
          }
          const bracket = request.kind === "resting" || (request.kind === "market" && request.bracket);
          for (const exitId of [ids.ProfitTargetSignalId, ids.StopLossSignalId]) {
            assert.equal(exitId !== null, bracket, `exits of ${ids.SignalId}`);
            if (exitId !== null) assert.equal((await api.signal(exitId)).ParentSignalId, ids.SignalId);
          }
        }

        // What landed, answered or not, landed whole; requests sent bound what landed.
        for (const strategyId of strategyIds) {
          const orders = await assertWhole(api, storage, strategyId, cancelsSent, false);
          const sent = attempts.filter((a) => a.request.kind !== "cancel" && a.request.strategyId === strategyId);
          const entries = [...orders.values()].filter((order) => order.ParentSignalId === null);
          assert.ok(entries.length <= sent.length, `strategy ${strategyId}: no more orders than were sent`);
        }

        // The restarted service trades: a market order fills, a cancel cancels, and a quote at
        // the resting limit fills the working entries its rebuilt index holds.
        await setQuotes(api);
        const bought = await api.newOrder({
          kind: "market",
          strategyId: strategyIds[0] as number,
          quantity: 1,
          bracket: false,
        });
        assert.equal(bought.status, 200, bought.text);
        assert.equal((await api.signal(bought.json.Results[0].SignalId)).OrderStatus, STATUS.filled);
        const [toCancel, ...toFill] = stillResting;
        assert.ok(toCancel && toFill.length > 0, "some acknowledged resting orders are still working");
        assert.equal((await api.cancel(toCancel.strategyId, toCancel.signalId)).status, 200);
        cancelsSent.add(toCancel.signalId);
        assert.equal((await api.signal(toCancel.signalId)).OrderStatus, STATUS.canceled);
        await setQuotes(api, { bid: RESTING.limit - 0.1, ask: RESTING.limit });
        for (const { signalId } of toFill) assert.equal((await api.signal(signalId)).OrderStatus, STATUS.filled);
        for (const strategyId of strategyIds) await assertWhole(api, storage, strategyId, cancelsSent, true);
        assert.deepEqual(await server.stop("SIGTERM"), { code: 0, signal: null });
      } finally {
        await server.stop("SIGKILL").catch(() => undefined);
        await storage.dispose();
      }
    });
  });
}
