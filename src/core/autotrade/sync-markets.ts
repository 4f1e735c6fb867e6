import {
  EUREX,
  FOREX,
  GLOBEX,
  ICE_SOFTS,
  OSAKA,
  type Schedule,
  scheduleOf,
  sessionAt,
  US_EQUITIES,
  XETRA,
} from "../sessions.js";
import type { Instrument } from "../symbols/instrument.js";
import type { SyncMarket } from "./settings.js";

/**
 * Where AutoSync runs: each of the eight markets of WillSyncToOpen opens on
 * a schedule of src/core/sessions.ts, in its own zone (so across daylight
 * saving it opens at the local time, not a fixed UTC one). A market whose
 * symbols trade on two schedules (US futures: CME Globex and ICE's softs) is
 * synced at each one's open, for the symbols trading there: a venue is that
 * pair, and AutoSync keeps one sync per setup, venue and open.
 */
export interface SyncVenue {
  /** Stable name, stored with each sync (the market, and the schedule when a market has two). */
  readonly id: string;
  readonly market: SyncMarket;
  readonly schedule: Schedule;
}

export const SYNC_VENUES: readonly SyncVenue[] = [
  { id: "StocksUSA", market: "StocksUSA", schedule: US_EQUITIES },
  { id: "StocksEurope", market: "StocksEurope", schedule: XETRA },
  { id: "OptionsUSA", market: "OptionsUSA", schedule: US_EQUITIES },
  // Eurex's equity options trade Xetra's hours.
  { id: "OptionsEurope", market: "OptionsEurope", schedule: XETRA },
  { id: "FuturesUSA", market: "FuturesUSA", schedule: GLOBEX },
  { id: "FuturesUSA.Softs", market: "FuturesUSA", schedule: ICE_SOFTS },
  { id: "FuturesEurope", market: "FuturesEurope", schedule: EUREX },
  { id: "FuturesAsia", market: "FuturesAsia", schedule: OSAKA },
  { id: "Forex", market: "Forex", schedule: FOREX },
];

export const VENUES_BY_ID: ReadonlyMap<string, SyncVenue> = new Map(SYNC_VENUES.map((venue) => [venue.id, venue]));

/** Futures exchanges (ISO 10383 MICs) by region; any other futures exchange is a US one. */
const EUROPEAN_FUTURES = new Set(["XEUR", "IFEU", "IFLL"]);
const ASIAN_FUTURES = new Set(["XOSE", "XSIM", "XHKF", "XSFE"]);

/**
 * The market an instrument belongs to. The service lists US stocks and
 * options only (StocksEurope and OptionsEurope hold none of its symbols yet),
 * and futures of US exchanges and Eurex (none of an Asian exchange yet).
 */
export function syncMarketOf(instrument: Pick<Instrument, "symbolType" | "exchange">): SyncMarket {
  switch (instrument.symbolType) {
    case "stock":
      return "StocksUSA";
    case "option":
      return "OptionsUSA";
    case "forex":
      return "Forex";
    case "future":
      if (EUROPEAN_FUTURES.has(instrument.exchange)) return "FuturesEurope";
      if (ASIAN_FUTURES.has(instrument.exchange)) return "FuturesAsia";
      return "FuturesUSA";
  }
}

/** The venue an instrument is synced at: its market, at its own schedule's open. */
export function venueOf(instrument: Pick<Instrument, "symbolType" | "exchange" | "exchangeSymbol">): SyncVenue {
  const market = syncMarketOf(instrument);
  const schedule = scheduleOf(instrument);
  const venue = SYNC_VENUES.find((v) => v.market === market && v.schedule === schedule);
  // Every market's symbols trade on one of its venues' schedules; the market's first venue otherwise.
  return venue ?? (SYNC_VENUES.find((v) => v.market === market) as SyncVenue);
}

/** The venues in session at the instant, each with the open of its session. */
export function openVenues(atMs: number): { readonly venue: SyncVenue; readonly opensAtMs: number }[] {
  return SYNC_VENUES.flatMap((venue) => {
    const session = sessionAt(venue.schedule, atMs);
    return session ? [{ venue, opensAtMs: session.opensAtMs }] : [];
  });
}
