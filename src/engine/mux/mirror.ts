import type { Logger } from "pino";
import { storedDecimal } from "../../core/decimal.js";
import { SIGNAL_TYPES } from "../../core/orders/terms.js";
import {
  childOrderOf,
  isEntryExit,
  type MirrorResult,
  mirrorCancel,
  mirrorPlacement,
  type ParentOrder,
  type Variant,
} from "../../services/mux-trading.js";
import { MUX_CONSUMER } from "../../services/strategy-mux.js";
import type { TradingRuntime } from "../../services/trading.js";
import type { MuxAction } from "../../store/schema.js";
import type { Tx } from "../../store/transaction.js";
import { eventsAfterPosition, type OutboxEvent } from "../outbox/events.js";

/**
 * The StrategyMux mirror (docs/decisions.md "StrategyMux (issue 14)"): a
 * reader of the outbox that places each order of a parent strategy into
 * every variant, scaled, through the trading frame, and mirrors its cancels
 * and replacements. It keeps a position in each parent's events
 * (`outbox_positions`, consumer `strategy_mux`) and moves it only once what
 * the events asked of every variant is durable: delivery is at least once,
 * and a mirrored order carries its parent order's id as its signal id, so
 * doing an event again (after a crash, a restart, another process) finds
 * the variant's order instead of placing a second one. What became of each
 * parent order in each variant is kept once (`mux_orders`).
 *
 * It reads its events itself rather than through the outbox runner, whose
 * consumers decide from memory inside the frame's batch: a family made by
 * the operator CLI, another process, must be seen with the events it
 * mirrors, so each chunk of events is read first and the families after it
 * (a link counts the parent's events under its account's lock: an event
 * after it is committed after it).
 */

/** Events read at a time, per parent. */
const CHUNK = 200;

interface Family {
  readonly child: Variant;
  /** The parent's events after this one are mirrored into the child. */
  readonly fromSeq: number;
}

interface Plan {
  readonly action: MuxAction;
  readonly parentOrderId: number;
  readonly order: ParentOrder | null;
}

export class StrategyMux {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  /** The parents' model accounts as last read: their commits ask for a pass. */
  #parentAccounts = new Set<number>();

