import type { Selectable } from "kysely";
import { approvalEventId, approvalEventType } from "../core/autotrade/approvals.js";
import type { AutotradeApprovalsTable } from "../store/schema.js";
import type { Tx } from "../store/transaction.js";
import { enqueueSiteEvent } from "./webhook-events.js";

/**
 * The completion webhook of an approval request that reached a final status
 * (API.md Events: a courtesy signal; the status poll is the source of truth).
 * Owed in the transaction that moved the request, under an id stable per
 * request and status, so a receiver dedupes repeats.
 */
export async function owesCompletion(tx: Tx, row: Selectable<AutotradeApprovalsTable>, nowMs: number): Promise<void> {
  await enqueueSiteEvent(
    tx,
    row.site_id,
    {
      id: approvalEventId(row.id, row.status),
      type: approvalEventType(row.status),
      data: {
        ApprovalRequestId: row.id,
        Status: row.status,
        StatusDetail: row.status_detail,
        PersonId: row.person_id,
        StrategyId: row.strategy_id,
        BrokerId: row.broker_id,
        Account: row.account_number,
        SetupId: row.setup_id,
      },
    },
    nowMs,
  );
}
