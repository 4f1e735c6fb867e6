import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { SyncMarket } from "../../core/autotrade/settings.js";
import { openVenues, type SyncVenue, venueOf } from "../../core/autotrade/sync-markets.js";
import type { RequestOutcome } from "../../core/autotrade/sync-outcome.js";
import type { ControllableClock } from "../../core/clock.js";
import { currentOrNextSession, sessionAt } from "../../core/sessions.js";
import {
  claimKey,
  readStrategyFacts,
  readSyncSetups,
  type StrategyFacts,
  type SyncSetup,
} from "../../services/autotrade-sync-facts.js";
import {
  claimOpens,
  insertSyncOrders,
  noteLastSync,
  requestOpens,
  type VenueOpen,
} from "../../services/autotrade-sync-writes.js";
import type { SyncRequests } from "../../services/runtime.js";
import type { NewAccountOrder } from "../../store/journal/batch.js";
import type { Storage } from "../../store/storage.js";
import { instrumentOf } from "../../store/trading-state.js";
import { transaction } from "../../store/transaction.js";
import type { MarketData } from "../market-data.js";
import { marketViewAt } from "../market-view.js";
import type { AutotradeDesk } from "./desk.js";
import type { FollowedSetup, FollowerAccount } from "./followers.js";
import { planSetupSync, type SetupSync, syncable } from "./sync-orders.js";

/**
 * AutoSync: at each market's open, every setup with IsAutoSyncEnabled and
 * WillSyncToOpen<market> set is brought to the scaled strategy position in
 * each symbol of that market, by market orders (purpose `sync`), and its
 * LastSync<market> is set. A pass runs every `intervalMs` of real time and
 * whenever the sandbox moves the clock: it syncs each setup once per venue
 * and session, as soon as it passes in the session (at the open, or later
 * when the service was down, the clock jumped, or the setup became
 * syncable during the session). The claim of the open and the orders are
 * written in one transaction; a claim another pass or process won first
 * leaves this one's orders unwritten, so a repeat never doubles a sync.
 *
 * SyncPositionsToOpen asks for a sync now (request()): markets open now are
 * synced at once, closed ones at their next open.
 */
export interface AutoSyncFrame {
  /** Resolves once the strategies' commits so far (and the copier's positions in them) are written. */
  drain(): Promise<void>;
}

interface Candidate {
  readonly account: FollowerAccount;
  readonly setup: FollowedSetup;
  readonly venue: SyncVenue;
  readonly opensAtMs: number;
}

