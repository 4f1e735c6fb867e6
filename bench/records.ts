/**
 * `npm run bench:records`: reading a long performance record.
 *
 * One public strategy with 5 years of daily history (2021-03-10 to
 * 2026-03-10): 10,000 closed trades on 10 stocks, each an opening and a
 * closing fill (market orders, Default plan commissions, MAE for the trades
 * that went under water), and a mark at every NYSE close whose equity follows
 * the cash and the open positions at cost (so the cumulative P&L of the trades
 * closed by then), beside an SPY series. The rows are written straight into a
 * fresh database before the service starts; then the service (as `npm start`
 * runs it, SANDBOX=1, MARKET_FEED=manual, clock set to the end) answers on
 * GEN, under autocannon:
 *   details:     GET /Strategies/GetStrategyDetails
 *   daily:       GET /Strategies/GetStrategyHistoricalDailyEquity (the model plan: the marks as stored)
 *   daily inst.: the same with CommissionPlan=Institutional (restated from the marks' running totals)
 * Every answer must be 200. Beside each, in the same run, a bare Fastify
 * server answers the same request with the bytes the service answered it
 * (read once before measuring: a bare GET of the details, the same bytes of
 * the daily equity), the two measured in turn over alternating rounds
 * (bench/comparison.ts), and the ratio of the two is printed with the issue's
 * target (details ≥ 10% of bare, daily equity ≥ 50%).
 *
 * Env: BENCH_SECONDS (default 10) per server and operation, split over
 * BENCH_ROUNDS (default 3) rounds, and BENCH_CONNECTIONS (default 10);
 * DATABASE_URL adds PostgreSQL (schema bench_records_<pid>, dropped at the
 * end, also on failure). Only 127.0.0.1 (and the DATABASE_URL server) is contacted.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ControllableClock } from "../src/core/clock.js";
import {
  addCommissions,
  commission,
  commissionPlan,
  commissionsByPlan,
  type PlanCommissions,
  planCommissionsText,
} from "../src/core/commissions.js";
import {
  add,
  type Decimal,
  decimal,
  formatDecimal,
  fromInteger,
  mul,
  neg,
  ONE,
  sub,
  ZERO,
} from "../src/core/decimal.js";
import { seededRandom } from "../src/core/random.js";
import { fold } from "../src/core/search.js";
import { currentOrNextSession, type TradingSession, US_EQUITIES } from "../src/core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../src/core/symbols/instrument.js";
import { addTotals } from "../src/engine/outbox/consumer.js";
import { recordsConsumer } from "../src/engine/outbox/records.js";
import { closesBetween } from "../src/services/equity-marks.js";
import { createPerson } from "../src/services/people.js";
import { migrateToLatest } from "../src/store/migrate.js";
import { openStorage, type Storage } from "../src/store/storage.js";
import { transaction } from "../src/store/transaction.js";
import { compareWithBare, type Route, secondsPerRound } from "./comparison.js";
import {
  ADMIN_KEY,
  apiCall,
  exited,
  type Figures,
  freePorts,
  HOST,
  JSON_HEADERS,
  onCleanup,
  positiveIntFromEnv,
  printLogTail,
  printTable,
  progress,
  runBench,
  schemaOfOurOwn,
  startService,
  stopChild,
  storageBackend,
  tempDir,
  waitUntilAnswering,
} from "./support.js";

type BackendName = "sqlite" | "postgres";

const WARMUP_SECONDS = 1;
/** Requests timed alone per operation (the median is shown), and how long the service may take to finish a run's leftovers. */
const SINGLE_CALLS = 5;
const DRAIN_TIMEOUT_MS = 60_000;

/** The record ends on a Tuesday after the close (17:00 New York) and starts 5 years before. */
const END_ISO = "2026-03-10T21:00:00Z";
const END_MS = Date.parse(END_ISO);
const START_MS = Date.parse("2021-03-10T21:00:00Z");
const STARTING_CAPITAL = 1_000_000;
const TRADES = 10_000;
/** The stocks traded: a price near the one of March 2021 and a beta to SPY. */
const STOCKS: readonly { readonly symbol: string; readonly price: number; readonly beta: number }[] = [
  { symbol: "AAPL", price: 120, beta: 1.2 },
  { symbol: "MSFT", price: 230, beta: 1.1 },
  { symbol: "NVDA", price: 130, beta: 1.8 },
  { symbol: "AMZN", price: 155, beta: 1.3 },
  { symbol: "META", price: 265, beta: 1.4 },
  { symbol: "JPM", price: 150, beta: 1.1 },
  { symbol: "XOM", price: 58, beta: 0.8 },
  { symbol: "KO", price: 51, beta: 0.6 },
  { symbol: "COST", price: 330, beta: 0.7 },
  { symbol: "AMD", price: 80, beta: 1.7 },
];
const SPY_START = 390;
/** Share of the trades on the right side of the move between their fills: the strategy's edge. */
const HIT_RATE = 0.54;
/** Share of the trades held overnight (one or two nights); the others close the day they open. */
const OVERNIGHT = 0.45;
/** Rows per INSERT (orders have 27 columns: 27,000 parameters, within both engines' limits) and INSERTs per transaction. */
const INSERT_ROWS = 1_000;
const INSERTS_PER_TX = 5;

