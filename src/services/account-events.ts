import type { AccountEvent } from "../core/autotrade/account-events.js";
import type { Tx } from "../store/transaction.js";

/**
 * The stability events of brokerage accounts (src/core/autotrade/account-events.ts):
 * written in the transaction of the change they record, read by the
 * instrumentation export.
 */

const ROWS = 200;

export async function recordAccountEvents(db: Tx, events: readonly AccountEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += ROWS) {
    await db
      .insertInto("account_events")
      .values(
        events.slice(i, i + ROWS).map((event) => ({
          account_id: event.accountId,
          person_id: event.personId,
          kind: event.kind,
          reason: event.reason,
          at: event.atMs,
        })),
      )
      .execute();
  }
}

/** The events of the site's customers' accounts in [startMs, endMs), oldest first. */
export async function siteAccountEvents(db: Tx, siteId: number, startMs: number, endMs: number) {
  return db
    .selectFrom("account_events as e")
    .innerJoin("persons as p", "p.id", "e.person_id")
    .innerJoin("broker_accounts as b", "b.account_id", "e.account_id")
    .select(["e.id", "e.kind", "e.reason", "e.at", "e.person_id", "b.account_number", "b.broker_id"])
    .where("p.white_label_site_id", "=", siteId)
    .where("e.at", ">=", startMs)
    .where("e.at", "<", endMs)
    .orderBy("e.at")
    .orderBy("e.id")
    .execute();
}

/** The fills in the site's customers' brokerage accounts in [startMs, endMs), oldest first. */
export async function siteExecutions(db: Tx, siteId: number, startMs: number, endMs: number) {
  return db
    .selectFrom("persons as p")
    .innerJoin("broker_accounts as b", "b.person_id", "p.id")
    .innerJoin("account_fills as f", "f.account_id", "b.account_id")
    .innerJoin("account_orders as o", "o.id", "f.account_order_id")
    .select([
      "f.id",
      "f.strategy_id",
      "f.symbol",
      "f.side",
      "f.quantity",
      "f.price",
      "f.broker_fill_id",
      "f.filled_at",
      "o.symbol_type",
      "o.purpose",
      "o.source_order_id",
      "b.person_id",
      "b.account_number",
      "b.broker_id",
    ])
    .where("p.white_label_site_id", "=", siteId)
    .where("f.filled_at", ">=", startMs)
    .where("f.filled_at", "<", endMs)
    .orderBy("f.filled_at")
    .orderBy("f.id")
    .execute();
}