export class AutoSync implements SyncRequests {
  /** The open each setup's venue was last settled at here (synced, lost to another, or not wanted). */
  readonly #settled = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Pick<ControllableClock, "nowMs">,
    private readonly frame: AutoSyncFrame,
    private readonly market: MarketData,
    private readonly desk: AutotradeDesk,
    private readonly logger: Logger,
    private readonly options: { readonly intervalMs: number },
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.#timer = setInterval(() => {
      this.run().catch(() => undefined);
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }

  /** One pass now, after the one running (if any) ends. */
  async run(): Promise<void> {
    while (this.#running) await this.#running.catch(() => undefined);
    if (this.#stopped) return;
    const pass = this.#pass();
    this.#running = pass;
    try {
      await pass;
    } catch (error) {
      this.logger.error({ err: error }, "AutoSync pass failed; taken up at the next one");
      throw error;
    } finally {
      this.#running = undefined;
    }
  }

  async #pass(): Promise<void> {
    // The strategies' commits and the copier's copies of them first: a sync must see what the copier made.
    await this.frame.drain();
    await this.desk.settled();
    const nowMs = this.clock.nowMs();
    const open = openVenues(nowMs);
    if (open.length === 0) return;
    const candidates: Candidate[] = [];
    for (const account of this.desk.heldAccounts()) {
      for (const setup of account.setups.values()) {
        if (!syncable(account, setup)) continue;
        for (const { venue, opensAtMs } of open) {
          if ((this.#settled.get(claimKey(setup.id, venue.id)) ?? -1) >= opensAtMs) continue;
          candidates.push({ account, setup, venue, opensAtMs });
        }
      }
    }
    if (candidates.length === 0) return;
    const db = this.storage.db;
    const { setups, claims } = await readSyncSetups(db, [...new Set(candidates.map((c) => c.setup.id))]);
    const wanted = candidates.filter((c) => {
      const key = claimKey(c.setup.id, c.venue.id);
      const sync = setups.get(c.setup.id);
      const claim = claims.get(key);
      const asked = claim?.requestedFor != null && claim.requestedFor <= c.opensAtMs;
      if (!sync || (claim && claim.opensAt >= c.opensAtMs) || (!sync.willSync[c.venue.market] && !asked)) {
        // Synced already (here or elsewhere), or not wanted at this open: not looked at again until the next.
        this.#settled.set(key, c.opensAtMs);
        return false;
      }
      return true;
    });
    if (wanted.length === 0) return;
    const facts = await readStrategyFacts(db, [...new Set(wanted.map((c) => c.setup.strategyId))]);
    await this.#sync(wanted, setups, facts, nowMs);
  }

  /** Plans the candidates' syncs, and writes those whose claims it wins with their orders. */
  async #sync(
    wanted: readonly Candidate[],
    setups: ReadonlyMap<number, SyncSetup>,
    facts: ReadonlyMap<number, StrategyFacts>,
    nowMs: number,
  ): Promise<void> {
    const view = marketViewAt(this.market, nowMs);
    const bySetup = new Map<number, Candidate[]>();
    for (const c of wanted) bySetup.set(c.setup.id, [...(bySetup.get(c.setup.id) ?? []), c]);
    const planned: { readonly candidates: Candidate[]; readonly sync: SetupSync }[] = [];
    // From reading the desk to adopting the orders nothing awaits: the copier sees them at once.
    for (const group of bySetup.values()) {
      const [first] = group as [Candidate];
      const strategy = facts.get(first.setup.strategyId);
      // The copier's copies of the strategy's latest orders may be on the way: the next pass syncs.
      if (!strategy || strategy.copierBehind) continue;
      const opensAt = new Map(group.map((c) => [c.venue.id, c.opensAtMs]));
      const sync = planSetupSync({
        account: first.account,
        setup: first.setup,
        sync: setups.get(first.setup.id) as SyncSetup,
        facts: strategy,
        venues: new Set(opensAt.keys()),
        view,
        nowMs,
        keyOf: (venue, symbol, leg) => `sync:${first.setup.id}:${venue.id}:${opensAt.get(venue.id)}:${symbol}:${leg}`,
      });
      planned.push({ candidates: group, sync });
    }
    if (planned.length === 0) return;
    const rows = planned.flatMap((p) => p.sync.rows);
    this.desk.adopt(rows);
    const opens: VenueOpen[] = planned.flatMap((p) =>
      p.candidates.map((c) => ({
        setupId: c.setup.id,
        venue: c.venue.id,
        market: c.venue.market,
        opensAt: c.opensAtMs,
      })),
    );
    let won: Set<string>;
    try {
      won = await transaction(this.storage, async (tx) => {
        const claimed = await claimOpens(tx, opens, nowMs);
        await insertSyncOrders(
          tx,
          rows.filter((row) => claimed.has(claimOfRow(row))),
        );
        await noteLastSync(tx, this.storage.backend, syncedMarkets(opens, claimed), nowMs);
        return claimed;
      });
    } catch (error) {
      this.desk.forget(rows);
      throw error;
    }
    for (const open of opens) this.#settled.set(claimKey(open.setupId, open.venue), open.opensAt);
    const kept = rows.filter((row) => won.has(claimOfRow(row)));
    this.desk.forget(rows.filter((row) => !won.has(claimOfRow(row))));
    this.#handOver(
      planned.filter((p) => p.candidates.some((c) => won.has(claimKey(c.setup.id, c.venue.id)))),
      kept,
    );
    if (kept.length > 0)
      this.logger.info({ orders: kept.length, setups: planned.length }, "AutoSync synced at the open");
  }

  /** The orders are durable: the desk stops following to flat where they open, and sends them. */
  #handOver(
    planned: readonly { readonly candidates: Candidate[]; readonly sync: SetupSync }[],
    rows: NewAccountOrder[],
  ) {
    for (const { candidates, sync } of planned) {
      const [first] = candidates as [Candidate];
      for (const symbol of sync.opened) this.desk.opened(first.account, first.setup.id, symbol);
    }
    this.desk.stored(rows);
  }

  /**
   * SyncPositionsToOpen: syncs the setups now in the markets open now (the
   * WillSyncToOpen flags do not matter: the customer asked), and asks for a
   * sync at the next open of each market that is closed now.
   */
  async request(
    targets: readonly { readonly accountId: number; readonly setupId: number }[],
  ): Promise<Map<number, RequestOutcome>> {
    const outcomes = new Map<number, RequestOutcome>();
    await this.frame.drain();
    await this.desk.settled();
    const nowMs = this.clock.nowMs();
    const db = this.storage.db;
    const found = targets.flatMap(({ accountId, setupId }) => {
      const account = this.desk.accountOf(accountId);
      const setup = account?.setups.get(setupId);
      if (!account || !setup || !account.linked || setup.status !== "active" || !setup.enabled) {
        outcomes.set(setupId, { kind: "unavailable" });
        return [];
      }
      if (!setup.syncEnabled) {
        outcomes.set(setupId, { kind: "sync_disabled" });
        return [];
      }
      return [{ account, setup }];
    });
    if (found.length === 0) return outcomes;
    const { setups } = await readSyncSetups(
      db,
      found.map((f) => f.setup.id),
    );
    const facts = await readStrategyFacts(db, [...new Set(found.map((f) => f.setup.strategyId))]);
    const view = marketViewAt(this.market, nowMs);
    const work: { account: FollowerAccount; setup: FollowedSetup; sync: SetupSync; later: VenueOpen[] }[] = [];
    for (const { account, setup } of found) {
      const strategy = facts.get(setup.strategyId);
      const sync = setups.get(setup.id);
      if (!strategy || !sync || strategy.copierBehind) {
        outcomes.set(setup.id, { kind: "busy" });
        continue;
      }
      const venues = venuesHeld(account, setup, strategy);
      const openNow = new Set([...venues].filter((v) => sessionAt(v.schedule, nowMs) !== null).map((v) => v.id));
      const later = [...venues]
        .filter((v) => !openNow.has(v.id))
        .map((v) => ({
          setupId: setup.id,
          venue: v.id,
          market: v.market,
          opensAt: currentOrNextSession(v.schedule, nowMs).opensAtMs,
        }));
      const request = randomUUID();
      const planned = planSetupSync({
        account,
        setup,
        sync,
        facts: strategy,
        venues: openNow,
        view,
        nowMs,
        keyOf: (_venue, symbol, leg) => `sync:${setup.id}:${request}:${symbol}:${leg}`,
      });
      work.push({ account, setup, sync: planned, later });
    }
    const rows = work.flatMap((w) => w.sync.rows);
    this.desk.adopt(rows);
    const syncedNow = new Map<number, Set<SyncMarket>>();
    for (const w of work) {
      const markets = new Set(w.sync.symbols.map((s) => s.venue.market));
      if (markets.size > 0) syncedNow.set(w.setup.id, markets);
    }
    try {
      await transaction(this.storage, async (tx) => {
        await requestOpens(
          tx,
          work.flatMap((w) => w.later),
        );
        await insertSyncOrders(tx, rows);
        await noteLastSync(tx, this.storage.backend, syncedNow, nowMs);
      });
    } catch (error) {
      this.desk.forget(rows);
      throw error;
    }
    for (const w of work) for (const symbol of w.sync.opened) this.desk.opened(w.account, w.setup.id, symbol);
    this.desk.stored(rows);
    for (const w of work) {
      const byMarket = new Map<SyncMarket, number>();
      // Every market looked at now is synced, in sync already or not.
      for (const s of w.sync.symbols) if (!byMarket.has(s.venue.market)) byMarket.set(s.venue.market, 0);
      for (const row of w.sync.rows) {
        const market = venueOf(instrumentOf(row.symbol, row.symbol_type)).market;
        byMarket.set(market, (byMarket.get(market) ?? 0) + 1);
      }
      outcomes.set(w.setup.id, {
        kind: "synced",
        now: [...byMarket].map(([market, orders]) => ({ market, orders })),
        later: w.later.map((l) => ({ market: l.market, opensAtMs: l.opensAt })),
        left: w.sync.symbols.flatMap((s) => (s.plan.blocked ? [{ symbol: s.symbol, block: s.plan.blocked }] : [])),
      });
    }
    return outcomes;
  }
}