  constructor(
    private readonly runtime: TradingRuntime,
    private readonly logger: Logger,
    private readonly options: { readonly passMs: number },
  ) {
    runtime.frame.listen({
      committed: (events) => {
        if (events.some((event) => this.#parentAccounts.has(event.accountId))) this.request();
      },
    });
  }

  /**
   * Starts catching up with what was left (a restart resumes here; the start does not wait for it),
   * then passes every `passMs` and whenever a parent's events commit in this process.
   */
  start(): void {
    this.request();
    if (this.options.passMs > 0) {
      this.#timer = setInterval(() => this.request(), this.options.passMs);
      this.#timer.unref();
    }
  }

  /** A pass soon: now, or again after the one running. */
  request(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          await this.#pass();
        } catch (error) {
          // Nothing of an event half done is lost: its position did not move, and it is done again.
          this.logger.error({ err: error }, "mirroring parent strategies failed; tried again on the next pass");
        }
      } while (this.#again && !this.#stopped);
    })().finally(() => {
      this.#running = null;
    });
  }

  /** Resolves once no pass runs or is asked for. */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.settled();
  }

  async #pass(): Promise<void> {
    const db = this.runtime.storage.db;
    const parents = await db
      .selectFrom("strategy_mux as m")
      .innerJoin("accounts as a", (join) =>
        join.onRef("a.strategy_id", "=", "m.parent_strategy_id").on("a.kind", "=", "model"),
      )
      .select(["a.id as account_id", "m.parent_strategy_id"])
      .distinct()
      .execute();
    this.#parentAccounts = new Set(parents.map((parent) => parent.account_id));
    for (const parent of parents) {
      if (this.#stopped) return;
      await this.#mirrorParent(db, parent.parent_strategy_id, parent.account_id);
    }
  }

  /** Mirrors the parent's events after the position, a chunk at a time. */
  async #mirrorParent(db: Tx, parentId: number, accountId: number): Promise<void> {
    for (;;) {
      const { position, events } = await eventsAfterPosition(db, MUX_CONSUMER, accountId, CHUNK);
      const last = events.at(-1);
      if (!last) return;
      // Read after the events: a family linked before an event was committed is seen with it.
      const families = (
        await db.selectFrom("strategy_mux").selectAll().where("parent_strategy_id", "=", parentId).execute()
      ).map(
        (row): Family => ({
          child: { strategyId: row.child_strategy_id, scaling: storedDecimal(row.scaling_percentage) },
          fromSeq: row.from_seq,
        }),
      );
      for (const event of events) {
        if (this.#stopped) return;
        await this.#mirrorEvent(db, parentId, event, families);
      }
      await this.#moveTo(db, accountId, position, last.seq);
      if (events.length < CHUNK) return;
    }
  }

  /** The position moves only from where it was read: another process that moved it first did the same work. */
  async #moveTo(db: Tx, accountId: number, from: number | null, to: number): Promise<void> {
    if (from === null) {
      await db
        .insertInto("outbox_positions")
        .values({ consumer: MUX_CONSUMER, account_id: accountId, seq: to })
        .onConflict((oc) => oc.columns(["consumer", "account_id"]).doNothing())
        .execute();
      return;
    }
    await db
      .updateTable("outbox_positions")
      .set({ seq: to })
      .where("consumer", "=", MUX_CONSUMER)
      .where("account_id", "=", accountId)
      .where("seq", "=", from)
      .execute();
  }

  async #mirrorEvent(db: Tx, parentId: number, event: OutboxEvent, families: readonly Family[]): Promise<void> {
    const plan = planOf(event);
    if (!plan) return;
    const targets = families.filter((family) => event.seq > family.fromSeq);
    if (targets.length === 0) return;
    const done = new Set(
      (
        await db
          .selectFrom("mux_orders")
          .select("child_strategy_id")
          .where("parent_order_id", "=", plan.parentOrderId)
          .where("action", "=", plan.action)
          .where(
            "child_strategy_id",
            "in",
            targets.map((family) => family.child.strategyId),
          )
          .execute()
      ).map((row) => row.child_strategy_id),
    );
    // The variants are other accounts: their operations go together; events go one after another.
    await Promise.all(
      targets
        .filter((family) => !done.has(family.child.strategyId))
        .map(async (family) => {
          const result = await this.#act(db, family.child, plan);
          await record(
            db,
            { parentId, childId: family.child.strategyId, plan, seq: event.seq },
            result,
            this.runtime.clock.nowMs(),
          );
        }),
    );
  }

  async #act(db: Tx, child: Variant, plan: Plan): Promise<MirrorResult> {
    if (plan.order) return mirrorPlacement(this.runtime, child, plan.order);
    const mirrored = await childOrderOf(db, child.strategyId, plan.parentOrderId);
    if (!mirrored) {
      return {
        status: "skipped",
        childOrderId: null,
        reason: "not_mirrored",
        message: `Order ${plan.parentOrderId} has no mirror in the variant`,
      };
    }
    return mirrorCancel(this.runtime, child.strategyId, mirrored.id);
  }
}

/** What an event of the parent asks of its variants, if anything. */
function planOf(event: OutboxEvent): Plan | null {
  if (event.orderId === null) return null;
  if (event.kind === "accepted") {
    const order = event.payload as unknown as ParentOrder;
    // A variant settles its own expired contracts, as every account does.
    if (isEntryExit(order) || order.signal_type === SIGNAL_TYPES.settlement) return null;
    return { action: order.cancel_replace_id === null ? "place" : "replace", parentOrderId: event.orderId, order };
  }
  // An order replaced is taken care of by its replacement's acceptance; a fill by the variant's own market.
  if (event.kind === "canceled" || event.kind === "expired") {
    return { action: "cancel", parentOrderId: event.orderId, order: null };
  }
  return null;
}

/** What became of the parent order in the variant, kept once, with when it was done. */
async function record(
  db: Tx,
  of: { readonly parentId: number; readonly childId: number; readonly plan: Plan; readonly seq: number },
  result: MirrorResult,
  atMs: number,
): Promise<void> {
  const { parentId, childId, plan, seq } = of;
  await db
    .insertInto("mux_orders")
    .values({
      parent_strategy_id: parentId,
      child_strategy_id: childId,
      parent_order_id: plan.parentOrderId,
      action: plan.action,
      status: result.status,
      child_order_id: result.childOrderId,
      reason: result.reason,
      message: result.message,
      parent_seq: seq,
      at: atMs,
    })
    .onConflict((oc) => oc.columns(["child_strategy_id", "parent_order_id", "action"]).doNothing())
    .execute();
}
