import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { ControllableClock } from "../../core/clock.js";
import {
  abs,
  add,
  type Decimal,
  div,
  formatDecimal,
  fromInteger,
  isZero,
  mul,
  neg,
  sign,
  storedDecimal,
  sub,
  ZERO,
} from "../../core/decimal.js";
import { refuse } from "../../core/errors.js";
import type { MarketQuote } from "../../core/market/quote.js";
import type { MarketView } from "../../core/market/view.js";
import { hasExpired, settlementOf } from "../../core/orders/contract-expiry.js";
import { dayOrderExpiry, scheduleOf, sessionAt } from "../../core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../../core/symbols/instrument.js";
import type { Storage } from "../../store/storage.js";
import type { MarketData } from "../market-data.js";
import { marketViewAt } from "../market-view.js";
import type {
  AccountValue,
  BrokerAccountRef,
  BrokerOrderRequest,
  BrokerPort,
  BrokerPosition,
  BrokerReport,
  OrderReport,
  PlaceAnswer,
} from "./port.js";
import { DEFAULT_REASONS, type Fault, RESTRICTIONS } from "./sim-faults.js";
import { executionPrice, executionQuantity } from "./sim-matching.js";
import {
  executionsOf,
  isOpen,
  loadAccount,
  loadLiveOrders,
  loadOrderByKey,
  type SimAccount,
  type SimExecution,
  type SimOrder,
  type SimPosition,
  writeBatch,
} from "./sim-store.js";

/** Broker 1 (migration 0022): the simulated broker. */
export const SIMULATED_BROKER_ID = 1;

/** A call the broker could not take (a disconnect fault): the service retries it with the same key. */
export class BrokerUnavailableError extends Error {
  constructor(account: string) {
    super(`The simulated broker is not connected for account ${account}`);
    this.name = "BrokerUnavailableError";
  }
}

/** What an order report says, apart from whose order it is and when. */
type OrderReportKind = OrderReport extends infer R
  ? R extends OrderReport
    ? Omit<R, "brokerId" | "account" | "idempotencyKey" | "brokerOrderId" | "atMs">
    : never
  : never;

/** Changes made in memory and not yet written; written, then reported, as one batch. */
interface Pending {
  arriving: SimOrder[];
  changed: Map<string, SimOrder>;
  reported: Set<string>;
  executions: SimExecution[];
  accounts: Set<SimAccount>;
  positions: Map<string, { account: string; symbol: string; position: SimPosition }>;
  faults: Set<SimAccount>;
  reports: { report: BrokerReport; orderId: string | null }[];
}

const emptyPending = (): Pending => ({
  arriving: [],
  changed: new Map(),
  reported: new Set(),
  executions: [],
  accounts: new Set(),
  positions: new Map(),
  faults: new Set(),
  reports: [],
});

/**
 * The simulated broker: the fake at the edge the service cannot reach, and
 * so built to behave as a broker does. It keeps its own books (accounts,
 * orders by the service's idempotency key, executions, positions, faults) in
 * its own tables, in memory while it runs, written in batches: one
 * transaction per batch of changes, so ten thousand placements made at once
 * are one transaction. A placement is answered once its order is stored; it is
 * acknowledged and worked after, against the service's market data (a buy at
 * the ask, a sell at the bid), market orders at once while the market is
 * open, limits and stops when a quote crosses them, DAY orders expiring at the
 * close, and an expired contract's orders expiring and its positions settling. Every change is reported to the listeners after it is written; an
 * order whose reports listeners may not have heard (a crash between the two)
 * is told again from the start when the broker next starts. Its matching
 * runs in one process (docs/decisions.md).
 */
export class SimulatedBroker implements BrokerPort {
  readonly brokerId = SIMULATED_BROKER_ID;
  readonly #accounts = new Map<string, SimAccount>();
  readonly #reading = new Map<string, Promise<SimAccount | null>>();
  /** Instruments by symbol and type: ten thousand copies of one order read one symbol. */
  readonly #instruments = new Map<string, Instrument | null>();
  readonly #byKey = new Map<string, SimOrder>();
  readonly #open = new Map<string, SimOrder>();
  /** Placements waiting for their batch: the same key asked again waits for the same answer. */
  readonly #arriving = new Map<string, Promise<SimOrder>>();
  readonly #listeners: ((report: BrokerReport) => void)[] = [];
  /** Orders whose last change no listener heard yet (told when the first listens). */
  readonly #untold = new Set<SimOrder>();
  #pending = emptyPending();
  #settling: Promise<void> = Promise.resolve();
  #queued: Promise<void> | null = null;
  readonly #placeWaiters = new Map<string, { resolve: (order: SimOrder) => void; reject: (error: unknown) => void }>();

