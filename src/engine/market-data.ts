import { ConfigError } from "../config-error.js";
import type { Clock } from "../core/clock.js";
import { add, type Decimal, max, sub, ZERO } from "../core/decimal.js";
import type { Side } from "../core/fills.js";
import { type MarketQuote, sameQuote } from "../core/market/quote.js";
import { simulatedQuote, simulatedStep } from "../core/market/simulated.js";
import type { Instrument } from "../core/symbols/instrument.js";
import { readReplayFile } from "./replay-file.js";

/**
 * Where prices come from (`MARKET_FEED`): `simulated` (default) walks every
 * symbol from a seed, `manual` knows only hand quotes, `replay:<file>` plays a
 * CSV of quotes or bars as the service clock passes their times. Hand quotes
 * (sandbox SetQuote) take a symbol over from the other sources for good, so a
 * scenario that sets prices by hand stays deterministic. Hand quotes live in
 * memory: after a restart a scenario sets them again.
 */
export type MarketFeed =
  | { readonly kind: "simulated"; readonly seed: string }
  | { readonly kind: "manual" }
  | { readonly kind: "replay"; readonly file: string };

export function parseMarketFeed(value: string | undefined): MarketFeed {
  const text = value?.trim() ?? "";
  if (text === "" || text === "simulated") return { kind: "simulated", seed: "strategy-hub" };
  if (text === "manual") return { kind: "manual" };
  if (text.startsWith("replay:") && text.length > "replay:".length) return { kind: "replay", file: text.slice(7) };
  throw new ConfigError("MARKET_FEED", `must be simulated, manual or replay:<file>, got ${value}`);
}

/** What fills took from a symbol's current quote, by side. */
interface Taken {
  /** The quote taken from: it, or one with the same prices, sizes and time, is the same quote. */
  readonly source: MarketQuote;
  buy: Decimal;
  sell: Decimal;
}

export class MarketData {
  readonly #manual = new Map<string, MarketQuote>();
  #handQuotes = 0;
  /** What fills have taken from each symbol's current quote, by side, so its size is taken once. */
  readonly #taken = new Map<string, Taken>();
  readonly #replay = new Map<string, MarketQuote[]>();
  /** The last simulated quote of each symbol: the walk changes once a step, and computing it costs dozens of hashes. */
  readonly #simulated = new Map<string, MarketQuote>();

  /** A replay feed's quotes, in time order, are read first: `open` does so. */
  constructor(
    private readonly feed: MarketFeed,
    private readonly clock: Clock,
    replay: readonly MarketQuote[] = [],
  ) {
    for (const quote of replay) {
      const series = this.#replay.get(quote.symbol) ?? [];
      series.push(quote);
      this.#replay.set(quote.symbol, series);
    }
  }

  /** The market of a feed, with a replay file read (streamed) first. */
  static async open(feed: MarketFeed, clock: Clock): Promise<MarketData> {
    if (feed.kind !== "replay") return new MarketData(feed, clock);
    const read = await readReplayFile(feed.file);
    if (!read.ok) throw new ConfigError("MARKET_FEED", `replay file ${feed.file}: ${read.error}`);
    return new MarketData(feed, clock, read.quotes);
  }

  get feedKind(): MarketFeed["kind"] {
    return this.feed.kind;
  }

  /** A hand quote: from now on the other sources leave this symbol alone. */
  setQuote(quote: MarketQuote): void {
    this.#manual.set(quote.symbol, quote);
    this.#handQuotes += 1;
  }

  /** Counts hand quotes set: what a view of the market at an instant shows changes only with them. */
  get handQuotes(): number {
    return this.#handQuotes;
  }

  /** The quote with what fills have already taken from its sizes removed. */
  available(quote: MarketQuote): MarketQuote {
    const taken = this.#taken.get(quote.symbol);
    if (!taken || !sameQuote(taken.source, quote)) return quote;
    const left = (size: Decimal | null, used: Decimal) => (size === null ? null : max(sub(size, used), ZERO));
    return { ...quote, askSize: left(quote.askSize, taken.buy), bidSize: left(quote.bidSize, taken.sell) };
  }

  /** Records a fill against the quote (a buy takes from the ask size, a sell from the bid size); negative gives back. */
  take(quote: MarketQuote, side: Side, quantity: Decimal): void {
    let taken = this.#taken.get(quote.symbol);
    if (!taken || !sameQuote(taken.source, quote)) {
      taken = { source: quote, buy: ZERO, sell: ZERO };
      this.#taken.set(quote.symbol, taken);
    }
    taken[side] = add(taken[side], quantity);
  }

  /** The current quote of the instrument, or null when no source has one. */
  quote(instrument: Instrument): MarketQuote | null {
    return this.quoteAt(instrument, this.clock.now().getTime());
  }

  /**
   * The quote as of an instant (daily marks of closes the clock has passed):
   * the simulated walk and the replay at that time; a hand quote, which has
   * no history, as it stands.
   */
  quoteAt(instrument: Instrument, atMs: number): MarketQuote | null {
    const manual = this.#manual.get(instrument.fullSymbol);
    if (manual) return manual;
    switch (this.feed.kind) {
      case "manual":
        return null;
      case "simulated":
        return this.#simulatedAt(this.feed.seed, instrument, atMs);
      case "replay":
        return latestAtOrBefore(this.#replay.get(instrument.fullSymbol) ?? [], atMs);
    }
  }

  #simulatedAt(seed: string, instrument: Instrument, atMs: number): MarketQuote {
    const kept = this.#simulated.get(instrument.fullSymbol);
    if (kept?.atMs === atMs) return kept;
    const quote =
      kept && simulatedStep(kept.atMs) === simulatedStep(atMs)
        ? { ...kept, atMs }
        : simulatedQuote(seed, instrument, atMs);
    this.#simulated.set(instrument.fullSymbol, quote);
    return quote;
  }
}

function latestAtOrBefore(series: readonly MarketQuote[], atMs: number): MarketQuote | null {
  let low = 0;
  let high = series.length - 1;
  let found: MarketQuote | null = null;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const quote = series[middle] as MarketQuote;
    if (quote.atMs <= atMs) {
      found = quote;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}