/** The claim an order of an automatic sync belongs to (its key: `sync:<setup>:<venue>:<open>:...`). */
function claimOfRow(row: NewAccountOrder): string {
  const [, setupId, venue] = row.idempotency_key.split(":");
  return claimKey(Number(setupId), venue ?? "");
}

/** The markets whose opens were claimed, by setup: their LastSync moves to now. */
function syncedMarkets(opens: readonly VenueOpen[], claimed: ReadonlySet<string>): Map<number, Set<SyncMarket>> {
  const synced = new Map<number, Set<SyncMarket>>();
  for (const open of opens) {
    if (!claimed.has(claimKey(open.setupId, open.venue))) continue;
    const markets = synced.get(open.setupId) ?? new Set();
    markets.add(open.market);
    synced.set(open.setupId, markets);
  }
  return synced;
}

/** The venues of the symbols the strategy or the setup holds. */
function venuesHeld(account: FollowerAccount, setup: FollowedSetup, facts: StrategyFacts): Set<SyncVenue> {
  const venues = new Set<SyncVenue>();
  for (const p of facts.positions.values()) venues.add(venueOf(instrumentOf(p.symbol, p.symbolType)));
  for (const held of account.positions.values())
    if (held.strategyId === setup.strategyId) venues.add(venueOf(instrumentOf(held.symbol, held.symbolType)));
  return venues;
}
