import type { Caller } from "../core/access.js";
import { addDays, instantOf, type LocalDate, localDate } from "../core/calendar.js";
import { ControllableClock } from "../core/clock.js";
import { abs, decimal, fromInteger, isZero, sign, toNumber } from "../core/decimal.js";
import { seededRandom } from "../core/random.js";
import { sessionAt, US_EQUITIES } from "../core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../core/symbols/instrument.js";
import { MarketData } from "../engine/market-data.js";
import { markClosesThrough } from "./equity-marks.js";
import { type OrderInput, placeOrder } from "./orders.js";
import { dbOf, type Runtime } from "./runtime.js";
import { addStrategy } from "./strategies.js";
import { type TradingContext, type TradingRuntime, workStrategy } from "./trading.js";

/**
 * A year of trading history for the demo strategies, made by the real engine:
 * a clock of its own walks the year day by day over the simulated market; on
 * each NYSE trading day each strategy decides (from a seeded generator, so the
 * history is the same every time) and sends its orders at 10:00 New York,
 * working orders get the market of 15:30, and the close is marked. Nothing is
 * inserted behind the engine's back.
 */
export interface DemoTrader {
  readonly name: string;
  readonly owner: Caller;
  /** Who creates it: the owner's site administrator (who may make it public). */
  readonly creator: Caller;
  readonly isPublic: boolean;
  readonly startingCapital: number;
  readonly symbols: readonly string[];
  /** Shares or units per order, lowest and highest. */
  readonly size: readonly [number, number];
  /** Whether entries carry a profit target and stop loss (percent from the price). */
  readonly brackets: boolean;
  readonly shorts: boolean;
}

const NEW_YORK = "America/New_York";

const at = (day: LocalDate, hour: number, minute = 0) => instantOf(NEW_YORK, day, hour * 60 + minute);

/** Places a strategy's orders for a day: enter where flat, leave what has been held long enough. */
async function tradeDay(
  ctx: TradingContext,
  strategyId: number,
  trader: DemoTrader,
  random: () => number,
  heldSince: Map<string, number>,
  dayIndex: number,
): Promise<void> {
  const positions = await dbOf(ctx)
    .selectFrom("positions")
    .select(["symbol", "quantity"])
    .where("strategy_id", "=", strategyId)
    .execute();
  for (const symbol of trader.symbols) {
    const instrument = fromServiceSymbol(symbol) as Instrument;
    const held = positions.find((p) => p.symbol === instrument.fullSymbol);
    const quantity = held ? decimal(held.quantity) : fromInteger(0);
    const order = (side: "buy" | "sell", size: number, extra: Partial<OrderInput> = {}): OrderInput => ({
      strategyId,
      instrument,
      type: "market",
      side,
      tif: "gtc",
      quantity: fromInteger(size),
      ...extra,
    });
    if (!isZero(quantity)) {
      const since = heldSince.get(symbol) ?? dayIndex;
      if (dayIndex - since >= 3 && random() < 0.35) {
        await placeOrder(ctx, order(sign(quantity) > 0 ? "sell" : "buy", toNumber(abs(quantity))));
        heldSince.delete(symbol);
      }
      continue;
    }
    heldSince.delete(symbol);
    if (random() > 0.3) continue;
    const side = trader.shorts && random() < 0.4 ? "sell" : "buy";
    const [low, high] = trader.size;
    const size = Math.round(low + random() * (high - low));
    const quote = ctx.market.quote(instrument);
    if (!quote) continue;
    const price = toNumber(side === "buy" ? quote.ask : quote.bid);
    const tick = toNumber(instrument.tickSize);
    const away = (fraction: number) => decimal((Math.round((price * (1 + fraction)) / tick) * tick).toFixed(8));
    const exits: Partial<OrderInput> = trader.brackets
      ? side === "buy"
        ? { profitTarget: away(0.03), stopLoss: away(-0.02) }
        : { profitTarget: away(-0.03), stopLoss: away(0.02) }
      : {};
    await placeOrder(ctx, order(side, size, exits));
    heldSince.set(symbol, dayIndex);
  }
}

/**
 * Creates the traders' strategies `days` before `nowMs` and trades them
 * through every NYSE trading day up to the last close before `nowMs`.
 */
export async function tradeDemoHistory(
  runtime: Runtime & Pick<TradingRuntime, "frame">,
  traders: readonly DemoTrader[],
  nowMs: number,
  /** Told each month of history as it is traded. */
  progress: (line: string) => void = () => undefined,
  // A little over a year, so the record holds a full year of marks and its returns are annualized.
  days = 400,
): Promise<number[]> {
  const clock = new ControllableClock(() => nowMs, { kind: "fixed", atMs: nowMs - days * 86_400_000 });
  const market = new MarketData({ kind: "simulated", seed: "strategy-hub" }, clock);
  const history: TradingRuntime = { storage: runtime.storage, clock, market, frame: runtime.frame };
  const ids: number[] = [];
  for (const trader of traders) {
    const { strategyId } = await addStrategy(
      { ...history, caller: trader.creator },
      {
        name: trader.name,
        startingCapital: trader.startingCapital,
        ownerPersonId: trader.owner.personId,
        ...(trader.isPublic ? { initialSiteVisibility: true } : {}),
      },
    );
    ids.push(strategyId);
  }
  await markClosesThrough(history, clock.nowMs());
  const states = traders.map((_, i) => ({ random: seededRandom(1000 + i), heldSince: new Map<string, number>() }));
  let day = localDate(NEW_YORK, clock.nowMs());
  for (let dayIndex = 0; at(day, 16, 1) < nowMs; day = addDays(day, 1), dayIndex++) {
    if (day.day === 1) progress(`demo data: trading ${day.year}-${String(day.month).padStart(2, "0")}`);
    if (sessionAt(US_EQUITIES, at(day, 10)) === null) continue;
    clock.apply({ kind: "fixed", atMs: at(day, 10) });
    for (const [i, trader] of traders.entries()) {
      const state = states[i] as (typeof states)[number];
      const ctx = { ...history, caller: trader.owner };
      await tradeDay(ctx, ids[i] as number, trader, state.random, state.heldSince, dayIndex);
    }
    clock.apply({ kind: "fixed", atMs: at(day, 15, 30) });
    for (const id of ids) await workStrategy(history, id);
    clock.apply({ kind: "fixed", atMs: at(day, 16, 1) });
    await markClosesThrough(history, clock.nowMs());
  }
  return ids;
}
