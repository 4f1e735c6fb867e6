import { afterBusinessDays, PENDING_BROKER_BUSINESS_DAYS } from "../core/autotrade/approvals.js";
import { Refusal } from "../core/errors.js";
import { transaction } from "../store/transaction.js";
import { type ApprovalRow, moveApproval, requestBodyOf, requireFollower, scalingOf } from "./autotrade-approvals.js";
import { startSetup } from "./autotrade-setups.js";
import type { Runtime } from "./runtime.js";

/**
 * Switching trading on for an approved request (Processing, or PendingBroker
 * once the account has reached the service): the setup is started, or the
 * live one modified, with the request's settings and the site's id, and the
 * request Completed, in one transaction. An account not at the service yet
 * puts the request in PendingBroker until it arrives, or until
 * PENDING_BROKER_BUSINESS_DAYS have passed (Failed). A refusal of the start
 * (a delinked account, a lapsed subscription...) fails the request with the
 * refusal's message. Safe from several processes: the request's row is read
 * locked (PostgreSQL) or under SQLite's write lock, and moved only from the
 * status read.
 */
export async function switchOn(runtime: Runtime, approvalId: number): Promise<void> {
  try {
    await transaction(runtime.storage, async (tx) => {
      const nowMs = runtime.clock.nowMs();
      let read = tx
        .selectFrom("autotrade_approvals")
        .selectAll()
        .where("id", "=", approvalId)
        .where("status", "in", ["Processing", "PendingBroker"]);
      if (runtime.storage.backend === "postgres") read = read.forUpdate();
      const row = await read.executeTakeFirst();
      if (!row) return;
      const account = await tx
        .selectFrom("broker_accounts")
        .select("account_id")
        .where("broker_id", "=", row.broker_id)
        .where("account_number", "=", row.account_number)
        .executeTakeFirst();
      if (!account) {
        if (row.status === "Processing")
          await moveApproval(tx, row, "awaitBroker", nowMs, {
            expiresAt: afterBusinessDays(nowMs, PENDING_BROKER_BUSINESS_DAYS),
          });
        return;
      }
      const inner = { ...runtime, tx };
      await requireFollower(inner, row.person_id, row.strategy_id);
      const body = requestBodyOf(row);
      const { setupId } = await startSetup(inner, {
        ...body,
        personId: row.person_id,
        account: row.account_number,
        brokerId: row.broker_id,
        strategyId: row.strategy_id,
        scalingPercentage: scalingOf(body),
        doNotJoinOpenPositions: body.DoNotJoinOpenPositions,
        siteId: row.site_id,
      });
      await moveApproval(tx, row, "started", nowMs, { setupId });
    });
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    await transaction(runtime.storage, async (tx) => {
      const row = await tx
        .selectFrom("autotrade_approvals")
        .selectAll()
        .where("id", "=", approvalId)
        .executeTakeFirstOrThrow();
      await moveApproval(tx, row, "fail", runtime.clock.nowMs(), { detail: error.message });
    });
  }
}

/** What a pass of the approvals scheduler did. */
export interface ApprovalPass {
  readonly expired: number;
  readonly switched: number;
  readonly timedOut: number;
}

const BATCH = 500;

/**
 * A pass over the requests that wait on time or on something else: approved
 * ones left Processing (their process stopped before switching on), those
 * PendingBroker whose account has arrived, PendingBroker ones past their
 * deadline (Failed), and PendingCustomer ones past theirs (Expired).
 */
export async function advanceApprovals(runtime: Runtime): Promise<ApprovalPass> {
  let switched = 0;
  let afterId = 0;
  for (;;) {
    const ready = await runtime.storage.db
      .selectFrom("autotrade_approvals as a")
      .leftJoin("broker_accounts as b", (join) =>
        join.onRef("b.broker_id", "=", "a.broker_id").onRef("b.account_number", "=", "a.account_number"),
      )
      .select("a.id")
      .where("a.id", ">", afterId)
      .where((eb) =>
        eb.or([
          eb("a.status", "=", "Processing"),
          eb.and([eb("a.status", "=", "PendingBroker"), eb("b.account_id", "is not", null)]),
        ]),
      )
      .orderBy("a.id")
      .limit(BATCH)
      .execute();
    for (const { id } of ready) {
      await switchOn(runtime, id);
      switched += 1;
    }
    const last = ready.at(-1);
    if (ready.length < BATCH || !last) break;
    afterId = last.id;
  }
  const timedOut = await endDue(runtime, "PendingBroker");
  const expired = await endDue(runtime, "PendingCustomer");
  return { expired, switched, timedOut };
}

/** Ends the requests of `status` past their deadline, a batch per transaction. */
async function endDue(runtime: Runtime, status: "PendingBroker" | "PendingCustomer"): Promise<number> {
  let ended = 0;
  for (;;) {
    const moved = await transaction(runtime.storage, async (tx) => {
      const nowMs = runtime.clock.nowMs();
      const due: ApprovalRow[] = await tx
        .selectFrom("autotrade_approvals")
        .selectAll()
        .where("status", "=", status)
        .where("expires_at", "<=", nowMs)
        .orderBy("id")
        .limit(BATCH)
        .execute();
      let count = 0;
      for (const row of due) {
        const done =
          status === "PendingCustomer"
            ? await moveApproval(tx, row, "expire", nowMs)
            : await moveApproval(tx, row, "fail", nowMs, {
                detail: `The account did not reach the service within ${PENDING_BROKER_BUSINESS_DAYS} business days`,
              });
        if (done) count += 1;
      }
      return { count, full: due.length === BATCH };
    });
    ended += moved.count;
    if (!moved.full) return ended;
  }
}