/** Each operation measured, and the least share of the bare server's rate it should reach (issue 10). */
const OPERATIONS = [
  { name: "details", target: 0.1, path: (id: number) => `/Strategies/GetStrategyDetails?StrategyId=${id}` },
  {
    name: "daily",
    target: 0.5,
    path: (id: number) => `/Strategies/GetStrategyHistoricalDailyEquity?StrategyId=${id}`,
  },
  {
    name: "daily inst.",
    target: 0.5,
    path: (id: number) => `/Strategies/GetStrategyHistoricalDailyEquity?StrategyId=${id}&CommissionPlan=Institutional`,
  },
] as const;

interface Settings {
  /** Each server's measured time per operation, split over the rounds. */
  readonly seconds: number;
  readonly connections: number;
  /** Rounds in which the service and the bare server are measured in turn. */
  readonly rounds: number;
}

// ---------------------------------------------------------------------------
// The history, built once in memory and written to each backend

interface TradePlan {
  readonly stock: number;
  readonly side: "buy" | "sell";
  readonly quantity: number;
  readonly openAtMs: number;
  /** Cents. */
  readonly openPrice: number;
  readonly closeAtMs: number;
  readonly closePrice: number;
  /** The worst price seen while open, when the trade went under water (cents), and when. */
  readonly worstPrice: number | null;
  readonly worstAtMs: number | null;
}

/** One fill: the opening or the closing one of a trade. */
interface FillPlan {
  readonly trade: number;
  readonly opening: boolean;
  readonly atMs: number;
}

interface MarkPlan {
  readonly day: string;
  readonly marked_at: number;
  readonly equity: string;
  readonly cash: string;
  readonly exposure: string;
  readonly commissions_paid: string;
  readonly plan_commissions: string;
  readonly benchmark: string;
}

interface History {
  readonly sessions: readonly TradingSession[];
  /** In order of opening: the ids they get. */
  readonly trades: readonly TradePlan[];
  /** In time order. */
  readonly fills: readonly FillPlan[];
  /** Per trade: the Default plan commission of its opening and closing fill, in dollars. */
  readonly fees: readonly (readonly [Decimal, Decimal])[];
  /** Per trade: the model account's equity when its excursion was worst. */
  readonly maeEquity: readonly (Decimal | null)[];
  readonly marks: readonly MarkPlan[];
  readonly cash: Decimal;
  readonly commissionsPaid: Decimal;
  /** The Default commissions above, and what the fills would cost under every plan. */
  readonly planCommissions: PlanCommissions;
  /** Per trade: what its opening and closing fill would cost under every plan. */
  readonly planFees: readonly (readonly [PlanCommissions, PlanCommissions])[];
  readonly instruments: readonly Instrument[];
}

const price = (cents: number): Decimal => decimal((cents / 100).toFixed(2));

