import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { AccountEventKind } from "../../core/autotrade/account-events.js";
import { autoStopPrice } from "../../core/autotrade/auto-stop.js";
import { BROKER_TERMINAL, type BrokerOrderEvent, brokerTransition } from "../../core/autotrade/broker-order.js";
import { tradesAsCfd } from "../../core/autotrade/settings.js";
import type { ControllableClock } from "../../core/clock.js";
import {
  abs,
  add,
  compare,
  type Decimal,
  formatDecimal,
  isZero,
  mul,
  ONE,
  sign,
  storedDecimal,
  sub,
  ZERO,
} from "../../core/decimal.js";
import type { OrderStatus } from "../../core/orders/status.js";
import { applyFill, FLAT } from "../../core/positions.js";
import { accountApprovals } from "../../services/account-approval.js";
import type { SetupListener } from "../../services/runtime.js";
import { givesAccess, liveKeyOf } from "../../services/subscription-rows.js";
import type { NewAccountOrder } from "../../store/journal/batch.js";
import type { Storage } from "../../store/storage.js";
import { instrumentOf } from "../../store/trading-state.js";
import { transaction } from "../../store/transaction.js";
import type { AccountReport, BrokerPort, BrokerReport, OrderReport } from "../brokers/port.js";
import { type DeskWrites, isEmptyDeskWrites, noDeskWrites, writeDesk } from "./desk-writes.js";
import {
  type FollowedSetup,
  type FollowerAccount,
  flatKey,
  type HeldOrder,
  positionKey,
  readFollowerAccounts,
  setupOfRow,
} from "./followers.js";

/**
 * The autotrade desk: the one writer of brokerage accounts in this process.
 * It holds every account with a live setup in memory (setups, open account
 * orders, what each setup holds), sends account orders to the broker once
 * their creation is durable (so a retry, a restart or a second process sends
 * the same idempotency key and the broker makes one order), applies the
 * broker's reports through the broker-order state machine, follows the
 * strategy to flat, applies requested stops, and disables autotrade or
 * AutoSync when the broker says so (API.md States). Its changes are written
 * in batches, one transaction each.
 */
export interface BrokerPorts {
  get(brokerId: number): BrokerPort | undefined;
  all(): readonly BrokerPort[];
}

export interface Follower {
  readonly account: FollowerAccount;
  readonly setup: FollowedSetup;
}

/** Told when copies of an account are stored held for its customer's confirmation. */
export type HeldListener = (accountId: number, rows: readonly NewAccountOrder[]) => Promise<void>;

/** Setups read per statement. */
const READ_CHUNK = 500;

/** Strategy order statuses after which it never fills. */
const STRATEGY_ORDER_ENDED: ReadonlySet<string> = new Set(["Canceled", "Expired", "Replaced", "Rejected"]);

/** How often unsent orders are tried again and requested stops applied (real time). */
const PASS_MS = 5_000;

