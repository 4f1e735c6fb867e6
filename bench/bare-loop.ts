/**
 * The bare baseline of the fill loop's quiet market (bench/orders.ts part 2):
 * the same quotes through the least any index must do for a quote that fills
 * nothing, in the same process and the same run: the quote kept by symbol (as
 * the market data keeps a hand quote), the symbol's ladder heads looked up,
 * and the ask compared with the highest buy limit and the lowest buy stop.
 * Fed and timed one quote at a time with the same yields as the loop, so the
 * two figures differ only by what the loop does beyond that: what the ratio
 * says, where the absolute figure says as much about the machine.
 */
import { performance } from "node:perf_hooks";
import type { Decimal } from "../src/core/decimal.js";
import type { MarketQuote } from "../src/core/market/quote.js";
import { percentile } from "./support.js";

/** The heads of a symbol's ladders of resting buy orders (null: none on that ladder). */
export interface BuyHeads {
  readonly highestLimit: Decimal | null;
  readonly lowestStop: Decimal | null;
}

export interface BareFigures {
  readonly quotes: number;
  readonly seconds: number;
  readonly quotesPerSec: number;
  readonly quoteP50Us: number;
  readonly quoteP99Us: number;
  /** Quotes that reached a head: the quiet market must cross none. */
  readonly crossed: number;
}

/** The heads of each symbol's ladders of the orders (buy limits and buy stops, as the bench rests them). */
export function buyHeadsOf(
  orders: readonly { readonly symbol: string; readonly limit: Decimal | null; readonly stop: Decimal | null }[],
): Map<string, BuyHeads> {
  const heads = new Map<string, BuyHeads>();
  for (const { symbol, limit, stop } of orders) {
    const held = heads.get(symbol) ?? { highestLimit: null, lowestStop: null };
    heads.set(symbol, {
      highestLimit:
        limit !== null && (held.highestLimit === null || limit > held.highestLimit) ? limit : held.highestLimit,
      lowestStop: stop !== null && (held.lowestStop === null || stop < held.lowestStop) ? stop : held.lowestStop,
    });
  }
  return heads;
}

/** A phase's rate and per-quote times from its length and each quote's time in ms (sorted here). */
export function quoteRates(durations: Float64Array, seconds: number) {
  durations.sort();
  return {
    quotes: durations.length,
    seconds: Number(seconds.toFixed(3)),
    quotesPerSec: Math.round(durations.length / seconds),
    quoteP50Us: Math.round(percentile(durations, 50) * 1000),
    quoteP99Us: Math.round(percentile(durations, 99) * 1000),
    quoteMaxMs: Number((durations.at(-1) ?? 0).toFixed(2)),
  };
}

/** Feeds the quotes through the bare index, `yieldEvery` quotes between two turns of the event loop. */
export async function bareQuiet(
  quotes: readonly MarketQuote[],
  heads: ReadonlyMap<string, BuyHeads>,
  yieldEvery: number,
): Promise<BareFigures> {
  const kept = new Map<string, MarketQuote>();
  const durations = new Float64Array(quotes.length);
  let crossed = 0;
  const started = performance.now();
  for (let i = 0; i < quotes.length; i++) {
    if (i % yieldEvery === 0) await new Promise((resolve) => setImmediate(resolve));
    const quote = quotes[i] as MarketQuote;
    const t0 = performance.now();
    kept.set(quote.symbol, quote);
    const symbol = heads.get(quote.symbol);
    if (
      symbol &&
      ((symbol.highestLimit !== null && quote.ask <= symbol.highestLimit) ||
        (symbol.lowestStop !== null && quote.ask >= symbol.lowestStop))
    ) {
      crossed += 1;
    }
    durations[i] = performance.now() - t0;
  }
  return { ...quoteRates(durations, (performance.now() - started) / 1000), crossed };
}
