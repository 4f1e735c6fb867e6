import { sql } from "kysely";
import { type Decimal, formatDecimal, fromInteger, storedDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { wouldCycle } from "../core/mux.js";
import { backendOf, type Tx, withTransaction } from "../store/transaction.js";
import type { Runtime } from "./runtime.js";

/**
 * StrategyMux families (docs/decisions.md "StrategyMux (issue 14)"): an
 * operator makes a strategy a variant (child) of another (its parent). A
 * child has one parent; no strategy descends from itself; both are the same
 * person's, or strategies of the same white-label site. A new link mirrors
 * the parent's orders from its next event on.
 */

/** The mirror's name among the outbox's readers: its position in each parent's events is stored under it. */
export const MUX_CONSUMER = "strategy_mux";

export interface MuxLink {
  readonly parentStrategyId: number;
  readonly childStrategyId: number;
  readonly scalingPercentage: Decimal;
  readonly linkedAt: number;
  /** False when the child was the parent's variant already (its scaling may have changed). */
  readonly created: boolean;
}

const DEFAULT_SCALING = fromInteger(100);

/** The strategy's site: its own white-label site, else its owner's; null: none. */
async function strategyOf(tx: Tx, id: number, field: "parent" | "child") {
  const row = await tx
    .selectFrom("strategies as st")
    .innerJoin("persons as o", "o.id", "st.owner_person_id")
    .innerJoin("accounts as a", (join) => join.onRef("a.strategy_id", "=", "st.id").on("a.kind", "=", "model"))
    .select([
      "st.id",
      "st.owner_person_id",
      "st.white_label_site_id",
      "o.white_label_site_id as owner_site_id",
      "a.id as account_id",
    ])
    .where("st.id", "=", id)
    .executeTakeFirst();
  if (!row) throw refuse("NotFound", { field, message: `No strategy ${id}` });
  return { ...row, siteId: row.white_label_site_id ?? row.owner_site_id };
}

/** `strategy mux`: makes `childId` a variant of `parentId` (or changes its scaling). */
export async function linkVariant(
  runtime: Runtime,
  input: { readonly parentId: number; readonly childId: number; readonly scaling?: Decimal | undefined },
): Promise<MuxLink> {
  if (input.parentId === input.childId) {
    throw refuse("InvalidValue", { field: "child", message: "A strategy cannot be a variant of itself" });
  }
  return withTransaction(runtime, async ({ tx }) => {
    const parent = await strategyOf(tx, input.parentId, "parent");
    const child = await strategyOf(tx, input.childId, "child");
    const sameOwner = parent.owner_person_id === child.owner_person_id;
    if (!sameOwner && (parent.siteId === null || parent.siteId !== child.siteId)) {
      throw refuse("InvalidValue", {
        field: "child",
        message: "A variant is a strategy of the parent's owner, or of the parent's white-label site",
      });
    }
    // The parent's events are counted under its account's lock: a link made now mirrors every later one.
    if (backendOf(tx) === "postgres") {
      await sql`select id from accounts where id = ${parent.account_id} for update`.execute(tx);
    }
    const links = await tx.selectFrom("strategy_mux").selectAll().execute();
    const existing = links.find((link) => link.child_strategy_id === input.childId);
    if (existing && existing.parent_strategy_id !== input.parentId) {
      throw refuse("AlreadyExists", {
        field: "child",
        message: `Strategy ${input.childId} is a variant of strategy ${existing.parent_strategy_id} already: a variant has one parent`,
        meta: { ParentStrategyId: existing.parent_strategy_id },
      });
    }
    const parentOf = new Map(links.map((link) => [link.child_strategy_id, link.parent_strategy_id]));
    if (wouldCycle(parentOf, input.parentId, input.childId)) {
      throw refuse("WrongState", {
        field: "parent",
        message: `Strategy ${input.parentId} descends from strategy ${input.childId}: a strategy cannot mirror itself`,
      });
    }
    const now = runtime.clock.nowMs();
    if (existing) {
      const scaling = input.scaling ?? storedDecimal(existing.scaling_percentage);
      await tx
        .updateTable("strategy_mux")
        .set({ scaling_percentage: formatDecimal(scaling), updated_at: now })
        .where("child_strategy_id", "=", input.childId)
        .execute();
      return {
        parentStrategyId: input.parentId,
        childStrategyId: input.childId,
        scalingPercentage: scaling,
        linkedAt: existing.linked_at,
        created: false,
      };
    }
    const account = await tx
      .selectFrom("accounts")
      .select("event_seq")
      .where("id", "=", parent.account_id)
      .executeTakeFirstOrThrow();
    const scaling = input.scaling ?? DEFAULT_SCALING;
    await tx
      .insertInto("strategy_mux")
      .values({
        child_strategy_id: input.childId,
        parent_strategy_id: input.parentId,
        scaling_percentage: formatDecimal(scaling),
        from_seq: account.event_seq,
        linked_at: now,
        updated_at: now,
      })
      .execute();
    // The parent's first variant: the mirror starts reading its events here, not from its first.
    const siblings = links.some((link) => link.parent_strategy_id === input.parentId);
    if (!siblings) {
      await tx
        .insertInto("outbox_positions")
        .values({ consumer: MUX_CONSUMER, account_id: parent.account_id, seq: account.event_seq })
        .onConflict((oc) => oc.columns(["consumer", "account_id"]).doUpdateSet({ seq: account.event_seq }))
        .execute();
    }
    return {
      parentStrategyId: input.parentId,
      childStrategyId: input.childId,
      scalingPercentage: scaling,
      linkedAt: now,
      created: true,
    };
  });
}

/** `strategy unmux`: the child stops mirroring its parent (what it holds and what was mirrored stay). */
export async function unlinkVariant(
  runtime: Runtime,
  childId: number,
): Promise<{ readonly parentStrategyId: number; readonly childStrategyId: number }> {
  return withTransaction(runtime, async ({ tx }) => {
    const removed = await tx
      .deleteFrom("strategy_mux")
      .where("child_strategy_id", "=", childId)
      .returning("parent_strategy_id")
      .executeTakeFirst();
    if (!removed) throw refuse("NotFound", { field: "child", message: `Strategy ${childId} is no variant` });
    return { parentStrategyId: removed.parent_strategy_id, childStrategyId: childId };
  });
}
