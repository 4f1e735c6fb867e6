import { type Decimal, storedDecimal, ZERO } from "../core/decimal.js";
import { Refusal } from "../core/errors.js";
import { muxLocalId, muxQuantity, replacementQuantity } from "../core/mux.js";
import { isExitSignal } from "../core/orders/terms.js";
import type { StoredOrder } from "../store/journal/batch.js";
import type { MuxOutcome } from "../store/schema.js";
import { instrumentOf } from "../store/trading-state.js";
import type { Tx } from "../store/transaction.js";
import { cancelOrder, type OrderInput, placeStep, replaceStep } from "./orders.js";
import { dbOf } from "./runtime.js";
import { type TradingRuntime, tradeOn } from "./trading.js";

/**
 * What the StrategyMux mirror does in a variant (docs/decisions.md
 * "StrategyMux (issue 14)"), through the trading frame under the variant's
 * own trading rules: place a parent order's scaled mirror, replace it,
 * cancel it. A mirrored order carries the caller-chosen signal id
 * `mux:<parent order id>`, unique in the variant across all time, so doing
 * it again (after a crash, from another process) finds it instead of
 * placing a second one. Each answers what became of it.
 */
export interface MirrorResult {
  readonly status: MuxOutcome;
  readonly childOrderId: number | null;
  readonly reason: string | null;
  readonly message: string | null;
}

export interface Variant {
  readonly strategyId: number;
  readonly scaling: Decimal;
}

/** A parent order as its accepted event carries it, with the position the parent held in the symbol then. */
export type ParentOrder = StoredOrder & { readonly held?: string };

/** An exit made with its entry: it is mirrored with the entry (the variant's entry makes its own exits). */
export const isEntryExit = (order: Pick<StoredOrder, "signal_type" | "parent_id" | "cancel_replace_id">): boolean =>
  isExitSignal(order.signal_type) && order.parent_id !== null && order.cancel_replace_id === null;

class Skip extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const skipped = (reason: string, message: string): MirrorResult => ({
  status: "skipped",
  childOrderId: null,
  reason,
  message,
});

interface ChildOrder {
  readonly id: number;
  readonly quantity: string;
  readonly status: string;
}

/**
 * The variant's order mirroring the parent's: the one carrying its signal
 * id, or for an exit made with its entry, the variant's exit of that kind
 * made with the variant's mirror of the entry.
 */
export async function childOrderOf(db: Tx, childId: number, parentOrderId: number): Promise<ChildOrder | null> {
  const direct = await db
    .selectFrom("orders")
    .select(["id", "quantity", "status"])
    .where("strategy_id", "=", childId)
    .where("local_signal_id", "=", muxLocalId(parentOrderId))
    .executeTakeFirst();
  if (direct) return direct;
  const parent = await db
    .selectFrom("orders")
    .select(["parent_id", "signal_type", "cancel_replace_id"])
    .where("id", "=", parentOrderId)
    .executeTakeFirst();
  if (!parent || parent.parent_id === null || !isEntryExit(parent)) return null;
  const entry = await childOrderOf(db, childId, parent.parent_id);
  if (!entry) return null;
  const exit = await db
    .selectFrom("orders")
    .select(["id", "quantity", "status"])
    .where("strategy_id", "=", childId)
    .where("parent_id", "=", entry.id)
    .where("signal_type", "=", parent.signal_type)
    .orderBy("id")
    .executeTakeFirst();
  return exit ?? null;
}

/**
 * Places the parent's order in the variant, scaled; or, when it replaces an
 * order of the parent's, replaces that order's mirror (a replacement whose
 * original has no mirror is placed as a new order).
 */
