import { createHash } from "node:crypto";
import { add, fromInteger, mulInteger, toNumber } from "../decimal.js";
import type { Instrument } from "../symbols/instrument.js";
import type { MarketQuote } from "./quote.js";

/**
 * The simulated market: a seeded random walk per symbol that depends only on
 * the seed, the symbol and the service clock, so the same clock time always
 * shows the same price however often (or rarely) it is asked for. The walk
 * sums noise at every time scale (one term per doubling of the step), which
 * gives random-walk-like paths in O(log t) per price. A price is the walk's
 * move over the trailing WINDOW_STEPS, so it wanders like a market from day to
 * day yet stays near the instrument's typical level over months.
 */
const STEP_MS = 1000;
const LEVELS = 21;
const WINDOW_STEPS = 5 * 86_400;
/** Relative move of one step: about 2% a day over 86,400 one-second steps. */
const VOLATILITY_PER_STEP = 0.02 / Math.sqrt(86_400);

/** Typical prices, so simulated contracts trade near where real ones do. */
const BASE_PRICES: Readonly<Record<string, number>> = {
  ES: 5000,
  MES: 5000,
  NQ: 18000,
  MNQ: 18000,
  RTY: 2000,
  M2K: 2000,
  YM: 39000,
  MYM: 39000,
  "6E": 1.08,
  "6J": 0.0067,
  "6B": 1.27,
  "6A": 0.66,
  "6C": 0.74,
  "6S": 1.12,
  HE: 85,
  LE: 180,
  GF: 250,
  ZT: 102,
  ZF: 106,
  ZN: 110,
  ZB: 118,
  ZC: 450,
  ZS: 1150,
  ZW: 600,
  ZM: 340,
  ZL: 45,
  CL: 75,
  MCL: 75,
  NG: 2.8,
  RB: 2.4,
  HO: 2.6,
  PL: 950,
  GC: 2300,
  MGC: 2300,
  SI: 28,
  HG: 4.4,
  KC: 220,
  SB: 20,
  CC: 8000,
  CT: 80,
  DX: 104,
  FDAX: 18000,
  FESX: 4900,
  FGBL: 131,
  USD: 1,
  EUR: 1.08,
  GBP: 1.27,
  JPY: 0.0067,
  CHF: 1.12,
  AUD: 0.66,
  CAD: 0.74,
  NZD: 0.61,
  SEK: 0.095,
  NOK: 0.093,
  DKK: 0.145,
  SGD: 0.74,
  HKD: 0.128,
  MXN: 0.058,
  ZAR: 0.054,
  TRY: 0.031,
  PLN: 0.25,
  CNH: 0.138,
};

/** A uniform number in [-1, 1) from the hash of its inputs. */
function noise(...parts: (string | number)[]): number {
  const digest = createHash("sha256").update(parts.join("|")).digest();
  return digest.readUInt32BE(0) / 2 ** 31 - 1;
}

function basePrice(seed: string, instrument: Instrument): number {
  switch (instrument.symbolType) {
    case "future":
      return BASE_PRICES[instrument.exchangeSymbol] ?? 100;
    case "forex": {
      const [base, quote] = instrument.exchangeSymbol.split("/") as [string, string];
      return (BASE_PRICES[base] ?? 1) / (BASE_PRICES[quote] ?? 1);
    }
    case "option":
      return 1 + 10 * (noise(seed, instrument.fullSymbol, "base") + 1);
    case "stock":
      return 20 + 240 * (noise(seed, instrument.fullSymbol, "base") + 1);
  }
}

/** The walk's position (in steps of unit variance) at a step. */
function walk(seed: string, symbol: string, step: number): number {
  let sum = 0;
  for (let level = 0; level < LEVELS; level++) {
    const span = 2 ** level;
    const block = Math.floor(step / span);
    // Each level contributes a noise value per block of 2^level steps, scaled so the sum's
    // variance grows about linearly with the distance between two steps, as a walk's does.
    sum += noise(seed, symbol, level, block) * Math.sqrt(span) * 0.5;
  }
  return sum;
}

/** The step of the walk a clock time falls in: the simulated quote changes once a step. */
export const simulatedStep = (atMs: number): number => Math.floor(atMs / STEP_MS);

/** The simulated quote of an instrument at a clock time. */
export function simulatedQuote(seed: string, instrument: Instrument, atMs: number): MarketQuote {
  const step = simulatedStep(atMs);
  const move = walk(seed, instrument.fullSymbol, step) - walk(seed, instrument.fullSymbol, step - WINDOW_STEPS);
  const relative = Math.exp(VOLATILITY_PER_STEP * move);
  const tick = instrument.tickSize;
  // On the tick grid, and never below one tick.
  const ticks = Math.max(1, Math.round((basePrice(seed, instrument) * relative) / toNumber(tick)));
  const bid = mulInteger(tick, ticks);
  const spreadTicks = 1 + Math.floor((noise(seed, instrument.fullSymbol, "spread", step) + 1) * 1.5);
  const ask = add(bid, mulInteger(tick, spreadTicks));
  const last = noise(seed, instrument.fullSymbol, "last", step) < 0 ? bid : ask;
  const lot = instrument.symbolType === "stock" ? 100 : instrument.symbolType === "forex" ? 100_000 : 1;
  const size = (salt: string) =>
    fromInteger(lot * (1 + Math.floor((noise(seed, instrument.fullSymbol, salt, step) + 1) * 10)));
  return {
    symbol: instrument.fullSymbol,
    bid,
    ask,
    last,
    bidSize: size("bidSize"),
    askSize: size("askSize"),
    atMs,
  };
}