  constructor(
    private readonly storage: Storage,
    private readonly clock: ControllableClock,
    private readonly market: MarketData,
    private readonly logger: Logger,
  ) {}

  /**
   * Reads the open orders and their accounts (other accounts are read when
   * first asked for); orders left new (a restart between their write and
   * their acknowledgement) are worked.
   */
  async start(): Promise<void> {
    const live = await loadLiveOrders(this.storage.db);
    for (const name of new Set(live.map(({ order }) => order.account))) await this.#account(name);
    for (const { order, reported } of live) {
      this.#byKey.set(order.key, order);
      if (isOpen(order)) this.#open.set(order.id, order);
      if (!reported) this.#untold.add(order);
    }
    this.#work(this.clock.nowMs());
    await this.drain();
  }

  onReport(listener: (report: BrokerReport) => void): void {
    this.#listeners.push(listener);
    if (this.#listeners.length === 1) void this.#tellUntold();
  }

  async link(ref: BrokerAccountRef, username: string | null): Promise<{ ok: true } | { ok: false; reason: string }> {
    const account = await this.#account(ref.account);
    if (!account) return { ok: false, reason: `The broker has no account ${ref.account}` };
    account.linked = true;
    account.username = username;
    this.#pending.accounts.add(account);
    await this.#flush();
    return { ok: true };
  }

  /** The service withdraws: the account takes no more orders from it; what works at the broker stays. */
  async delink(ref: BrokerAccountRef): Promise<void> {
    const account = await this.#account(ref.account);
    if (!account) return;
    account.linked = false;
    this.#pending.accounts.add(account);
    await this.#flush();
  }

  async accountValue(ref: BrokerAccountRef): Promise<AccountValue> {
    return this.#valueOf(await this.#known(ref.account));
  }

  async positions(ref: BrokerAccountRef): Promise<readonly BrokerPosition[]> {
    const account = await this.#known(ref.account);
    return [...account.positions]
      .filter(([, position]) => !isZero(position.quantity))
      .map(([symbol, position]) => ({ symbol, symbolType: position.symbolType, quantity: position.quantity }));
  }

  async place(request: BrokerOrderRequest): Promise<PlaceAnswer> {
    const account = await this.#account(request.account);
    if (account?.faults.has("disconnect")) throw new BrokerUnavailableError(request.account);
    const order = await this.#orderFor(request, account);
    return order.status === "rejected"
      ? { ok: false, reason: order.reason ?? DEFAULT_REASONS.reject }
      : { ok: true, brokerOrderId: order.brokerOrderId };
  }

  async cancel(ref: BrokerAccountRef, idempotencyKey: string): Promise<void> {
    const order = await this.#requested(ref, idempotencyKey);
    const nowMs = this.clock.nowMs();
    if (isOpen(order)) {
      this.#end(order, "canceled", null, nowMs);
      this.#report(order, { kind: "canceled", reason: null }, nowMs);
    } else {
      this.#report(order, { kind: "cancelRejected", reason: `The order is ${order.status}` }, nowMs);
    }
    await this.#flush();
  }

  async replace(
    ref: BrokerAccountRef,
    idempotencyKey: string,
    price: { readonly limit: Decimal | null; readonly stop: Decimal | null },
  ): Promise<void> {
    const order = await this.#requested(ref, idempotencyKey);
    const nowMs = this.clock.nowMs();
    const refusal = !isOpen(order)
      ? `The order is ${order.status}`
      : order.orderType === "market"
        ? "A market order has no price to replace"
        : (order.orderType === "limit" ? price.limit : price.stop) === null
          ? `A ${order.orderType} order needs its price`
          : null;
    if (refusal !== null) {
      this.#report(order, { kind: "replaceRejected", reason: refusal }, nowMs);
    } else {
      const replaced = order.brokerOrderId;
      order.replacements += 1;
      order.brokerOrderId = `${order.id}-R${order.replacements}`;
      order.limit = order.orderType === "limit" ? price.limit : null;
      order.stop = order.orderType === "stop" ? price.stop : null;
      this.#changed(order, nowMs);
      this.#report(
        order,
        { kind: "replaced", newBrokerOrderId: order.brokerOrderId, limit: order.limit, stop: order.stop },
        nowMs,
        replaced,
      );
      this.#tryFill(order, null, nowMs);
    }
    await this.#flush();
  }

