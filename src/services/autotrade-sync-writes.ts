import { sql } from "kysely";
import { lastSyncOf, type SyncMarket } from "../core/autotrade/settings.js";
import type { NewAccountOrder } from "../store/journal/batch.js";
import type { Backend } from "../store/storage.js";
import type { Tx } from "../store/transaction.js";
import { claimKey } from "./autotrade-sync-facts.js";

/**
 * What a sync writes, in the transaction that makes its orders: the claims
 * of the opens it syncs (so each setup is synced once per venue and open,
 * whoever tries), the opens SyncPositionsToOpen asks for, the sync orders
 * themselves and the setups' LastSync times.
 */

export interface VenueOpen {
  readonly setupId: number;
  readonly venue: string;
  readonly market: SyncMarket;
  readonly opensAt: number;
}

const CHUNK = 500;

/** A venue's claim row: the open synced (and when), or an open asked for. */
const claimRow = (
  open: VenueOpen,
  fields: { opens_at: number; synced_at: number | null; requested_for: number | null },
) => ({
  setup_id: open.setupId,
  venue: open.venue,
  market: open.market,
  ...fields,
});

const chunksOf = <T>(items: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));

/**
 * Claims the opens: a setup's claim at a venue moves forward only, in one
 * conditional statement, so of two passes (or processes) the first to commit
 * syncs and the other is told nothing moved. Answers the claims won, by
 * claimKey. A request waiting for this open (or an earlier one) is settled
 * by it.
 */
export async function claimOpens(tx: Tx, opens: readonly VenueOpen[], nowMs: number): Promise<Set<string>> {
  const won = new Set<string>();
  for (const chunk of chunksOf(opens)) {
    const rows = await tx
      .insertInto("autotrade_syncs")
      .values(chunk.map((open) => claimRow(open, { opens_at: open.opensAt, synced_at: nowMs, requested_for: null })))
      .onConflict((oc) =>
        oc
          .columns(["setup_id", "venue"])
          .doUpdateSet({
            opens_at: (eb) => eb.ref("excluded.opens_at"),
            synced_at: (eb) => eb.ref("excluded.synced_at"),
            requested_for: sql`case when autotrade_syncs.requested_for <= excluded.opens_at then null else autotrade_syncs.requested_for end`,
          })
          .where("autotrade_syncs.opens_at", "<", (eb) => eb.ref("excluded.opens_at")),
      )
      .returning(["setup_id", "venue"])
      .execute();
    for (const row of rows) won.add(claimKey(Number(row.setup_id), row.venue));
  }
  return won;
}

/** Asks for the setups to be synced at these opens (SyncPositionsToOpen while their market is closed). */
export async function requestOpens(tx: Tx, opens: readonly VenueOpen[]): Promise<void> {
  for (const chunk of chunksOf(opens)) {
    await tx
      .insertInto("autotrade_syncs")
      .values(chunk.map((open) => claimRow(open, { opens_at: 0, synced_at: null, requested_for: open.opensAt })))
      .onConflict((oc) =>
        oc.columns(["setup_id", "venue"]).doUpdateSet({ requested_for: (eb) => eb.ref("excluded.requested_for") }),
      )
      .execute();
  }
}

/** The sync orders, each under its own key (a key stored already is left as it is). */
export async function insertSyncOrders(tx: Tx, rows: readonly NewAccountOrder[]): Promise<void> {
  for (const chunk of chunksOf(rows)) {
    await tx
      .insertInto("account_orders")
      .values(chunk)
      .onConflict((oc) => oc.column("idempotency_key").doNothing())
      .execute();
  }
}

/**
 * Sets LastSync<market> of the setups to now. The setups' rows are read
 * locked first (on PostgreSQL; SQLite's transaction holds the write lock), so
 * two syncs of different markets of one setup do not lose each other's time.
 */
export async function noteLastSync(
  tx: Tx,
  backend: Backend,
  synced: ReadonlyMap<number, ReadonlySet<SyncMarket>>,
  nowMs: number,
): Promise<void> {
  const ids = [...synced.keys()].sort((a, b) => a - b);
  for (const chunk of chunksOf(ids)) {
    let read = tx.selectFrom("autotrade_setups").select(["id", "last_sync"]).where("id", "in", chunk).orderBy("id");
    if (backend === "postgres") read = read.forUpdate();
    const rows = await read.execute();
    if (rows.length === 0) continue;
    const texts = rows.map((row) => {
      const last = lastSyncOf(row.last_sync);
      for (const market of synced.get(row.id) ?? []) last[market] = Math.max(last[market] ?? 0, nowMs);
      return { id: row.id, text: JSON.stringify(last) };
    });
    const cases = sql.join(
      texts.map(({ id, text }) => sql`when ${id} then ${text}`),
      sql` `,
    );
    await sql`update autotrade_setups set last_sync = case id ${cases} end
      where id in (${sql.join(texts.map(({ id }) => id))})`.execute(tx);
  }
}