export async function mirrorPlacement(
  runtime: TradingRuntime,
  variant: Variant,
  order: ParentOrder,
): Promise<MirrorResult> {
  const db = dbOf(runtime);
  const replaced =
    order.cancel_replace_id === null ? null : await childOrderOf(db, variant.strategyId, order.cancel_replace_id);
  let childParentId: number | undefined;
  if (!replaced && order.parent_id !== null) {
    const waitsOn = await childOrderOf(db, variant.strategyId, order.parent_id);
    if (!waitsOn)
      return skipped("not_mirrored", `The order it waits on (${order.parent_id}) has no mirror in the variant`);
    childParentId = waitsOn.id;
  }
  const parentOld =
    replaced && order.cancel_replace_id !== null
      ? await db.selectFrom("orders").select("quantity").where("id", "=", order.cancel_replace_id).executeTakeFirst()
      : undefined;
  const input = (quantity: Decimal): OrderInput => ({
    strategyId: variant.strategyId,
    instrument: instrumentOf(order.symbol, order.symbol_type),
    type: order.order_type,
    side: order.side,
    tif: order.tif,
    quantity,
    // A replacement keeps what its original opens or closes.
    openClose: replaced ? undefined : order.open_close,
    limit: order.limit_price === null ? undefined : storedDecimal(order.limit_price),
    stop: order.stop_price === null ? undefined : storedDecimal(order.stop_price),
    profitTarget: order.profit_target === null ? undefined : storedDecimal(order.profit_target),
    stopLoss: order.stop_loss === null ? undefined : storedDecimal(order.stop_loss),
    parentSignalId: childParentId,
    parkedUntilMs: order.parked_until ?? undefined,
    doNotCreateOcaGroup: order.do_not_create_oca === 1,
    doNotSyncToOpen: order.do_not_sync_to_open === 1,
    localSignalId: muxLocalId(order.id),
  });
  try {
    const placed = await tradeOn(runtime, variant.strategyId, (op) => {
      if (replaced) {
        const quantity = replacementQuantity(
          storedDecimal(replaced.quantity),
          storedDecimal(parentOld?.quantity ?? order.quantity),
          storedDecimal(order.quantity),
        );
        if (quantity <= ZERO) throw new Skip("rounds_to_zero", "The replacement's scaled quantity rounds to nothing");
        const placement = replaceStep(op, { ...input(quantity), cancelReplaceSignalId: replaced.id }, replaced.id);
        return { state: placement.state, result: placement.placed };
      }
      const decision = muxQuantity(
        {
          side: order.side,
          openClose: order.open_close,
          quantity: storedDecimal(order.quantity),
          parentHeld: storedDecimal(order.held ?? "0"),
          conditional: order.parent_id !== null,
        },
        op.account.state.positions.get(order.symbol)?.position.quantity ?? ZERO,
        variant.scaling,
      );
      if (!decision.mirror) throw new Skip(decision.reason, decision.message);
      const placement = placeStep(op, op.account.state, input(decision.quantity));
      return { state: placement.state, result: placement.placed };
    });
    return { status: "mirrored", childOrderId: placed.signalId, reason: null, message: null };
  } catch (error) {
    if (error instanceof Skip) {
      // A replacement that rounds to nothing takes the original's mirror away, as the parent's went.
      if (replaced) await mirrorCancel(runtime, variant.strategyId, replaced.id);
      return skipped(error.reason, error.message);
    }
    if (!(error instanceof Refusal)) throw error;
    const [first] = error.entries;
    if (first?.name === "AlreadyExists" && first.field === "signalid") {
      // Placed before (a pass cut short after the variant's commit): found, not placed again.
      const found = await childOrderOf(db, variant.strategyId, order.id);
      return { status: "mirrored", childOrderId: found?.id ?? null, reason: null, message: "Mirrored before" };
    }
    return {
      status: "failed",
      childOrderId: replaced?.id ?? null,
      reason: first?.name ?? "Refused",
      message: error.message,
    };
  }
}

/** Cancels the variant's mirror of a parent order the parent's owner canceled or that expired. */
export async function mirrorCancel(
  runtime: TradingRuntime,
  childId: number,
  childOrderId: number,
): Promise<MirrorResult> {
  try {
    await cancelOrder(runtime, childId, childOrderId);
    return { status: "mirrored", childOrderId, reason: null, message: null };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const [first] = error.entries;
    // Ended already, by its own fill, cancel or expiry: the variant is where the parent is.
    if (first?.name === "CancelRejected")
      return { status: "mirrored", childOrderId, reason: null, message: error.message };
    return { status: "failed", childOrderId, reason: first?.name ?? "Refused", message: error.message };
  }
}