function dayText(session: TradingSession): string {
  const { year, month, day } = session.tradingDay;
  return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

function realizedOf(trade: TradePlan): Decimal {
  const move = sub(price(trade.closePrice), price(trade.openPrice));
  return mul(trade.side === "buy" ? move : neg(move), fromInteger(trade.quantity));
}

function buildHistory(): History {
  const plan = commissionPlan("Default");
  if (!plan) throw new Error("no Default commission plan");
  const instruments = STOCKS.map(({ symbol }) => {
    const instrument = fromServiceSymbol(symbol);
    if (instrument?.symbolType !== "stock" || instrument.fullSymbol !== symbol) {
      throw new Error(`${symbol} is not read as a stock`);
    }
    return instrument;
  });
  // The sessions as equity-marks.ts finds them: each close, and its trading day.
  const sessions = closesBetween(START_MS, END_MS).map((closeMs) => {
    const session = currentOrNextSession(US_EQUITIES, closeMs - 1);
    if (session.closesAtMs !== closeMs) throw new Error(`no session closing at ${new Date(closeMs).toISOString()}`);
    return session;
  });
  const days = sessions.length;

  // Daily closes: SPY a random walk with a drift, each stock its beta to SPY plus a move of its own.
  const next = seededRandom(20_260_310);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  const spy: number[] = [];
  const closes: number[][] = STOCKS.map(() => []);
  let spyLevel = SPY_START;
  const levels = STOCKS.map((stock) => stock.price);
  for (let d = 0; d < days; d++) {
    const market = 0.0004 + 0.011 * gauss();
    spyLevel *= 1 + market;
    spy.push(Math.round(spyLevel * 100));
    STOCKS.forEach((stock, s) => {
      levels[s] = Math.max(5, (levels[s] as number) * (1 + stock.beta * market + 0.014 * gauss()));
      closes[s]?.push(Math.round((levels[s] as number) * 100));
    });
  }
  const closeOf = (s: number, d: number) =>
    d < 0 ? Math.round((STOCKS[s]?.price as number) * 100) : (closes[s]?.[d] as number);
  /** A price within day d at a fraction of the session: between the closes, with some noise, in cents. */
  const priceAt = (s: number, d: number, fraction: number) => {
    const from = closeOf(s, d - 1);
    const to = closeOf(s, d);
    return Math.max(1, Math.round((from + (to - from) * fraction) * (1 + 0.002 * gauss())));
  };
  const instantAt = (d: number, fraction: number) => {
    const session = sessions[d] as TradingSession;
    const seconds = Math.round(((session.closesAtMs - session.opensAtMs) / 1000) * fraction);
    return session.opensAtMs + seconds * 1000;
  };

  // Each stock trades flat to flat, one trade after the other: trade k opens on day
  // k × days / perStock and closes the same day or on a later day, before the next one opens.
  const perStock = TRADES / STOCKS.length;
  const trades: TradePlan[] = [];
  STOCKS.forEach((stock, s) => {
    const openDay = (k: number) => (k < perStock ? Math.floor((k * days) / perStock) : days);
    const openFraction = Array.from({ length: perStock }, () => 0.05 + 0.75 * next());
    for (let k = 0; k < perStock; k++) {
      const d0 = openDay(k);
      const d1 = openDay(k + 1);
      const f0 = openFraction[k] as number;
      let dc = d0;
      let fc = f0 + (0.98 - f0) * (0.05 + 0.95 * next());
      if (next() < OVERNIGHT) {
        const day = Math.min(days - 1, d0 + 1 + Math.floor(next() * (d1 - d0)));
        if (day > d0) {
          dc = day;
          // On the day the next trade opens, close before it does.
          fc = day === d1 ? 0.01 + ((openFraction[k + 1] as number) - 0.02) * next() : 0.02 + 0.96 * next();
        }
      }
      const openPrice = priceAt(s, d0, f0);
      const closePrice = priceAt(s, dc, fc);
      const rises = closePrice >= openPrice;
      const side = rises === next() < HIT_RATE ? "buy" : "sell";
      const quantity = Math.max(1, Math.round((15_000 + 45_000 * next()) / (openPrice / 100) / 5) * 5);
      const openAtMs = instantAt(d0, f0);
      const closeAtMs = instantAt(dc, fc);
      if (closeAtMs <= openAtMs) throw new Error(`${stock.symbol} trade ${k} closes before it opens`);
      // Under water: always when it lost (at least to the closing price), else some of the time.
      const adverse = (from: number, share: number) =>
        Math.round(side === "buy" ? from * (1 - share) : from * (1 + share));
      const lost = side === "buy" ? closePrice < openPrice : closePrice > openPrice;
      const worstPrice = lost
        ? adverse(closePrice, 0.005 * next())
        : next() < 0.55
          ? adverse(openPrice, 0.001 + 0.009 * next())
          : null;
      const worstAtMs =
        worstPrice === null ? null : openAtMs + Math.floor((closeAtMs - openAtMs) * (0.1 + 0.8 * next()));
      trades.push({
        stock: s,
        side,
        quantity,
        openAtMs,
        openPrice,
        closeAtMs,
        closePrice,
        worstPrice,
        worstAtMs,
      });
    }
  });
  trades.sort((a, b) => a.openAtMs - b.openAtMs || a.stock - b.stock);
  const fills: FillPlan[] = trades.flatMap((trade, i) => [
    { trade: i, opening: true, atMs: trade.openAtMs },
    { trade: i, opening: false, atMs: trade.closeAtMs },
  ]);
  fills.sort((a, b) => a.atMs - b.atMs || (trades[a.trade]?.stock ?? 0) - (trades[b.trade]?.stock ?? 0));
  const fees = trades.map((trade) => {
    const instrument = instruments[trade.stock] as Instrument;
    const quantity = fromInteger(trade.quantity);
    return [
      commission(plan, instrument, quantity, price(trade.openPrice)),
      commission(plan, instrument, quantity, price(trade.closePrice)),
    ] as const;
  });
  // What each trade's opening and closing fill would cost under every plan.
  const planFees = trades.map((trade) => {
    const instrument = instruments[trade.stock] as Instrument;
    const quantity = fromInteger(trade.quantity);
    return [
      commissionsByPlan(instrument, quantity, price(trade.openPrice), ONE),
      commissionsByPlan(instrument, quantity, price(trade.closePrice), ONE),
    ] as const;
  });

  // The model account through time: cash, open positions at cost, commissions; a mark at each close.
  let cash = fromInteger(STARTING_CAPITAL);
  let paid = ZERO;
  let paidByPlan: PlanCommissions = {};
  const open = new Map<number, TradePlan>();
  const maeEquity: (Decimal | null)[] = trades.map(() => null);
  const marks: MarkPlan[] = [];
  let f = 0;
  const atCost = () => {
    let value = ZERO;
    let exposure = ZERO;
    for (const trade of open.values()) {
      const notional = mul(fromInteger(trade.quantity), price(trade.openPrice));
      value = add(value, trade.side === "buy" ? notional : neg(notional));
      exposure = add(exposure, notional);
    }
    return { value, exposure };
  };
  sessions.forEach((session, d) => {
    for (; f < fills.length && (fills[f] as FillPlan).atMs <= session.closesAtMs; f++) {
      const fill = fills[f] as FillPlan;
      const trade = trades[fill.trade] as TradePlan;
      const fee = (fees[fill.trade] as readonly [Decimal, Decimal])[fill.opening ? 0 : 1];
      const notional = mul(fromInteger(trade.quantity), price(fill.opening ? trade.openPrice : trade.closePrice));
      const buys = (trade.side === "buy") === fill.opening;
      cash = sub(add(cash, buys ? neg(notional) : notional), fee);
      paid = add(paid, fee);
      paidByPlan = addCommissions(
        paidByPlan,
        (planFees[fill.trade] as readonly [PlanCommissions, PlanCommissions])[fill.opening ? 0 : 1],
      );
      if (fill.opening) {
        open.set(fill.trade, trade);
        if (trade.worstPrice !== null) {
          // The equity then: the account now, less the open loss at the worst price.
          const equity = add(add(cash, atCost().value), maeAmount(trade) as Decimal);
          maeEquity[fill.trade] = equity;
        }
      } else {
        open.delete(fill.trade);
      }
    }
    const { value, exposure } = atCost();
    marks.push({
      day: dayText(session),
      marked_at: session.closesAtMs,
      equity: formatDecimal(add(cash, value)),
      cash: formatDecimal(cash),
      exposure: formatDecimal(exposure),
      commissions_paid: formatDecimal(paid),
      plan_commissions: planCommissionsText(paidByPlan),
      benchmark: formatDecimal(price(spy[d] as number)),
    });
  });
  if (f !== fills.length || open.size !== 0) throw new Error("trades left open at the end of the record");
  return {
    sessions,
    trades,
    fills,
    fees,
    planFees,
    maeEquity,
    marks,
    cash,
    commissionsPaid: paid,
    planCommissions: paidByPlan,
    instruments,
  };
}

/** The open loss at the worst price, in dollars (negative), or null. */
function maeAmount(trade: TradePlan): Decimal | null {
  if (trade.worstPrice === null) return null;
  const move = sub(price(trade.worstPrice), price(trade.openPrice));
  return mul(trade.side === "buy" ? move : neg(move), fromInteger(trade.quantity));
}

// ---------------------------------------------------------------------------
// Writing it

interface DataSet {
  readonly strategyId: number;
  readonly trades: number;
  readonly orders: number;
  readonly fills: number;
  readonly marks: number;
  readonly insertSeconds: number;
}

/** Ids of rows inserted by one INSERT, in VALUES order: both engines hand them out ascending. */
const ascendingIds = (rows: readonly { id: number }[]) => rows.map((row) => Number(row.id)).sort((a, b) => a - b);

async function count(storage: Storage, table: "trades" | "orders" | "fills" | "equity_marks"): Promise<number> {
  const row = await storage.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function populate(storage: Storage, history: History): Promise<DataSet> {
  const started = performance.now();
  const clock = new ControllableClock(() => END_MS, { kind: "fixed", atMs: END_MS });
  const { personId } = await createPerson(
    { storage, clock },
    { email: "records-owner@example.com", firstName: "Record", lastName: "Keeper", role: "person" },
  );
  const name = "Five Years Of Stocks";
  const strategy = await storage.db
    .insertInto("strategies")
    .values({
      name,
      name_folded: fold(name),
      owner_person_id: personId,
      white_label_site_id: null,
      is_private: 0,
      starting_capital: String(STARTING_CAPITAL),
      short_description: "Large US stocks, intraday and overnight, long and short.",
      long_description: "Trades ten large US stocks flat to flat, mostly within the day, some over a night or two.",
      pending_short_description: null,
      pending_long_description: null,
      review_note: null,
      trades_stocks: 1,
      created_at: START_MS,
      updated_at: history.fills.at(-1)?.atMs ?? START_MS,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const strategyId = Number(strategy.id);
  const account = await storage.db
    .insertInto("accounts")
    .values({
      kind: "model",
      strategy_id: strategyId,
      cash: formatDecimal(history.cash),
      starting_cash: String(STARTING_CAPITAL),
      version: history.fills.length,
      commissions_paid: formatDecimal(history.commissionsPaid),
      plan_commissions: planCommissionsText(history.planCommissions),
      commission_plan: "Default",
      created_at: START_MS,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const accountId = Number(account.id);
  const { trades, fills, fees, maeEquity, instruments } = history;
  const symbolOf = (trade: TradePlan) => (instruments[trade.stock] as Instrument).fullSymbol;

  const tradeIds: number[] = [];
  const perTx = INSERT_ROWS * INSERTS_PER_TX;
  for (let first = 0; first < trades.length; first += perTx) {
    await transaction(storage, async (tx) => {
      for (let batch = first; batch < Math.min(first + perTx, trades.length); batch += INSERT_ROWS) {
        const rows = trades.slice(batch, batch + INSERT_ROWS).map((trade, i) => {
          const [openFee, closeFee] = fees[batch + i] as readonly [Decimal, Decimal];
          const quantity = fromInteger(trade.quantity);
          const mae = maeAmount(trade);
          return {
            strategy_id: strategyId,
            account_id: accountId,
            symbol: symbolOf(trade),
            symbol_type: "stock",
            side: trade.side,
            opened_at: trade.openAtMs,
            closed_at: trade.closeAtMs,
            opened_quantity: formatDecimal(quantity),
            closed_quantity: formatDecimal(quantity),
            open_notional: formatDecimal(mul(quantity, price(trade.openPrice))),
            close_notional: formatDecimal(mul(quantity, price(trade.closePrice))),
            realized: formatDecimal(realizedOf(trade)),
            commission: formatDecimal(add(openFee, closeFee)),
            plan_commissions: planCommissionsText(
              addCommissions(...(history.planFees[batch + i] as readonly [PlanCommissions, PlanCommissions])),
            ),
            evaluated_at: trade.closeAtMs,
            mae_amount: mae === null ? null : formatDecimal(mae),
            mae_worst_price: trade.worstPrice === null ? null : formatDecimal(price(trade.worstPrice)),
            mae_worst_price_at: trade.worstAtMs,
            mae_equity: mae === null ? null : formatDecimal(maeEquity[batch + i] as Decimal),
            mae_entry_price: mae === null ? null : formatDecimal(price(trade.openPrice)),
            mae_open_quantity: mae === null ? null : formatDecimal(trade.side === "buy" ? quantity : neg(quantity)),
          };
        });
        tradeIds.push(...ascendingIds(await tx.insertInto("trades").values(rows).returning("id").execute()));
      }
    });
  }
  if (tradeIds.length !== trades.length) throw new Error(`${tradeIds.length} trade ids for ${trades.length} trades`);

  // Each fill with the market order it filled, in time order as the engine would have written them.
  for (let first = 0; first < fills.length; first += perTx) {
    await transaction(storage, async (tx) => {
      for (let batch = first; batch < Math.min(first + perTx, fills.length); batch += INSERT_ROWS) {
        const chunk = fills.slice(batch, batch + INSERT_ROWS).map((fill) => {
          const trade = trades[fill.trade] as TradePlan;
          const quantity = fromInteger(trade.quantity);
          const fillPrice = price(fill.opening ? trade.openPrice : trade.closePrice);
          const notional = mul(quantity, fillPrice);
          const side: "buy" | "sell" = (trade.side === "buy") === fill.opening ? "buy" : "sell";
          const fee = (fees[fill.trade] as readonly [Decimal, Decimal])[fill.opening ? 0 : 1];
          return { fill, trade, quantity, fillPrice, notional, side, fee };
        });
        const orderIds = ascendingIds(
          await tx
            .insertInto("orders")
            .values(
              chunk.map(({ fill, trade, quantity, notional, side }) => ({
                strategy_id: strategyId,
                account_id: accountId,
                symbol: symbolOf(trade),
                symbol_type: "stock",
                order_type: "market" as const,
                side,
                open_close: fill.opening ? ("open" as const) : ("close" as const),
                tif: "day" as const,
                quantity: formatDecimal(quantity),
                limit_price: null,
                stop_price: null,
                profit_target: null,
                stop_loss: null,
                parent_id: null,
                oca_group_id: null,
                cancel_replace_id: null,
                parked_until: null,
                expires_at: currentOrNextSession(US_EQUITIES, fill.atMs).closesAtMs,
                signal_type: 1,
                status: "Filled",
                filled_quantity: formatDecimal(quantity),
                filled_notional: formatDecimal(notional),
                info: null,
                posted_at: fill.atMs,
                updated_at: fill.atMs,
                closed_at: fill.atMs,
              })),
            )
            .returning("id")
            .execute(),
        );
        await tx
          .insertInto("fills")
          .values(
            chunk.map(({ fill, trade, quantity, fillPrice, notional, side, fee }, i) => ({
              order_id: orderIds[i] as number,
              strategy_id: strategyId,
              account_id: accountId,
              symbol: symbolOf(trade),
              symbol_type: "stock",
              side,
              quantity: formatDecimal(quantity),
              price: formatDecimal(fillPrice),
              commission: formatDecimal(fee),
              realized: formatDecimal(fill.opening ? ZERO : realizedOf(trade)),
              cash: formatDecimal(sub(side === "buy" ? neg(notional) : notional, fee)),
              usd_rate: "1",
              position_after: formatDecimal(fill.opening ? (trade.side === "buy" ? quantity : neg(quantity)) : ZERO),
              filled_at: fill.atMs,
              trade_id: tradeIds[fill.trade] as number,
            })),
          )
          .execute();
      }
    });
  }

  await transaction(storage, async (tx) => {
    for (let first = 0; first < history.marks.length; first += INSERT_ROWS) {
      await tx
        .insertInto("equity_marks")
        .values(history.marks.slice(first, first + INSERT_ROWS).map((mark) => ({ strategy_id: strategyId, ...mark })))
        .execute();
    }
  });
  // The record totals the outbox's records consumer keeps, counted from the same fills as it would have
  // (the history is written as a strategy's that traded before the outbox: its consumer starts after it).
  const fillEvents = fills.map((fill, seq) => {
    const trade = trades[fill.trade] as TradePlan;
    const [openFee, closeFee] = fees[fill.trade] as readonly [Decimal, Decimal];
    const closing = fill.opening
      ? undefined
      : {
          opened_at: trade.openAtMs,
          closed_at: trade.closeAtMs,
          realized: formatDecimal(realizedOf(trade)),
          commission: formatDecimal(add(openFee, closeFee)),
        };
    const payload = { strategy_id: strategyId, symbol_type: "stock", filled_at: fill.atMs, trade: closing };
    return { accountId, seq: seq + 1, kind: "fill" as const, orderId: null, payload, atMs: fill.atMs };
  });
  const totals = recordsConsumer.consume(fillEvents).recordTotals.reduce(addTotals);
  await storage.db.insertInto("strategy_records").values(totals).execute();
  const insertSeconds = (performance.now() - started) / 1000;
  return {
    strategyId,
    trades: await count(storage, "trades"),
    orders: await count(storage, "orders"),
    fills: await count(storage, "fills"),
    marks: await count(storage, "equity_marks"),
    insertSeconds: Number(insertSeconds.toFixed(2)),
  };
}

// ---------------------------------------------------------------------------
// Measuring

interface Run {
  readonly figures: Figures;
  /** The bare server answering the same request with the same bytes, measured in turn with the service. */
  readonly bare: Figures;
  /** Service req/s over bare req/s. */
  readonly ratio: number;
  /** Bytes of the body of one answer. */
  readonly bytes: number;
  /** The median time of one request with no other in flight. */
  readonly aloneMs: number;
}

interface BackendFigures {
  readonly storage: string;
  readonly data: DataSet;
  readonly runs: Readonly<Record<(typeof OPERATIONS)[number]["name"], Run>>;
  /** What the answers said, checked before measuring. */
  readonly numTrades: number;
  readonly dailyEntries: number;
  readonly equity: number;
  readonly equityInstitutional: number;
}

/** The median time of `count` requests one after the other, and the size of an answer. */
async function timedCalls(port: number, path: string, count: number): Promise<{ ms: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    bytes = (await apiCall(port, "GET", path)).bytes;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)] as number, bytes };
}

/**
 * Waits until the service has finished the requests autocannon left in flight
 * when its time was up (it drops the connections, the service still works them
 * out): until one request takes about as long as it does alone.
 */
async function drain(port: number, path: string, aloneMs: number): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const started = performance.now();
    await apiCall(port, "GET", path);
    if (performance.now() - started <= 1.5 * aloneMs + 20) return;
    if (Date.now() > deadline) throw new Error(`the service was still busy ${DRAIN_TIMEOUT_MS / 1000} s after a run`);
  }
}

interface DailyEquityAnswer {
  MonthlyResults: { Date: string; Equity: number; EquityWithoutCommissions: number }[];
}

/** Checks what the service reads back against what was written, before anything is measured. */
async function checkAnswers(gen: number, data: DataSet, history: History) {
  const [details] = (await apiCall(gen, "GET", OPERATIONS[0].path(data.strategyId))).results as {
    NumTrades: number;
    Equity: number;
  }[];
  if (details?.NumTrades !== TRADES) throw new Error(`GetStrategyDetails says NumTrades ${details?.NumTrades}`);
  const expectedEquity = Number(formatDecimal(history.cash));
  if (Math.abs(details.Equity - expectedEquity) > 0.005) {
    throw new Error(`GetStrategyDetails says Equity ${details.Equity}, not ${expectedEquity}`);
  }
  const [daily] = (await apiCall(gen, "GET", OPERATIONS[1].path(data.strategyId))).results as DailyEquityAnswer[];
  const [institutional] = (await apiCall(gen, "GET", OPERATIONS[2].path(data.strategyId)))
    .results as DailyEquityAnswer[];
  const entries = daily?.MonthlyResults.length ?? 0;
  if (entries !== history.marks.length || entries < 1_250 || entries > 1_270) {
    throw new Error(`GetStrategyHistoricalDailyEquity answered ${entries} entries for ${history.marks.length} marks`);
  }
  if (institutional?.MonthlyResults.length !== entries) throw new Error("the Institutional series has other days");
  const last = daily?.MonthlyResults.at(-1);
  const lastInstitutional = institutional.MonthlyResults.at(-1);
  if (!last || !lastInstitutional || Math.abs(last.Equity - expectedEquity) > 0.005) {
    throw new Error(`the daily series ends at ${last?.Equity}, not ${expectedEquity}`);
  }
  // Institutional commissions are lower than the Default ones the model account paid.
  if (!(lastInstitutional.Equity > last.Equity && lastInstitutional.Equity < last.EquityWithoutCommissions)) {
    throw new Error(
      `the Institutional series ends at ${lastInstitutional.Equity}, not between ${last.Equity} and ${last.EquityWithoutCommissions}`,
    );
  }
  return {
    numTrades: details.NumTrades,
    dailyEntries: entries,
    equity: last.Equity,
    equityInstitutional: lastInstitutional.Equity,
  };
}

async function backendBench(
  backend: BackendName,
  settings: Settings,
  pgUrl: string | undefined,
  history: History,
): Promise<BackendFigures> {
  const dir = await tempDir(`strategy-hub-bench-records-${backend}-`);
  const dataDir = join(dir, "data");
  const logPath = join(dir, "service.log");
  const schema = `bench_records_${process.pid}`;
  // openStorage creates the schema; registering the drop first covers a failure half-way.
  const dropSchema = backend === "postgres" ? await schemaOfOurOwn(pgUrl as string, schema, false) : null;
  let service: ChildProcess | undefined;
  try {
    const storage = await openStorage(
      backend === "postgres" ? { databaseUrl: pgUrl, dataDir, pgSchema: schema } : { dataDir },
    );
    const closeStorage = onCleanup(`close ${backend} storage`, () => storage.close());
    let data: DataSet;
    try {
      await migrateToLatest(storage);
      progress(`${backend}: writing ${TRADES} trades, ${2 * TRADES} orders and fills, ${history.marks.length} marks`);
      data = await populate(storage, history);
    } finally {
      await closeStorage();
    }
    progress(`${backend}: written in ${data.insertSeconds} s; starting the service`);

    const ports = await freePorts(4);
    const gen = ports[1] ?? 0;
    service = startService(ports, dataDir, ADMIN_KEY, logPath, {
      SANDBOX: "1",
      MARKET_FEED: "manual",
      // The service's pool takes its search_path from PGOPTIONS.
      ...(backend === "postgres" ? { DATABASE_URL: pgUrl as string, PGOPTIONS: `-c search_path=${schema}` } : {}),
    });
    const child = service;
    await waitUntilAnswering(
      "service",
      child,
      `http://${HOST}:${gen}/General/Hello`,
      { method: "POST", headers: JSON_HEADERS, body: "{}" },
      (status) => status === 200,
    );
    await apiCall(gen, "POST", "/Sandbox/SetClock", { Now: END_ISO });
    const checked = await checkAnswers(gen, data, history);
    const runs: Partial<Record<(typeof OPERATIONS)[number]["name"], Run>> = {};
    for (const operation of OPERATIONS) {
      const path = operation.path(data.strategyId);
      const alone = await timedCalls(gen, path, SINGLE_CALLS);
      progress(`${backend}: ${operation.name} (${alone.ms.toFixed(0)} ms alone), then beside the bare server`);
      const route: Route = { method: "GET", path: path.split("?")[0] as string, request: () => ({ path }) };
      // The same bytes, sent as they are: the service keeps these answers serialized too.
      const comparison = await compareWithBare(
        `${backend} ${operation.name}`,
        gen,
        route,
        {
          seconds: settings.seconds,
          warmupSeconds: WARMUP_SECONDS,
          connections: settings.connections,
          rounds: settings.rounds,
        },
        dir,
        child.pid,
        { send: "bytes", afterService: () => drain(gen, path, alone.ms) },
      );
      if (exited(child)) throw new Error(`the service exited during the ${operation.name} run`);
      runs[operation.name] = {
        figures: comparison.service.figures,
        bare: comparison.bare.figures,
        ratio: comparison.ratio ?? 0,
        bytes: alone.bytes,
        aloneMs: Number(alone.ms.toFixed(1)),
      };
    }
    return {
      storage: await storageBackend(logPath),
      data,
      runs: runs as BackendFigures["runs"],
      ...checked,
    };
  } catch (error) {
    await printLogTail(`${backend} service`, logPath);
    throw error;
  } finally {
    if (service) await stopChild(service);
    await dropSchema?.();
  }
}

// ---------------------------------------------------------------------------

function print(settings: Settings, history: History, results: readonly [BackendName, BackendFigures][]): void {
  const first = history.marks[0];
  const last = history.marks.at(-1);
  const wins = history.trades.filter((trade) => realizedOf(trade) > 0n).length;
  const withMae = history.trades.filter((trade) => trade.worstPrice !== null).length;
  console.log(
    `Record: one public strategy, started ${new Date(START_MS).toISOString()}, ended ${END_ISO}; ` +
      `${TRADES} closed trades on ${STOCKS.length} stocks (${wins} winners before commissions, ${withMae} with MAE), ` +
      `${history.marks.length} daily marks (${first?.day} to ${last?.day}); starting capital ${STARTING_CAPITAL}, ` +
      `equity ${formatDecimal(history.cash)} at the end after ${formatDecimal(history.commissionsPaid)} of Default commissions`,
  );
  console.log(
    `GET on GEN, per server and operation ${settings.rounds} alternating rounds of ${secondsPerRound(settings.seconds, settings.rounds)} s ` +
      `after ${WARMUP_SECONDS} s of warm-up, ${settings.connections} connections, ` +
      `pipelining 1; service at the default LOG_LEVEL (info), SANDBOX=1, MARKET_FEED=manual, clock at ${END_ISO}; every answer was 200`,
  );
  console.log(
    "   alone: the median of 5 requests one after the other; bytes: the body of one answer. Before each " +
      "measured run and after each of its runs the service is let finish what autocannon left in flight",
  );
  console.log("");
  printTable(
    ["", "trades", "orders", "fills", "marks", "insert s"],
    results.map(([backend, r]) => [
      backend,
      String(r.data.trades),
      String(r.data.orders),
      String(r.data.fills),
      String(r.data.marks),
      r.data.insertSeconds.toFixed(2),
    ]),
  );
  console.log("");
  const rows: string[][] = [];
  for (const [backend, r] of results) {
    for (const operation of OPERATIONS) {
      const { figures: f, bare, ratio, bytes, aloneMs } = r.runs[operation.name];
      rows.push([
        `${r.storage === backend ? backend : `${backend} (service says ${r.storage})`} ${operation.name}`,
        f.requestsPerSec.toFixed(1),
        bare.requestsPerSec.toFixed(1),
        ratio.toFixed(3),
        `≥ ${operation.target.toFixed(2)}`,
        String(f.latencyP50Ms),
        String(f.latencyP99Ms),
        String(bare.latencyP99Ms),
        f.latencyAvgMs.toFixed(1),
        String(f.totalRequests),
        aloneMs.toFixed(0),
        String(bytes),
      ]);
    }
  }
  printTable(
    [
      "",
      "req/s avg",
      "bare req/s",
      "ratio",
      "target",
      "p50 ms",
      "p99 ms",
      "bare p99 ms",
      "avg ms",
      "requests",
      "alone ms",
      "bytes",
    ],
    rows,
  );
  console.log("");
  console.log(
    "   bare: fastify() with no logging, no auth and no storage, answering each request with the bytes the " +
      "service answered it (read once before measuring), measured in turn with the service at the same settings",
  );
  console.log("");
  for (const [backend, r] of results) {
    console.log(
      `   ${backend}: NumTrades ${r.numTrades}, ${r.dailyEntries} daily entries; last equity ${r.equity} (Default), ` +
        `${r.equityInstitutional} (Institutional)`,
    );
  }
}

async function main(): Promise<void> {
  const settings: Settings = {
    seconds: positiveIntFromEnv("BENCH_SECONDS", 10),
    connections: positiveIntFromEnv("BENCH_CONNECTIONS", 10),
    rounds: positiveIntFromEnv("BENCH_ROUNDS", 3),
  };
  const pgUrl = process.env.DATABASE_URL || undefined;
  const backends: BackendName[] = pgUrl ? ["sqlite", "postgres"] : ["sqlite"];
  const built = performance.now();
  const history = buildHistory();
  progress(`history built in ${((performance.now() - built) / 1000).toFixed(2)} s`);
  const results: [BackendName, BackendFigures][] = [];
  for (const backend of backends) results.push([backend, await backendBench(backend, settings, pgUrl, history)]);
  print(settings, history, results);
  console.log(
    `RESULT ${JSON.stringify({
      ...settings,
      warmupSeconds: WARMUP_SECONDS,
      pipelining: 1,
      logLevel: "info",
      record: {
        start: new Date(START_MS).toISOString(),
        end: END_ISO,
        trades: TRADES,
        fills: history.fills.length,
        marks: history.marks.length,
        stocks: STOCKS.length,
      },
      backends: Object.fromEntries(results),
    })}`,
  );
}

await runBench(main);
