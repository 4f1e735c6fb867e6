import { sql } from "kysely";
import { equityOf, markPositions } from "../core/account.js";
import { type SyncMarket, willSyncOf } from "../core/autotrade/settings.js";
import { type Decimal, storedDecimal } from "../core/decimal.js";
import type { MarketView } from "../core/market/view.js";
import { COPIER_CONSUMER } from "../engine/autotrade/copier.js";
import { instrumentOf } from "../store/trading-state.js";
import type { Tx } from "../store/transaction.js";

/**
 * What AutoSync and the sync report read of the strategies and setups: each
 * strategy's model account (cash, positions, whether the copier has copied
 * its latest events) and which of its positions may not be synced, and the
 * setups' sync settings. Two statements per 5,000 strategies.
 */

export interface StrategyPositionFact {
  readonly symbol: string;
  readonly symbolType: string;
  /** Signed. */
  readonly quantity: Decimal;
  readonly cost: Decimal;
  /** When the position last opened from flat. */
  readonly openedAt: number;
  /** Its open trade took a fill of an opening order marked DoNotSyncToOpen. */
  readonly doNotSync: boolean;
}

export interface StrategyFacts {
  readonly strategyId: number;
  readonly cash: Decimal;
  readonly positions: ReadonlyMap<string, StrategyPositionFact>;
  /** The copier has not yet taken every event committed for the strategy: its copies may be on the way. */
  readonly copierBehind: boolean;
}

/**
 * Ids per statement: an IN list, planned the same whatever the tables'
 * statistics say (a subquery planned on stale ones can turn quadratic), well
 * inside both backends' limits on parameters.
 */
const CHUNK = 5000;

export async function readStrategyFacts(db: Tx, strategyIds: readonly number[]): Promise<Map<number, StrategyFacts>> {
  const facts = new Map<number, StrategyFacts>();
  for (let first = 0; first < strategyIds.length; first += CHUNK) {
    const chunk = strategyIds.slice(first, first + CHUNK);
    const [rows, doNotSync] = await Promise.all([
      db
        .selectFrom("accounts as a")
        .leftJoin("outbox_positions as o", (join) =>
          join.onRef("o.account_id", "=", "a.id").on("o.consumer", "=", COPIER_CONSUMER),
        )
        .leftJoin("positions as p", "p.account_id", "a.id")
        .select([
          "a.strategy_id",
          "a.cash",
          "a.event_seq",
          "o.seq as copied_seq",
          "p.symbol",
          "p.symbol_type",
          "p.quantity",
          "p.cost",
          "p.opened_at",
          "p.trade_id",
        ])
        .where("a.kind", "=", "model")
        .where("a.strategy_id", "in", chunk)
        .execute(),
      // The few orders marked DoNotSyncToOpen (a partial index holds them: the literal lets it serve),
      // and the trades their opening fills went into.
      db
        .selectFrom("orders as d")
        .innerJoin("fills as f", "f.order_id", "d.id")
        .select(["d.strategy_id", "f.trade_id"])
        .distinct()
        .where("d.do_not_sync_to_open", "=", sql.lit(1))
        .where("d.open_close", "=", "open")
        .where("d.strategy_id", "in", chunk)
        .execute(),
    ]);
    const marked = new Set(doNotSync.map((row) => `${row.strategy_id}|${row.trade_id}`));
    for (const row of rows) {
      const strategyId = row.strategy_id as number;
      let fact = facts.get(strategyId);
      if (!fact) {
        fact = {
          strategyId,
          cash: storedDecimal(row.cash),
          positions: new Map(),
          copierBehind: Number(row.event_seq) > Number(row.copied_seq ?? 0),
        };
        facts.set(strategyId, fact);
      }
      if (row.symbol === null || row.quantity === null) continue;
      (fact.positions as Map<string, StrategyPositionFact>).set(row.symbol, {
        symbol: row.symbol,
        symbolType: row.symbol_type as string,
        quantity: storedDecimal(row.quantity),
        cost: storedDecimal(row.cost as string),
        openedAt: Number(row.opened_at),
        doNotSync: row.trade_id !== null && marked.has(`${strategyId}|${row.trade_id}`),
      });
    }
  }
  return facts;
}

/** The strategy's model account at market: its equity, as the copier values it. */
export function modelValueOf(facts: StrategyFacts, view: MarketView): Decimal {
  const positions = [...facts.positions.values()].map((p) => ({
    instrument: instrumentOf(p.symbol, p.symbolType),
    position: { quantity: p.quantity, cost: p.cost },
  }));
  return equityOf(facts.cash, markPositions(positions, view));
}

/** A setup's sync settings: the flags, DoNotJoinOpenPositions and when it started. */
export interface SyncSetup {
  readonly id: number;
  readonly willSync: Readonly<Record<SyncMarket, boolean>>;
  readonly doNotJoin: boolean;
  readonly startedAt: number;
}

/** Why the strategy's position is left out of the sync, if it is (docs/decisions.md, issue 14). */
export function exclusionOf(position: StrategyPositionFact, setup: SyncSetup): "do_not_sync" | "not_joined" | null {
  if (position.doNotSync) return "do_not_sync";
  // Open when the setup started (the same instant counts: it cannot be told apart).
  if (setup.doNotJoin && position.openedAt <= setup.startedAt) return "not_joined";
  return null;
}

/** What a venue's claim row holds for a setup. */
export interface VenueClaim {
  /** The open last synced (0: none). */
  readonly opensAt: number;
  /** An open SyncPositionsToOpen asked to be synced at. */
  readonly requestedFor: number | null;
}

/** The setups' sync settings and their claims by venue, in one statement per chunk. */
export async function readSyncSetups(
  db: Tx,
  setupIds: readonly number[],
): Promise<{ setups: Map<number, SyncSetup>; claims: Map<string, VenueClaim> }> {
  const setups = new Map<number, SyncSetup>();
  const claims = new Map<string, VenueClaim>();
  for (let first = 0; first < setupIds.length; first += CHUNK) {
    const rows = await db
      .selectFrom("autotrade_setups as s")
      .leftJoin("autotrade_syncs as c", "c.setup_id", "s.id")
      .select([
        "s.id",
        "s.sync_to_open",
        "s.do_not_join_open_positions",
        "s.started_at",
        "c.venue",
        "c.opens_at",
        "c.requested_for",
      ])
      .where("s.id", "in", setupIds.slice(first, first + CHUNK))
      .execute();
    for (const row of rows) {
      if (!setups.has(row.id))
        setups.set(row.id, {
          id: row.id,
          willSync: willSyncOf(row.sync_to_open),
          doNotJoin: row.do_not_join_open_positions === 1,
          startedAt: Number(row.started_at),
        });
      if (row.venue !== null)
        claims.set(claimKey(row.id, row.venue), {
          opensAt: Number(row.opens_at),
          requestedFor: row.requested_for === null ? null : Number(row.requested_for),
        });
    }
  }
  return { setups, claims };
}

export const claimKey = (setupId: number, venue: string) => `${setupId}|${venue}`;