export class AutotradeDesk implements SetupListener {
  readonly #accounts = new Map<number, FollowerAccount>();
  /** Accounts by broker and the broker's name for them (reports name them so). */
  readonly #byBrokerAccount = new Map<string, FollowerAccount>();
  /** Accounts following each strategy. */
  readonly #byStrategy = new Map<number, Set<number>>();
  /** Open account orders copying each strategy order, by the strategy order's id. */
  readonly #bySource = new Map<number, Map<string, number>>();
  /** Each account's placements, one after another (the broker sees an account's orders in order). */
  readonly #sending = new Map<number, Promise<void>>();
  #writes: DeskWrites = noDeskWrites();
  #flushing: Promise<void> | null = null;
  #scheduled = false;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  /** Setups to read again, and the read under way. */
  readonly #stale = new Set<number>();
  #reading: Promise<void> | null = null;
  private readonly passMs: number;
  private readonly onHeld: HeldListener | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Pick<ControllableClock, "nowMs">,
    private readonly ports: BrokerPorts,
    private readonly logger: Logger,
    options: { readonly passMs?: number; readonly onHeld?: HeldListener } = {},
  ) {
    this.passMs = options.passMs ?? PASS_MS;
    this.onHeld = options.onHeld;
    for (const port of ports.all()) port.onReport((report) => this.#onReport(report));
  }

  /** Reads every account with a live setup, then sends what waits to be sent. */
  async start(): Promise<void> {
    for (const account of await readFollowerAccounts(this.storage.db)) this.#install(account);
    await this.run();
    if (this.passMs > 0) {
      this.#timer = setInterval(() => {
        void this.run().catch((error: unknown) => this.logger.error({ err: error }, "autotrade pass failed"));
      }, this.passMs);
      this.#timer.unref();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.settled();
  }

  /** Resolves once nothing waits to be written and no placement is with the broker. */
  async settled(): Promise<void> {
    for (;;) {
      await this.#reading;
      await Promise.all(this.#sending.values());
      await this.#flushing;
      if (!isEmptyDeskWrites(this.#writes)) {
        this.#schedule();
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      if (this.#flushing === null && this.#reading === null) return;
    }
  }

  /**
   * One pass: setups read again where told, requested stops applied, and
   * orders the broker has not taken (a failure, a restart) sent again.
   */
  async run(): Promise<void> {
    await this.#refresh();
    await this.#readApprovals([...this.#accounts.keys()]);
    await this.#stopLapsed();
    await this.#reconcileVirtualCopies();
    for (const account of this.#accounts.values()) this.#applyStops(account);
    for (const account of this.#accounts.values()) {
      for (const held of account.orders.values()) if (held.row.sent_at === null) this.#send(account, held);
      // A close the broker refused (or canceled) is made again, once a pass: never in a loop on a refusal.
      for (const key of account.flatWanted) {
        const [setupId, symbol] = key.split("|") as [string, string];
        const setup = account.setups.get(Number(setupId));
        if (setup) this.#closeUncovered(account, setup.id, setup.strategyId, symbol);
      }
    }
    this.#schedule();
    await this.settled();
  }

  setupsChanged(setupIds: readonly number[]): Promise<void> {
    for (const id of setupIds) this.#stale.add(id);
    return this.#refresh().catch((error: unknown) => this.logger.error({ err: error }, "reading setups failed"));
  }

  /** The enabled setups following a strategy, in linked accounts. */
  *followersOf(strategyId: number): Iterable<Follower> {
    for (const accountId of this.#byStrategy.get(strategyId) ?? []) {
      const account = this.#accounts.get(accountId);
      if (!account?.linked) continue;
      for (const setup of account.setups.values()) {
        if (setup.strategyId === strategyId && setup.status === "active" && setup.enabled) yield { account, setup };
      }
    }
  }

  /** Accounts following a strategy with a stop requested: the copier's visit applies it. */
  visit(strategyId: number): void {
    for (const accountId of this.#byStrategy.get(strategyId) ?? []) {
      const account = this.#accounts.get(accountId);
      if (account) this.#applyStops(account);
    }
    this.#schedule();
  }

  /** The account as the desk holds it (AutoSync reads its holdings and working orders). */
  accountOf(accountId: number): FollowerAccount | undefined {
    return this.#accounts.get(accountId);
  }

  /** Every account the desk holds. */
  heldAccounts(): Iterable<FollowerAccount> {
    return this.#accounts.values();
  }

  hasOrder(account: FollowerAccount, key: string): boolean {
    return account.orders.has(key);
  }

  /** What the setup holds in the symbol (signed). */
  heldBy(account: FollowerAccount, strategyId: number, symbol: string): Decimal {
    return account.positions.get(positionKey(strategyId, symbol))?.position.quantity ?? ZERO;
  }

  /** The signed quantity the setup's open orders in the symbol would still add (by open or close). */
  openQuantity(account: FollowerAccount, setupId: number, symbol: string, openClose: "open" | "close"): Decimal {
    let total = ZERO;
    for (const { row } of account.orders.ofSetup(setupId, symbol)) {
      // The automatic stop loss rests beside the strategy's exits: it covers nothing they must close.
      if (row.open_close !== openClose || row.purpose === "auto_stop") continue;
      const leaves = sub(storedDecimal(row.quantity), storedDecimal(row.filled_quantity));
      total = add(total, row.side === "buy" ? leaves : sub(ZERO, leaves));
    }
    return total;
  }

  /** Orders the copier (or AutoSync) made, waiting for their batch: held here at once, so later copies see them. */
  adopt(rows: readonly NewAccountOrder[]): void {
    for (const row of rows) {
      const account = this.#accounts.get(row.account_id);
      if (!account) continue;
      account.orders.set(row.idempotency_key, { row, stored: false, asking: false, fillIds: new Set() });
      this.#indexSource(row);
    }
  }

  /** The copier's (or AutoSync's) orders are durable: they go to the broker, or wait for the customer's confirmation. */
  stored(rows: readonly NewAccountOrder[]): void {
    const awaiting = new Map<number, NewAccountOrder[]>();
    for (const row of rows) {
      const account = this.#accounts.get(row.account_id);
      const held = account?.orders.get(row.idempotency_key);
      if (!account || !held) continue;
      held.stored = true;
      // The copy moved while its batch committed (a cancel, a virtual limit released): storage catches up.
      if (held.row !== row) this.#moved(held.row);
      if (held.row.awaiting_confirmation === 1 && held.row.status === "PendingNew") {
        awaiting.set(account.id, [...(awaiting.get(account.id) ?? []), held.row]);
      }
      // A stop applied meanwhile canceled it before it was sent.
      if (held.row.status === "Canceled") {
        account.orders.delete(row.idempotency_key);
        continue;
      }
      this.#send(account, held);
    }
    this.#schedule();
    for (const [accountId, held] of awaiting) this.#tellHeld(accountId, held);
  }

  /** The customer is told of copies held for them; a failure to tell is logged, the copies stay held. */
  #tellHeld(accountId: number, rows: readonly NewAccountOrder[]): void {
    if (!this.onHeld) return;
    this.onHeld(accountId, rows).catch((error: unknown) =>
      this.logger.error({ err: error, accountId }, "telling the customer of held copies failed"),
    );
  }

  /** The copier's batch (or AutoSync's) did not commit: its orders are forgotten. */
  forget(rows: readonly NewAccountOrder[]): void {
    for (const row of rows) {
      const account = this.#accounts.get(row.account_id);
      const held = account?.orders.get(row.idempotency_key);
      if (account && held && !held.stored) account.orders.delete(row.idempotency_key);
      this.#bySource.get(row.source_order_id ?? -1)?.delete(row.idempotency_key);
    }
  }

  /** The account's copies held for the customer's confirmation, oldest first. */
  heldForConfirmation(accountId: number): NewAccountOrder[] {
    const account = this.#accounts.get(accountId);
    if (!account) return [];
    return [...account.orders.values()]
      .filter((held) => held.stored && held.row.awaiting_confirmation === 1 && held.row.status === "PendingNew")
      .map((held) => held.row);
  }

  /**
   * The customer confirmed (true) or discarded (false) a copy held for
   * confirmation: it goes to the broker, or ends canceled. Answers false when
   * the account holds no such copy (sent, ended, or never held).
   */
  decide(accountId: number, key: string, confirmed: boolean): boolean {
    const account = this.#accounts.get(accountId);
    const held = account?.orders.get(key);
    if (!account || !held?.stored || held.row.awaiting_confirmation !== 1 || held.row.status !== "PendingNew")
      return false;
    held.row = { ...held.row, awaiting_confirmation: 0, reason: null, updated_at: this.clock.nowMs() };
    if (confirmed) {
      this.#moved(held.row);
      this.#send(account, held);
    } else {
      this.#apply(account, held, "canceled", "Discarded by the customer");
    }
    this.#schedule();
    return true;
  }

  /**
   * The strategy's order filled (the market reached its limit): its virtual
   * limit copies go to the broker as market orders for their whole quantity,
   * as the original service turns its followers' limits into market orders
   * once a limit price is hit, keeping every follower in step with the strategy.
   */
  releaseVirtualCopies(sourceOrderId: number): void {
    const keys = this.#bySource.get(sourceOrderId);
    if (!keys) return;
    for (const [key, accountId] of keys) {
      const account = this.#accounts.get(accountId);
      const held = account?.orders.get(key);
      if (!account || !held || held.row.virtual_limit !== 1 || held.row.status !== "PendingNew") continue;
      held.row = {
        ...held.row,
        virtual_limit: 0,
        order_type: "market",
        limit_price: null,
        reason: `The strategy's limit ${held.row.limit_price} was reached: sent at market`,
        updated_at: this.clock.nowMs(),
      };
      // A copy still waiting for its batch is written and sent when stored.
      if (!held.stored) continue;
      this.#moved(held.row);
      this.#send(account, held);
    }
    this.#schedule();
  }

  /**
   * The account as the desk holds it, once the setups told changed are read.
   * An account it does not hold (no live setup when it was read) is read now
   * and held from then on, so the reports of its orders are heard.
   */
  async account(accountId: number): Promise<FollowerAccount | undefined> {
    await this.#refresh();
    if (!this.#accounts.has(accountId)) {
      for (const read of await readFollowerAccounts(this.storage.db, [accountId]))
        if (!this.#accounts.has(read.id)) this.#install(read);
    }
    return this.#accounts.get(accountId);
  }

  /** Resolves once the account's calls to its broker are answered and what they changed is written. */
  async accountSettled(accountId: number): Promise<void> {
    for (let sending = this.#sending.get(accountId); sending; sending = this.#sending.get(accountId)) await sending;
    await this.#flushing;
    if (isEmptyDeskWrites(this.#writes)) return;
    this.#schedule();
    await new Promise((resolve) => setImmediate(resolve));
    await this.#flushing;
  }

  /** Asks the broker to cancel an open order of the account (the customer's cancel); undefined when none is open. */
  cancelOrder(accountId: number, key: string, reason: string): HeldOrder | undefined {
    const account = this.#accounts.get(accountId);
    const held = account?.orders.get(key);
    if (!account || !held) return undefined;
    this.#cancel(account, held, reason);
    this.#schedule();
    return held;
  }

  /**
   * Asks the broker for a new price of an open order of the account (its
   * limit or its stop): PendingReplace until the broker answers; a broker
   * not reached refuses it, and the order works on at its old price.
   */
  replaceOrder(
    accountId: number,
    key: string,
    price: { limit: Decimal | null; stop: Decimal | null },
  ): HeldOrder | undefined {
    const account = this.#accounts.get(accountId);
    const held = account?.orders.get(key);
    if (!account || !held || !this.#apply(account, held, "replaceRequested", null)) return held;
    const port = this.ports.get(account.brokerId);
    this.#queue(account, async () => {
      try {
        if (!port) throw new Error(`No adapter for broker ${account.brokerId}`);
        await port.replace({ brokerId: account.brokerId, account: account.account }, key, price);
      } catch (error) {
        this.logger.warn({ err: error, key }, "replace did not reach the broker");
        this.#apply(account, held, "replaceRejected", "The broker could not be reached");
      }
    });
    return held;
  }

  /**
   * Resets a paper account at its broker, after the account's earlier calls
   * to it: the broker cancels the orders it holds (its reports end them
   * here), those it never got end here, the holdings are cleared and the
   * account is worth its starting cash. Rejects, changing nothing, when the
   * broker did not reset it.
   */
  resetPaper(accountId: number, startingCash: Decimal, reason: string): Promise<void> {
    const account = this.#accounts.get(accountId);
    const port = account && this.ports.get(account.brokerId);
    if (!account || !port) return Promise.reject(new Error(`No broker adapter holds account ${accountId}`));
    return new Promise((resolve, reject) => {
      this.#queue(account, async () => {
        try {
          await port.resetPaperAccount({ brokerId: account.brokerId, account: account.account }, startingCash);
        } catch (error) {
          reject(error);
          return;
        }
        for (const held of [...account.orders.values()])
          if (held.row.sent_at === null && !held.asking) this.#apply(account, held, "canceled", reason);
        for (const [key, held] of account.positions)
          this.#writes.positions.set(`${account.id}|${key}`, {
            accountId: account.id,
            held: { ...held, position: FLAT },
          });
        account.positions.clear();
        account.flatWanted.clear();
        account.value = startingCash;
        this.#writes.accounts.set(account.id, {
          ...this.#writes.accounts.get(account.id),
          value: { netLiquidation: formatDecimal(startingCash), atMs: this.clock.nowMs() },
        });
        this.#schedule();
        resolve();
      });
    });
  }

  /** The strategy order ended (canceled, expired, replaced): its open copies are canceled. */
  cancelCopiesOf(sourceOrderId: number, reason: string): void {
    const keys = this.#bySource.get(sourceOrderId);
    if (!keys) return;
    this.#bySource.delete(sourceOrderId);
    for (const [key, accountId] of keys) {
      const account = this.#accounts.get(accountId);
      const held = account?.orders.get(key);
      if (account && held) this.#cancel(account, held, reason);
    }
    this.#schedule();
  }

  /**
   * The strategy went flat in a symbol: each follower goes flat too. Its open
   * opening orders there are canceled, and what it holds beyond what its open
   * closing orders cover is closed (now, and whenever a late fill leaves
   * something behind), until the strategy opens the symbol again.
   */
  followFlat(strategyId: number, symbol: string): void {
    for (const { account, setup } of this.followersOf(strategyId)) {
      account.flatWanted.add(flatKey(setup.id, symbol));
      for (const held of [...account.orders.ofSetup(setup.id, symbol)]) {
        if (held.row.open_close === "open") this.#cancel(account, held, "The strategy closed its position");
      }
      this.#closeUncovered(account, setup.id, strategyId, symbol);
    }
    this.#schedule();
  }

  /**
   * The setup opened the symbol again (a fill of an opening order, or
   * AutoSync's): it no longer follows the strategy to flat there. Copying an
   * opening order does not end it: a copy that rests, is refused or canceled
   * unfilled would leave what a refused close left behind held for good.
   */
  opened(account: FollowerAccount, setupId: number, symbol: string): void {
    account.flatWanted.delete(flatKey(setupId, symbol));
  }

  /** The strategy filled into a position in the symbol: its followers no longer follow it to flat there. */
  strategyOpened(strategyId: number, symbol: string): void {
    for (const { account, setup } of this.followersOf(strategyId)) this.opened(account, setup.id, symbol);
  }

  #install(account: FollowerAccount): void {
    this.#accounts.set(account.id, account);
    this.#byBrokerAccount.set(`${account.brokerId}:${account.account}`, account);
    for (const setup of account.setups.values()) this.#follow(setup);
    for (const held of account.orders.values()) this.#indexSource(held.row);
  }

  #follow(setup: FollowedSetup): void {
    let followers = this.#byStrategy.get(setup.strategyId);
    if (!followers) {
      followers = new Set();
      this.#byStrategy.set(setup.strategyId, followers);
    }
    followers.add(setup.accountId);
  }

  #indexSource(row: NewAccountOrder): void {
    if (row.source_order_id === null) return;
    let keys = this.#bySource.get(row.source_order_id);
    if (!keys) {
      keys = new Map();
      this.#bySource.set(row.source_order_id, keys);
    }
    keys.set(row.idempotency_key, row.account_id);
  }

  /** Reads the setups told changed (and their accounts when new here). */
  async #refresh(): Promise<void> {
    while (this.#reading) await this.#reading;
    if (this.#stale.size === 0) return;
    const ids = [...this.#stale];
    this.#stale.clear();
    this.#reading = (async () => {
      const rows = await this.storage.db.selectFrom("autotrade_setups").selectAll().where("id", "in", ids).execute();
      const unknown = [...new Set(rows.map((r) => r.account_id))].filter((id) => !this.#accounts.has(id));
      for (const account of await readFollowerAccounts(this.storage.db, unknown)) this.#install(account);
      for (const row of rows) {
        const account = this.#accounts.get(row.account_id);
        if (!account) continue;
        if (row.status === "stopped") {
          account.setups.delete(row.id);
          continue;
        }
        const setup = setupOfRow(row);
        account.setups.set(setup.id, setup);
        this.#follow(setup);
      }
      await this.#readApprovals([...new Set(rows.map((row) => row.account_id))]);
    })().finally(() => {
      this.#reading = null;
    });
    await this.#reading;
  }

  /**
   * Reads the accounts' approval by their geo-site again: an approval granted
   * or deleted (the setups are told changed), or a geo-site's requirement
   * switched by the operator (read on each pass).
   */
  async #readApprovals(accountIds: readonly number[]): Promise<void> {
    if (accountIds.length === 0) return;
    for (const [accountId, approval] of await accountApprovals(this.storage.db, accountIds)) {
      const account = this.#accounts.get(accountId);
      if (account) account.approval = approval;
    }
  }

  /**
   * Setups whose person no longer follows the strategy (a subscription that
   * ran to the end of its term, or lapsed unpaid) are stopped, positions left
   * open: the service may no longer trade them, and the customer did not say
   * to close them. The owner's own setups need no subscription.
   */
  async #stopLapsed(): Promise<void> {
    const setups = [...this.#accounts.values()].flatMap((account) =>
      [...account.setups.values()].filter((setup) => setup.status === "active"),
    );
    if (setups.length === 0) return;
    const nowMs = this.clock.nowMs();
    const db = this.storage.db;
    const owners = new Map<number, number>();
    const access = new Map<string, boolean>();
    for (let first = 0; first < setups.length; first += READ_CHUNK) {
      const chunk = setups.slice(first, first + READ_CHUNK);
      const strategies = await db
        .selectFrom("strategies")
        .select(["id", "owner_person_id"])
        .where("id", "in", [...new Set(chunk.map((s) => s.strategyId))])
        .execute();
      for (const row of strategies) owners.set(row.id, row.owner_person_id);
      const keys = chunk
        .filter((s) => owners.get(s.strategyId) !== s.personId)
        .map((s) => liveKeyOf(s.personId, s.strategyId));
      if (keys.length === 0) continue;
      const live = await db
        .selectFrom("subscriptions")
        .select(["live_key", "kind", "ended_at", "paid_until"])
        .where("live_key", "in", keys)
        .execute();
      for (const row of live) if (row.live_key !== null) access.set(row.live_key, givesAccess(row, nowMs));
    }
    for (const setup of setups) {
      if (owners.get(setup.strategyId) === setup.personId) continue;
      if (access.get(liveKeyOf(setup.personId, setup.strategyId)) === true) continue;
      const account = this.#accounts.get(setup.accountId);
      account?.setups.set(setup.id, {
        ...setup,
        status: "stop_requested",
        stopLeavesPositionsOpen: true,
        stopTerminatesSubscription: false,
      });
    }
  }

  /**
   * Virtual limit copies whose strategy order filled or ended while no one
   * heard it (the copier's events were consumed before a crash left the
   * release in memory) are released or canceled from what storage says.
   */
  async #reconcileVirtualCopies(): Promise<void> {
    const waiting = new Set<number>();
    for (const account of this.#accounts.values())
      for (const { row } of account.orders.values())
        if (row.virtual_limit === 1 && row.source_order_id !== null && row.status === "PendingNew")
          waiting.add(row.source_order_id);
    if (waiting.size === 0) return;
    const ids = [...waiting];
    for (let first = 0; first < ids.length; first += READ_CHUNK) {
      const sources = await this.storage.db
        .selectFrom("orders")
        .select(["id", "status", "filled_quantity"])
        .where("id", "in", ids.slice(first, first + READ_CHUNK))
        .execute();
      for (const source of sources) {
        if (sign(storedDecimal(source.filled_quantity)) > 0) this.releaseVirtualCopies(source.id);
        else if (STRATEGY_ORDER_ENDED.has(source.status))
          this.cancelCopiesOf(source.id, `The strategy order was ${source.status.toLowerCase()}`);
      }
    }
  }

  /** Applies the account's requested stops: open orders canceled, positions closed unless left open. */
  #applyStops(account: FollowerAccount): void {
    for (const setup of [...account.setups.values()]) {
      if (setup.status !== "stop_requested") continue;
      for (const held of [...account.orders.values()])
        if (held.row.setup_id === setup.id) this.#cancel(account, held, "Autotrade stopped");
      if (!setup.stopLeavesPositionsOpen) {
        for (const position of account.positions.values()) {
          if (position.strategyId !== setup.strategyId || isZero(position.position.quantity)) continue;
          this.#makeClose(
            account,
            setup.id,
            setup.strategyId,
            position.symbol,
            position.symbolType,
            position.position.quantity,
          );
        }
      }
      account.setups.delete(setup.id);
      this.#writes.setups.set(setup.id, { ...this.#writes.setups.get(setup.id), status: "stopped" });
      if (setup.stopTerminatesSubscription)
        this.#writes.endSubscriptions.push({ personId: setup.personId, strategyId: setup.strategyId });
    }
  }

  /** Closes what the setup holds in the symbol beyond what its open closing orders cover. */
  #closeUncovered(account: FollowerAccount, setupId: number, strategyId: number, symbol: string): void {
    const held = this.heldBy(account, strategyId, symbol);
    if (isZero(held)) return;
    const closing = this.openQuantity(account, setupId, symbol, "close");
    // Closing orders cover a long holding by selling (negative), a short one by buying.
    const uncovered = add(held, closing);
    if (isZero(uncovered) || sign(uncovered) !== sign(held)) return;
    const position = account.positions.get(positionKey(strategyId, symbol));
    this.#makeClose(account, setupId, strategyId, symbol, position?.symbolType ?? "stock", uncovered);
  }

  /** Makes a market order closing `held` (signed) of the setup's holding; sent once it is written. */
  #makeClose(
    account: FollowerAccount,
    setupId: number,
    strategyId: number,
    symbol: string,
    symbolType: string,
    held: Decimal,
  ): void {
    this.#makeOrder(account, { setupId, strategyId, symbol, symbolType, held, purpose: "close", stop: null });
  }

  /** Makes an order closing `held` (signed): at market, or a stop (the automatic stop loss). */
  #makeOrder(
    account: FollowerAccount,
    order: {
      readonly setupId: number;
      readonly strategyId: number;
      readonly symbol: string;
      readonly symbolType: string;
      readonly held: Decimal;
      readonly purpose: "close" | "auto_stop";
      readonly stop: Decimal | null;
    },
  ): void {
    // A setup's holding keeps one form: TradeStocksAsCFD changes only while it holds no stock.
    const settings = account.setups.get(order.setupId)?.settings;
    const now = this.clock.nowMs();
    const row: NewAccountOrder = {
      account_id: account.id,
      setup_id: order.setupId,
      strategy_id: order.strategyId,
      source_order_id: null,
      purpose: order.purpose,
      symbol: order.symbol,
      symbol_type: order.symbolType,
      side: sign(order.held) > 0 ? "sell" : "buy",
      open_close: "close",
      order_type: order.stop === null ? "market" : "stop",
      tif: order.stop === null ? "day" : "gtc",
      quantity: formatDecimal(abs(order.held)),
      limit_price: null,
      stop_price: order.stop === null ? null : formatDecimal(order.stop),
      status: "PendingNew",
      prior_status: null,
      awaiting_confirmation: 0,
      virtual_limit: 0,
      as_cfd: settings && tradesAsCfd(order.symbolType, settings) ? 1 : 0,
      filled_quantity: "0",
      filled_notional: "0",
      idempotency_key: `${order.purpose}:${account.id}:${randomUUID()}`,
      broker_order_id: null,
      replaces_id: null,
      reason: null,
      created_at: now,
      updated_at: now,
      sent_at: null,
      closed_at: null,
    };
    account.orders.set(row.idempotency_key, { row, stored: false, asking: false, fillIds: new Set() });
    this.#writes.made.set(row.idempotency_key, row);
  }

  /**
   * Keeps the setup's automatic stop loss in the symbol resting for the whole
   * holding at its price: a holding that moved gets a new stop in place of
   * the old; a flat one none.
   */
  #restStop(account: FollowerAccount, setupId: number, strategyId: number, symbol: string, symbolType: string): void {
    const dollars = account.setups.get(setupId)?.settings.autoStopLossDollars ?? null;
    const stops = [...account.orders.ofSetup(setupId, symbol)].filter(
      ({ row }) => row.purpose === "auto_stop" && row.status !== "PendingCancel",
    );
    const position = account.positions.get(positionKey(strategyId, symbol))?.position;
    const price =
      dollars === null || !position ? null : autoStopPrice(position, dollars, instrumentOf(symbol, symbolType));
    const wanted =
      price === null || !position
        ? null
        : { quantity: formatDecimal(abs(position.quantity)), stop: formatDecimal(price) };
    const [kept, ...others] = stops;
    if (
      wanted &&
      kept &&
      others.length === 0 &&
      kept.row.quantity === wanted.quantity &&
      kept.row.stop_price === wanted.stop
    )
      return;
    for (const stop of stops) this.#cancel(account, stop, "The holding it protected changed");
    if (wanted && position && price)
      this.#makeOrder(account, {
        setupId,
        strategyId,
        symbol,
        symbolType,
        held: position.quantity,
        purpose: "auto_stop",
        stop: price,
      });
  }

  /** Cancels an open order: at the broker when it holds it, here when it was never sent. */
  #cancel(account: FollowerAccount, held: HeldOrder, reason: string): void {
    const { row } = held;
    if (row.status === "PendingCancel") return;
    if (row.sent_at === null && !held.asking) {
      // Never sent: it ends here (a copy still waiting for its batch is dropped when stored).
      this.#apply(account, held, "canceled", reason);
      return;
    }
    if (!this.#apply(account, held, "cancelRequested", null)) return;
    held.cancelReason = reason;
    const port = this.ports.get(account.brokerId);
    if (!port) return;
    this.#queue(account, async () => {
      try {
        await port.cancel({ brokerId: account.brokerId, account: account.account }, row.idempotency_key);
      } catch (error) {
        // The broker was not reached: the cancel is refused for now; the order works as before.
        this.logger.warn({ err: error, key: row.idempotency_key }, "cancel did not reach the broker");
        this.#apply(account, held, "cancelRejected", "The broker could not be reached");
      }
    });
  }

  /** Sends an order to its broker, after the account's earlier placements. */
  #send(account: FollowerAccount, held: HeldOrder): void {
    const { row: waiting } = held;
    if (held.asking || !held.stored || waiting.status !== "PendingNew") return;
    if (waiting.awaiting_confirmation === 1 || waiting.virtual_limit === 1) return;
    const port = this.ports.get(account.brokerId);
    if (!port) return;
    held.asking = true;
    const { row } = held;
    this.#queue(account, async () => {
      try {
        const answer = await port.place({
          brokerId: account.brokerId,
          account: account.account,
          idempotencyKey: row.idempotency_key,
          symbol: row.symbol,
          symbolType: row.symbol_type as "stock",
          side: row.side,
          orderType: row.order_type,
          tif: row.tif,
          quantity: storedDecimal(row.quantity),
          limit: row.limit_price === null ? null : storedDecimal(row.limit_price),
          stop: row.stop_price === null ? null : storedDecimal(row.stop_price),
          asCfd: row.as_cfd === 1,
        });
        held.asking = false;
        if (answer.ok) {
          held.row = { ...held.row, broker_order_id: answer.brokerOrderId, sent_at: this.clock.nowMs() };
          this.#moved(held.row);
        } else {
          // The broker refused it: the order ends rejected with the broker's reason, nothing else applied.
          this.#apply(account, held, "rejected", answer.reason);
        }
      } catch (error) {
        // Not reached: it stays unsent, and the next pass sends it again under the same key.
        held.asking = false;
        this.logger.warn({ err: error, key: row.idempotency_key }, "placing an account order did not reach the broker");
      }
      this.#schedule();
    });
  }

  #queue(account: FollowerAccount, work: () => Promise<void>): void {
    const before = this.#sending.get(account.id) ?? Promise.resolve();
    const next = before.then(work).finally(() => {
      if (this.#sending.get(account.id) === next) this.#sending.delete(account.id);
    });
    this.#sending.set(account.id, next);
  }

  /** Moves an order by a broker-order event; answers whether it moved. */
  #apply(account: FollowerAccount, held: HeldOrder, event: BrokerOrderEvent, reason: string | null): boolean {
    const { row } = held;
    const moved = brokerTransition(
      { status: row.status as OrderStatus, prior: row.prior_status as OrderStatus | null },
      event,
    );
    if (!moved.ok) {
      this.logger.warn({ key: row.idempotency_key, event, status: row.status }, moved.reason);
      return false;
    }
    const now = this.clock.nowMs();
    const ended = moved.state.status !== row.status && BROKER_TERMINAL.has(moved.state.status);
    held.row = {
      ...row,
      status: moved.state.status,
      prior_status: moved.state.prior,
      reason: reason ?? row.reason,
      updated_at: now,
      closed_at: ended ? now : row.closed_at,
    };
    if (ended) {
      account.orders.delete(row.idempotency_key);
      if (row.source_order_id !== null) this.#bySource.get(row.source_order_id)?.delete(row.idempotency_key);
    }
    // An order not yet stored is written with its batch (the copier's or the desk's own).
    if (held.stored) this.#moved(held.row);
    else if (this.#writes.made.has(row.idempotency_key)) this.#writes.made.set(row.idempotency_key, held.row);
    this.#schedule();
    return true;
  }

  #moved(row: NewAccountOrder): void {
    if (this.#writes.made.has(row.idempotency_key)) this.#writes.made.set(row.idempotency_key, row);
    else this.#writes.moved.set(row.idempotency_key, row);
  }

  #onReport(report: BrokerReport): void {
    if (this.#stopped) return;
    const account = this.#byBrokerAccount.get(`${report.brokerId}:${report.account}`);
    if (!account) return;
    if ("idempotencyKey" in report) this.#onOrderReport(account, report);
    else this.#onAccountReport(account, report);
    this.#schedule();
  }

  #onOrderReport(account: FollowerAccount, report: OrderReport): void {
    const held = account.orders.get(report.idempotencyKey);
    // An order that ended here already (or another process's): nothing more to apply.
    if (!held) return;
    if (held.row.broker_order_id === null) held.row = { ...held.row, broker_order_id: report.brokerOrderId };
    switch (report.kind) {
      case "acknowledged":
        if (held.row.sent_at === null) held.row = { ...held.row, sent_at: report.atMs };
        this.#apply(account, held, "acknowledged", null);
        return;
      case "rejected":
        this.#apply(account, held, "rejected", report.reason);
        return;
      case "canceled":
        this.#apply(account, held, "canceled", report.reason ?? held.cancelReason ?? null);
        return;
      case "cancelRejected":
        this.#apply(account, held, "cancelRejected", report.reason);
        return;
      case "replaceRejected":
        this.#apply(account, held, "replaceRejected", report.reason);
        return;
      case "replaced":
        held.row = {
          ...held.row,
          broker_order_id: report.newBrokerOrderId,
          limit_price: report.limit === null ? null : formatDecimal(report.limit),
          stop_price: report.stop === null ? null : formatDecimal(report.stop),
        };
        this.#apply(account, held, "replaced", null);
        return;
      case "expired":
        this.#apply(account, held, "expired", null);
        return;
      case "fill":
        this.#fill(account, held, report.fillId, report.quantity, report.price, report.atMs);
        return;
    }
  }

  #fill(
    account: FollowerAccount,
    held: HeldOrder,
    fillId: string,
    quantity: Decimal,
    price: Decimal,
    atMs: number,
  ): void {
    if (held.fillIds.has(fillId)) return;
    const { row } = held;
    const filled = add(storedDecimal(row.filled_quantity), quantity);
    const whole = compare(filled, storedDecimal(row.quantity)) >= 0;
    held.row = {
      ...row,
      filled_quantity: formatDecimal(filled),
      filled_notional: formatDecimal(add(storedDecimal(row.filled_notional), mul(quantity, price))),
    };
    if (!this.#apply(account, held, whole ? "filled" : "partiallyFilled", null)) {
      held.row = row;
      return;
    }
    held.fillIds.add(fillId);
    this.#writes.fills.push({
      orderKey: row.idempotency_key,
      account_id: account.id,
      strategy_id: row.strategy_id,
      symbol: row.symbol,
      side: row.side,
      quantity: formatDecimal(quantity),
      price: formatDecimal(price),
      broker_fill_id: fillId,
      filled_at: atMs,
    });
    const key = positionKey(row.strategy_id, row.symbol);
    const before = account.positions.get(key);
    const after = applyFill(before?.position ?? FLAT, row.side, quantity, price, ONE).position;
    const position = {
      strategyId: row.strategy_id,
      symbol: row.symbol,
      symbolType: row.symbol_type,
      position: after,
      openedAt: before && !isZero(before.position.quantity) ? before.openedAt : atMs,
    };
    if (isZero(after.quantity)) account.positions.delete(key);
    else account.positions.set(key, position);
    this.#writes.positions.set(`${account.id}|${key}`, { accountId: account.id, held: position });
    if (row.setup_id === null) return;
    if (row.open_close === "open") this.opened(account, row.setup_id, row.symbol);
    // The automatic stop loss filled: the holding is closed, the other closing orders go.
    if (row.purpose === "auto_stop" && whole) {
      for (const other of [...account.orders.ofSetup(row.setup_id, row.symbol)]) {
        if (other.row.open_close === "close")
          this.#cancel(account, other, "The automatic stop loss closed the position");
      }
    }
    if (account.flatWanted.has(flatKey(row.setup_id, row.symbol)))
      this.#closeUncovered(account, row.setup_id, row.strategy_id, row.symbol);
    this.#restStop(account, row.setup_id, row.strategy_id, row.symbol, row.symbol_type);
  }

  #onAccountReport(account: FollowerAccount, report: AccountReport): void {
    switch (report.kind) {
      case "delinked": {
        // A report heard again (the broker repeats it after a restart) changes nothing and records nothing.
        if (account.linked) this.#event(account, "Delinked", report.reason);
        account.linked = false;
        this.#writes.accounts.set(account.id, { ...this.#writes.accounts.get(account.id), linked: false });
        this.#disable(account, `The broker delinked the account: ${report.reason}`);
        return;
      }
      case "restricted": {
        const reason = `The broker restricted the account: ${report.reason}`;
        if ([...account.setups.values()].some((setup) => setup.enabled))
          this.#event(account, "Restricted", report.reason);
        this.#disable(account, reason);
        return;
      }
      case "externalExecution": {
        const reason = `An order the service did not send executed in the account (${report.side} ${formatDecimal(report.quantity)} ${report.symbol})`;
        let disabled = 0;
        for (const setup of [...account.setups.values()]) {
          // IgnoreManualOrders: the customer trades the account by hand too; AutoSync stays on.
          if (setup.settings.ignoreManualOrders) continue;
          // Off in memory at once: AutoSync reads it here, and must never fight the customer's own trade.
          account.setups.set(setup.id, { ...setup, syncEnabled: false });
          disabled += 1;
          this.#writes.setups.set(setup.id, {
            ...this.#writes.setups.get(setup.id),
            syncEnabled: false,
            syncDisabledReason: reason,
          });
        }
        if (disabled > 0) this.#event(account, "AutoSyncDisabled", reason);
        return;
      }
      case "contractSettled":
        // The broker settled an expired contract: every setup's holding in it is gone (a report heard again finds none).
        for (const [key, held] of [...account.positions]) {
          if (held.symbol !== report.symbol) continue;
          account.positions.delete(key);
          const settled = { ...held, position: FLAT };
          this.#writes.positions.set(`${account.id}|${key}`, { accountId: account.id, held: settled });
        }
        return;
      case "value":
        account.value = report.value.netLiquidation;
        this.#writes.accounts.set(account.id, {
          ...this.#writes.accounts.get(account.id),
          value: { netLiquidation: formatDecimal(report.value.netLiquidation), atMs: report.value.atMs },
        });
        return;
    }
  }

  /** A stability event of the account, written with the desk's next batch. */
  #event(account: FollowerAccount, kind: AccountEventKind, reason: string | null): void {
    this.#writes.events.push({
      accountId: account.id,
      personId: account.personId,
      kind,
      reason,
      atMs: this.clock.nowMs(),
    });
  }

  /** Autotrade disabled on every setup of the account, with the reason (API.md States). */
  #disable(account: FollowerAccount, reason: string): void {
    if ([...account.setups.values()].some((setup) => setup.enabled)) this.#event(account, "AutotradeDisabled", reason);
    for (const setup of [...account.setups.values()]) {
      account.setups.set(setup.id, { ...setup, enabled: false });
      this.#writes.setups.set(setup.id, {
        ...this.#writes.setups.get(setup.id),
        enabled: false,
        disabledReason: reason,
      });
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#flushing !== null || isEmptyDeskWrites(this.#writes)) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flushing = this.#flush().finally(() => {
        this.#flushing = null;
        this.#schedule();
      });
    });
  }

  async #flush(): Promise<void> {
    const writes = this.#writes;
    this.#writes = noDeskWrites();
    if (isEmptyDeskWrites(writes)) return;
    try {
      await transaction(this.storage, (tx) => writeDesk(tx, writes, this.clock.nowMs()));
    } catch (error) {
      this.logger.error({ err: error }, "writing autotrade changes failed; they are tried again");
      this.#writes = mergeDeskWrites(writes, this.#writes);
      await new Promise((resolve) => setTimeout(resolve, 1000).unref());
      return;
    }
    // What the desk made is durable now: it goes to the broker.
    for (const row of writes.made.values()) {
      const account = this.#accounts.get(row.account_id);
      const held = account?.orders.get(row.idempotency_key);
      if (!account || !held) continue;
      held.stored = true;
      this.#send(account, held);
    }
  }
}

/** Writes that failed, ahead of those made since (later images of a row win). */
function mergeDeskWrites(first: DeskWrites, later: DeskWrites): DeskWrites {
  const merged = noDeskWrites();
  for (const w of [first, later]) {
    for (const [k, v] of w.made) merged.made.set(k, v);
    for (const [k, v] of w.moved) merged.moved.set(k, v);
    merged.fills.push(...w.fills);
    for (const [k, v] of w.positions) merged.positions.set(k, v);
    for (const [k, v] of w.setups) merged.setups.set(k, { ...merged.setups.get(k), ...v });
    for (const [k, v] of w.accounts) merged.accounts.set(k, { ...merged.accounts.get(k), ...v });
    merged.endSubscriptions.push(...w.endSubscriptions);
    merged.events.push(...w.events);
  }
  return merged;
}