  /** The reason the broker gives the orders a paper reset cancels. */
  static readonly RESET_REASON = "The paper account was reset";

  async resetPaperAccount(ref: BrokerAccountRef, startingCash: Decimal): Promise<void> {
    const account = await this.#known(ref.account);
    if (account.faults.has("disconnect")) throw new BrokerUnavailableError(ref.account);
    const nowMs = this.clock.nowMs();
    for (const order of [...this.#open.values()]) {
      if (order.account !== ref.account) continue;
      this.#end(order, "canceled", SimulatedBroker.RESET_REASON, nowMs);
      this.#report(order, { kind: "canceled", reason: SimulatedBroker.RESET_REASON }, nowMs);
    }
    for (const [symbol, position] of account.positions) {
      if (isZero(position.quantity)) continue;
      position.quantity = ZERO;
      this.#pending.positions.set(`${account.account}\u0000${symbol}`, { account: account.account, symbol, position });
    }
    account.cash = startingCash;
    this.#pending.accounts.add(account);
    await this.#flush();
  }

  /** A new quote: the orders it crosses execute (written with the next batch). */
  quoteChanged(quote: MarketQuote): void {
    const nowMs = this.clock.nowMs();
    let moved = false;
    for (const order of this.#open.values()) {
      if (order.symbol !== quote.symbol || order.status !== "working") continue;
      moved = this.#tryFill(order, quote, nowMs) || moved;
    }
    if (moved) void this.#flush().catch(() => undefined);
  }

  /** Brings the broker up to the clock: held orders released, DAY orders expired, orders worked at the current quotes. */
  catchUp(): Promise<void> {
    this.#work(this.clock.nowMs());
    return this.drain();
  }

  /** Resolves once every change made so far is written and reported. */
  drain(): Promise<void> {
    return this.#flush();
  }

  /**
   * Sets a fault on an account (POST /Sandbox/SetBrokerFault); answers, once
   * it is durable and reported, the faults standing on the account.
   */
  async setFault(name: string, fault: Fault): Promise<string[]> {
    const account = await this.#account(name);
    if (!account)
      throw refuse("NotFound", { field: "Account", message: `The simulated broker has no account ${name}` });
    const nowMs = this.clock.nowMs();
    const accountReport = { brokerId: this.brokerId, account: name, atMs: nowMs };
    switch (fault.kind) {
      case "clear":
        account.faults.clear();
        break;
      case "reconnect":
        account.faults.delete("disconnect");
        break;
      case "delink":
        account.linked = false;
        this.#pending.accounts.add(account);
        for (const order of [...this.#open.values()]) {
          if (order.account !== name) continue;
          this.#end(order, "canceled", fault.reason, nowMs);
          this.#report(order, { kind: "canceled", reason: fault.reason }, nowMs);
        }
        this.#pending.reports.push({
          report: { ...accountReport, kind: "delinked", reason: fault.reason },
          orderId: null,
        });
        break;
      case "externalExecution": {
        const price = fault.price ?? this.#touch(fault.symbol, fault.side);
        if (price === null)
          throw refuse("InvalidValue", { field: "Price", message: `No quote for ${fault.symbol}: give a Price` });
        const instrument = this.#instrument(fault.symbol, null) as Instrument;
        this.#execute(account, instrument, fault.side, fault.quantity, price, `${randomUUID()}`, null, nowMs);
        this.#pending.reports.push({
          report: {
            ...accountReport,
            kind: "externalExecution",
            symbol: fault.symbol,
            side: fault.side,
            quantity: fault.quantity,
            price,
          },
          orderId: null,
        });
        break;
      }
      case "marginCall":
      case "patternDayTrader":
        account.faults.set(fault.kind, fault);
        this.#pending.reports.push({
          report: { ...accountReport, kind: "restricted", reason: fault.reason },
          orderId: null,
        });
        break;
      default:
        account.faults.set(fault.kind, fault);
    }
    this.#pending.faults.add(account);
    await this.#flush();
    return [...account.faults.keys()].sort();
  }

  /** The order a placement makes, or the one its key already made (here, in storage, or in this batch). */
  async #orderFor(request: BrokerOrderRequest, account: SimAccount | null): Promise<SimOrder> {
    const known = this.#byKey.get(request.idempotencyKey);
    if (known) return known;
    const arriving = this.#arriving.get(request.idempotencyKey);
    if (arriving) return arriving;
    const nowMs = this.clock.nowMs();
    const instrument = this.#instrument(request.symbol, request.symbolType);
    const refusal = this.#refusal(request, account, instrument);
    const delay = account?.faults.get("delay");
    const partial = account?.faults.get("partialFill");
    const id = `SIM-${randomUUID()}`;
    const order: SimOrder = {
      id,
      key: request.idempotencyKey,
      brokerOrderId: id,
      account: request.account,
      symbol: instrument?.fullSymbol ?? request.symbol,
      symbolType: request.symbolType,
      side: request.side,
      orderType: request.orderType,
      tif: request.tif,
      quantity: request.quantity,
      limit: request.limit,
      stop: request.stop,
      asCfd: request.asCfd,
      status: refusal === null ? "new" : "rejected",
      filled: ZERO,
      reason: refusal,
      partialFraction: partial?.kind === "partialFill" ? partial.fraction : null,
      heldUntil: delay?.kind === "delay" ? nowMs + delay.seconds * 1000 : null,
      expiresAt: request.tif === "day" && instrument ? dayOrderExpiry(scheduleOf(instrument), nowMs) : null,
      replacements: 0,
      createdAt: nowMs,
      updatedAt: nowMs,
    };
    const answer = new Promise<SimOrder>((resolve, reject) => this.#placeWaiters.set(order.key, { resolve, reject }));
    this.#arriving.set(order.key, answer);
    this.#pending.arriving.push(order);
    void this.#flush().catch(() => undefined);
    return answer;
  }

  /** Why the broker refuses an order at once, or null when it takes it. */
  #refusal(request: BrokerOrderRequest, account: SimAccount | null, instrument: Instrument | null): string | null {
    if (!account) return `The broker has no account ${request.account}`;
    if (!account.linked) return "The account is not linked";
    for (const kind of RESTRICTIONS) {
      const restriction = account.faults.get(kind);
      if (restriction && "reason" in restriction) return `The account is restricted: ${restriction.reason}`;
    }
    if (!instrument) return `Unknown symbol ${request.symbol}`;
    if (hasExpired(instrument, this.clock.nowMs())) return `${instrument.fullSymbol} has expired`;
    if (request.asCfd && instrument.symbolType !== "stock") return "Only stocks trade as CFDs";
    if (request.quantity <= ZERO) return "The quantity must be positive";
    if (request.orderType === "limit" && request.limit === null) return "A limit order needs a limit price";
    if (request.orderType === "stop" && request.stop === null) return "A stop order needs a stop price";
    const reject = account.faults.get("reject");
    if (reject?.kind === "reject") {
      if (reject.count <= 1) account.faults.delete("reject");
      else account.faults.set("reject", { ...reject, count: reject.count - 1 });
      this.#pending.faults.add(account);
      return reject.reason;
    }
    return null;
  }

  async #requested(ref: BrokerAccountRef, key: string): Promise<SimOrder> {
    const account = await this.#account(ref.account);
    if (account?.faults.has("disconnect")) throw new BrokerUnavailableError(ref.account);
    const arriving = this.#arriving.get(key);
    if (arriving) await arriving;
    let order = this.#byKey.get(key);
    if (!order) {
      const stored = await loadOrderByKey(this.storage.db, key);
      if (stored) {
        order = this.#byKey.get(key) ?? stored;
        this.#byKey.set(key, order);
      }
    }
    if (!order || order.account !== ref.account) {
      throw new Error(`The simulated broker has no order under key ${key} in account ${ref.account}`);
    }
    return order;
  }

  /** Releases held orders, expires DAY orders past their close and works every open order at its quote. */
  #work(nowMs: number): void {
    for (const order of [...this.#open.values()]) {
      const instrument = this.#instrument(order.symbol, order.symbolType);
      if ((order.expiresAt !== null && order.expiresAt <= nowMs) || (instrument && hasExpired(instrument, nowMs))) {
        this.#end(order, "expired", null, nowMs);
        this.#report(order, { kind: "expired" }, nowMs);
        continue;
      }
      if (order.status === "new") this.#acknowledge(order, nowMs);
      else this.#tryFill(order, null, nowMs);
    }
    for (const account of this.#accounts.values()) this.#settleExpired(account, nowMs);
  }

  /**
   * Settles the account's positions in contracts that have expired, as a
   * broker does (src/core/orders/contract-expiry.ts): an execution at the
   * settlement price, reported as such. One whose price is not known yet
   * waits for the next catch-up.
   */
  #settleExpired(account: SimAccount, nowMs: number): void {
    let view: MarketView | null = null;
    for (const [symbol, position] of account.positions) {
      if (isZero(position.quantity)) continue;
      const instrument = this.#instrument(symbol, position.symbolType);
      if (!instrument || !hasExpired(instrument, nowMs)) continue;
      view ??= marketViewAt(this.market, nowMs);
      const settlement = settlementOf(instrument, view);
      if (!settlement) continue;
      const quantity = position.quantity;
      const side = sign(quantity) > 0 ? "sell" : "buy";
      this.#execute(account, instrument, side, abs(quantity), settlement.price, randomUUID(), null, nowMs);
      this.#pending.reports.push({
        report: {
          brokerId: this.brokerId,
          account: account.account,
          atMs: nowMs,
          kind: "contractSettled",
          symbol,
          quantity,
          price: settlement.price,
        },
        orderId: null,
      });
    }
  }

  /** The broker takes a stored order (unless a delay holds it) and tries it against the market. */
  #acknowledge(order: SimOrder, nowMs: number): void {
    if (order.heldUntil !== null && nowMs < order.heldUntil) return;
    order.status = "working";
    this.#changed(order, nowMs);
    this.#report(order, { kind: "acknowledged" }, nowMs);
    this.#tryFill(order, null, nowMs);
  }

  /** Executes the order against the quote (the current one when none is given) if it crosses; whether it did. */
  #tryFill(order: SimOrder, given: MarketQuote | null, nowMs: number): boolean {
    if (order.status !== "working") return false;
    const instrument = this.#instrument(order.symbol, order.symbolType);
    if (!instrument || !sessionAt(scheduleOf(instrument), nowMs)) return false;
    const quote = given ?? this.market.quote(instrument);
    if (!quote) return false;
    const price = executionPrice(order, quote);
    if (price === null) return false;
    const account = this.#accounts.get(order.account);
    if (!account) return false;
    const quantity = executionQuantity(order.quantity, order.filled, order.partialFraction);
    const fillId = `${order.id}-F${order.filled.toString()}`;
    order.filled = add(order.filled, quantity);
    if (order.filled >= order.quantity) {
      order.status = "filled";
      this.#open.delete(order.id);
    }
    this.#changed(order, nowMs);
    this.#execute(account, instrument, order.side, quantity, price, fillId, order.id, nowMs);
    this.#report(order, { kind: "fill", fillId, quantity, price }, nowMs);
    return true;
  }

  /** An execution in the account: its position and cash move. */
  #execute(
    account: SimAccount,
    instrument: Instrument,
    side: "buy" | "sell",
    quantity: Decimal,
    price: Decimal,
    id: string,
    orderId: string | null,
    nowMs: number,
  ): void {
    const signed = side === "buy" ? quantity : neg(quantity);
    const symbol = instrument.fullSymbol;
    const position = account.positions.get(symbol) ?? { symbolType: instrument.symbolType, quantity: ZERO };
    position.quantity = add(position.quantity, signed);
    account.positions.set(symbol, position);
    account.cash = sub(account.cash, mul(mul(signed, price), instrument.multiplier));
    this.#pending.positions.set(`${account.account}\u0000${symbol}`, { account: account.account, symbol, position });
    this.#pending.accounts.add(account);
    this.#pending.executions.push({
      id,
      order_id: orderId,
      account: account.account,
      symbol,
      side,
      quantity: formatDecimal(quantity),
      price: formatDecimal(price),
      executed_at: nowMs,
    });
  }

  #end(order: SimOrder, status: "canceled" | "expired", reason: string | null, nowMs: number): void {
    order.status = status;
    order.reason = reason;
    this.#open.delete(order.id);
    this.#changed(order, nowMs);
  }

  #changed(order: SimOrder, nowMs: number): void {
    order.updatedAt = nowMs;
    this.#pending.changed.set(order.id, order);
  }

  /** Reports a change of the order (under the broker order id it had: a replace reports the one it ends). */
  #report(order: SimOrder, kind: OrderReportKind, nowMs: number, brokerOrderId = order.brokerOrderId): void {
    // One spread, after the literal's keys (docs/decisions.md, "Objects keep their hidden classes").
    const report = {
      brokerId: this.brokerId,
      account: order.account,
      idempotencyKey: order.key,
      brokerOrderId,
      atMs: nowMs,
      ...kind,
    };
    this.#pending.reports.push({ report, orderId: order.id });
  }

  #instrument(symbol: string, symbolType: string | null): Instrument | null {
    const key = `${symbol}\u0000${symbolType ?? ""}`;
    let instrument = this.#instruments.get(key);
    if (instrument === undefined) {
      instrument = fromServiceSymbol(symbol, symbolType ?? undefined);
      this.#instruments.set(key, instrument);
    }
    return instrument;
  }

  #touch(symbol: string, side: "buy" | "sell"): Decimal | null {
    const instrument = this.#instrument(symbol, null);
    const quote = instrument && this.market.quote(instrument);
    if (!quote) return null;
    return side === "buy" ? quote.ask : quote.bid;
  }

  #valueOf(account: SimAccount): AccountValue {
    let value = account.cash;
    for (const [symbol, position] of account.positions) {
      if (isZero(position.quantity)) continue;
      const instrument = this.#instrument(symbol, position.symbolType);
      const quote = instrument && this.market.quote(instrument);
      if (!instrument || !quote) continue;
      const mid = div(add(quote.bid, quote.ask), fromInteger(2));
      value = add(value, mul(mul(position.quantity, mid), instrument.multiplier));
    }
    return { netLiquidation: value, cash: account.cash, atMs: this.clock.nowMs() };
  }

  async #known(name: string): Promise<SimAccount> {
    const account = await this.#account(name);
    if (!account) throw new Error(`The simulated broker has no account ${name}`);
    return account;
  }

  /**
   * The account from memory, or read (the operator CLI opens accounts from
   * another process); placements arriving together for an account not yet
   * read share one read.
   */
  #account(name: string): Promise<SimAccount | null> {
    const known = this.#accounts.get(name);
    if (known) return Promise.resolve(known);
    let reading = this.#reading.get(name);
    if (!reading) {
      reading = loadAccount(this.storage.db, name)
        .then((loaded) => {
          if (loaded && !this.#accounts.has(name)) this.#accounts.set(name, loaded);
          return this.#accounts.get(name) ?? null;
        })
        .finally(() => this.#reading.delete(name));
      this.#reading.set(name, reading);
    }
    return reading;
  }

  /** Tells the first listener the story of every order whose last change no listener heard. */
  async #tellUntold(): Promise<void> {
    const orders = [...this.#untold];
    this.#untold.clear();
    if (orders.length === 0) return;
    const executions = await executionsOf(
      this.storage.db,
      orders.map((o) => o.id),
    );
    for (const order of orders) {
      const head = {
        brokerId: this.brokerId,
        account: order.account,
        idempotencyKey: order.key,
        brokerOrderId: order.brokerOrderId,
        atMs: order.updatedAt,
      };
      const story: BrokerReport[] = [];
      if (order.status !== "rejected" && order.status !== "new") story.push({ ...head, kind: "acknowledged" });
      for (const execution of executions.filter((e) => e.order_id === order.id)) {
        story.push({
          ...head,
          kind: "fill",
          fillId: execution.id,
          quantity: storedDecimal(execution.quantity),
          price: storedDecimal(execution.price),
          atMs: Number(execution.executed_at),
        });
      }
      if (order.status === "canceled") story.push({ ...head, kind: "canceled", reason: order.reason });
      if (order.status === "expired") story.push({ ...head, kind: "expired" });
      if (order.status === "rejected")
        story.push({ ...head, kind: "rejected", reason: order.reason ?? DEFAULT_REASONS.reject });
      for (const report of story) this.#pending.reports.push({ report, orderId: order.id });
    }
    for (const account of this.#accounts.values()) {
      const atMs = this.clock.nowMs();
      if (!account.linked) {
        this.#pending.reports.push({
          report: {
            brokerId: this.brokerId,
            account: account.account,
            atMs,
            kind: "delinked",
            reason: DEFAULT_REASONS.delink,
          },
          orderId: null,
        });
      }
      for (const kind of RESTRICTIONS) {
        const restriction = account.faults.get(kind);
        if (restriction && "reason" in restriction) {
          this.#pending.reports.push({
            report: {
              brokerId: this.brokerId,
              account: account.account,
              atMs,
              kind: "restricted",
              reason: restriction.reason,
            },
            orderId: null,
          });
        }
      }
    }
    await this.#flush();
  }

  /**
   * Writes what is pending in one batch after the current one (placements
   * made in the same turn share it), then hands its reports to the listeners.
   */
  #flush(): Promise<void> {
    if (this.#queued) return this.#queued;
    const queued = this.#settling
      .catch(() => undefined)
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        this.#queued = null;
        return this.#writePending();
      });
    this.#queued = queued;
    this.#settling = queued;
    return queued;
  }

  async #writePending(): Promise<void> {
    const batch = this.#pending;
    this.#pending = emptyPending();
    const empty =
      batch.arriving.length === 0 &&
      batch.changed.size === 0 &&
      batch.reported.size === 0 &&
      batch.executions.length === 0 &&
      batch.accounts.size === 0 &&
      batch.faults.size === 0 &&
      batch.reports.length === 0;
    if (empty) return;
    let taken: Map<string, SimOrder>;
    const nowMs = this.clock.nowMs();
    try {
      taken = await writeBatch(
        this.storage,
        {
          arriving: batch.arriving,
          changed: [...batch.changed.values()],
          // A row rewritten in this batch has new reports of its own, not yet told.
          reported: [...batch.reported].filter((id) => !batch.changed.has(id)),
          executions: batch.executions,
          accounts: [...batch.accounts],
          positions: [...batch.positions.values()],
          faults: [...batch.faults],
        },
        nowMs,
      );
    } catch (error) {
      this.logger.error({ err: error }, "writing the simulated broker's books failed");
      // Placements fail (the service retries them under their keys); the other changes wait for the next batch.
      for (const order of batch.arriving) {
        this.#arriving.delete(order.key);
        this.#placeWaiters.get(order.key)?.reject(error);
        this.#placeWaiters.delete(order.key);
      }
      this.#requeue(batch);
      throw error;
    }
    const started: SimOrder[] = [];
    for (const arrived of batch.arriving) {
      const order = taken.get(arrived.key) ?? arrived;
      this.#arriving.delete(arrived.key);
      this.#byKey.set(order.key, order);
      if (order === arrived && order.status === "new") {
        this.#open.set(order.id, order);
        started.push(order);
      } else if (isOpen(order) && !this.#open.has(order.id)) {
        this.#open.set(order.id, order);
      }
      this.#placeWaiters.get(arrived.key)?.resolve(order);
      this.#placeWaiters.delete(arrived.key);
    }
    this.#tell(batch);
    for (const order of started) this.#acknowledge(order, this.clock.nowMs());
    if (!this.#pendingEmpty()) void this.#flush().catch(() => undefined);
  }

  #tell(batch: Pending): void {
    if (this.#listeners.length === 0) {
      for (const { orderId } of batch.reports) {
        const order = orderId === null ? undefined : this.#orderById(orderId, batch);
        if (order) this.#untold.add(order);
      }
      return;
    }
    for (const { report, orderId } of batch.reports) {
      for (const listener of this.#listeners) {
        try {
          listener(report);
        } catch (error) {
          this.logger.error({ err: error }, "a broker report listener failed");
        }
      }
      if (orderId !== null) this.#pending.reported.add(orderId);
    }
  }

  #orderById(id: string, batch: Pending): SimOrder | undefined {
    return batch.changed.get(id) ?? this.#open.get(id);
  }

  #requeue(batch: Pending): void {
    const next = this.#pending;
    for (const [id, order] of batch.changed) if (!next.changed.has(id)) next.changed.set(id, order);
    for (const id of batch.reported) next.reported.add(id);
    next.executions.unshift(...batch.executions);
    for (const account of batch.accounts) next.accounts.add(account);
    for (const [key, position] of batch.positions) if (!next.positions.has(key)) next.positions.set(key, position);
    for (const account of batch.faults) next.faults.add(account);
    next.reports.unshift(...batch.reports);
  }

  #pendingEmpty(): boolean {
    const p = this.#pending;
    return (
      p.arriving.length === 0 &&
      p.changed.size === 0 &&
      p.executions.length === 0 &&
      p.accounts.size === 0 &&
      p.faults.size === 0 &&
      p.reports.length === 0
    );
  }
}
