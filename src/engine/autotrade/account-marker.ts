import type { Logger } from "pino";
import {
  type AccountMark,
  type AccountNow,
  type Book,
  type ClosePrices,
  type Holding,
  type MarkFill,
  markAccountAt,
} from "../../core/autotrade/account-marks.js";
import { add, type Decimal, div, formatDecimal, fromInteger, storedDecimal } from "../../core/decimal.js";
import { currentOrNextSession, US_EQUITIES } from "../../core/sessions.js";
import { closesBetween } from "../../services/equity-marks.js";
import type { AccountMarksTable, AutotradeMarksTable } from "../../store/schema.js";
import { readSetting, writeSetting } from "../../store/settings.js";
import type { Storage } from "../../store/storage.js";
import { instrumentOf } from "../../store/trading-state.js";
import { transaction } from "../../store/transaction.js";
import type { MarketData } from "../market-data.js";
import { marketViewAt } from "../market-view.js";
import type { BrokerPorts } from "./desk.js";

/**
 * Marks the brokerage accounts autotrade trades in at every NYSE close the
 * clock passes (core/autotrade/account-marks.ts), as the strategies' model
 * accounts are marked (services/equity-marks.ts): the fill loop runs it at
 * each catch-up (its timer, the sandbox's SetClock and AdvanceClock), before
 * anything trades at the new time, so a clock that jumps over several closes
 * marks each of them with the account as it stood, at the prices of each.
 * The first pass only notes the time; a clock set back starts over from
 * there, keeping the marks made. Accounts with a live setup or a holding are
 * marked, each from its creation (or paper reset) on.
 */
const MARKED_THROUGH = "account_marked_through";

/** Accounts read and marked per transaction. */
const ACCOUNTS_PER_STEP = 200;
/** Closes marked per pass over the accounts (a long catch-up goes in steps of a year). */
const CLOSES_PER_STEP = 260;

export interface DeskSettling {
  settled(): Promise<void>;
}

interface MarkedAccount {
  readonly accountId: number;
  readonly brokerId: number;
  readonly account: string;
  readonly createdAt: number;
  readonly resetAt: number | null;
}

export class AccountMarker {
  constructor(
    private readonly storage: Storage,
    private readonly market: MarketData,
    private readonly ports: BrokerPorts,
    private readonly desk: DeskSettling,
    private readonly logger: Logger,
  ) {}

  /** Marks every close passed since the last one marked, through `nowMs`; answers how many closes. */
  async markThrough(nowMs: number): Promise<number> {
    const db = this.storage.db;
    const stored = await readSetting(db, MARKED_THROUGH);
    const through = stored === undefined ? null : Number(stored);
    if (through === null || nowMs < through) {
      await writeSetting(db, MARKED_THROUGH, String(nowMs));
      return 0;
    }
    const closes = closesBetween(through, nowMs);
    if (closes.length === 0) return 0;
    // What the broker has told is written first: the fills read are the ones the broker made.
    await this.desk.settled();
    const accounts = await this.#marked();
    for (let first = 0; first < closes.length; first += CLOSES_PER_STEP) {
      const step = closes.slice(first, first + CLOSES_PER_STEP);
      for (let from = 0; from < accounts.length; from += ACCOUNTS_PER_STEP) {
        await this.#markAccounts(accounts.slice(from, from + ACCOUNTS_PER_STEP), step);
      }
      await writeSetting(db, MARKED_THROUGH, String(step.at(-1)));
    }
    return closes.length;
  }

  /** The accounts to mark: those with a live setup or a holding. */
  async #marked(): Promise<MarkedAccount[]> {
    const db = this.storage.db;
    const ids = new Set<number>([
      ...(
        await db
          .selectFrom("autotrade_setups")
          .select("account_id")
          .distinct()
          .where("status", "!=", "stopped")
          .execute()
      ).map((r) => r.account_id),
      ...(await db.selectFrom("autotrade_positions").select("account_id").distinct().execute()).map(
        (r) => r.account_id,
      ),
    ]);
    if (ids.size === 0) return [];
    const rows: MarkedAccount[] = [];
    const all = [...ids];
    for (let from = 0; from < all.length; from += 500) {
      const found = await db
        .selectFrom("broker_accounts")
        .select(["account_id", "broker_id", "account_number", "created_at", "reset_at"])
        .where("account_id", "in", all.slice(from, from + 500))
        .execute();
      rows.push(
        ...found.map((r) => ({
          accountId: r.account_id,
          brokerId: r.broker_id,
          account: r.account_number,
          createdAt: Number(r.created_at),
          resetAt: r.reset_at === null ? null : Number(r.reset_at),
        })),
      );
    }
    return rows.sort((a, b) => a.accountId - b.accountId);
  }

  /** Marks the accounts at the closes, in one transaction. */
  async #markAccounts(accounts: readonly MarkedAccount[], closes: readonly number[]): Promise<void> {
    const states = await this.#accountsNow(accounts, closes[0] as number);
    const accountRows: AccountMarksTable[] = [];
    const bookRows: AutotradeMarksTable[] = [];
    const prices = closes.map((close) => closePrices(this.market, close));
    for (const account of accounts) {
      let state = states.get(account.accountId);
      for (const [index, close] of closes.entries()) {
        if (!state) break;
        if (close <= account.createdAt || (account.resetAt !== null && close <= account.resetAt)) continue;
        const mark = markAccountAt(state, close, prices[index] as ClosePrices);
        if (!mark) continue;
        const day = dayOf(close);
        accountRows.push({
          account_id: account.accountId,
          day,
          marked_at: close,
          value: formatDecimal(mark.value),
          cash: formatDecimal(mark.cash),
        });
        for (const book of mark.books) {
          bookRows.push({
            account_id: account.accountId,
            strategy_id: book.strategyId,
            day,
            marked_at: close,
            holdings_value: formatDecimal(book.holdingsValue),
            pnl: formatDecimal(book.pnl),
          });
        }
        state = following(state, mark, close);
      }
    }
    if (accountRows.length === 0) return;
    await transaction(this.storage, async (tx) => {
      for (let i = 0; i < accountRows.length; i += 500) {
        await tx
          .insertInto("account_marks")
          .values(accountRows.slice(i, i + 500))
          .onConflict((oc) => oc.columns(["account_id", "marked_at"]).doNothing())
          .execute();
      }
      for (let i = 0; i < bookRows.length; i += 500) {
        await tx
          .insertInto("autotrade_marks")
          .values(bookRows.slice(i, i + 500))
          .onConflict((oc) => oc.columns(["account_id", "strategy_id", "marked_at"]).doNothing())
          .execute();
      }
    });
  }

  /** Each account as it stands now, with its books' last marks before `firstClose` and its fills since. */
  async #accountsNow(accounts: readonly MarkedAccount[], firstClose: number): Promise<Map<number, AccountNow>> {
    const db = this.storage.db;
    const ids = accounts.map((a) => a.accountId);
    const [setups, positions, previous] = await Promise.all([
      db
        .selectFrom("autotrade_setups")
        .select(["account_id", "strategy_id"])
        .distinct()
        .where("account_id", "in", ids)
        .where("status", "!=", "stopped")
        .execute(),
      db.selectFrom("autotrade_positions").selectAll().where("account_id", "in", ids).execute(),
      db
        .selectFrom("autotrade_marks as m")
        .selectAll("m")
        .where("m.account_id", "in", ids)
        .where((eb) =>
          eb(
            "m.marked_at",
            "=",
            eb
              .selectFrom("autotrade_marks as l")
              .select((e) => e.fn.max("l.marked_at").as("latest"))
              .whereRef("l.account_id", "=", "m.account_id")
              .whereRef("l.strategy_id", "=", "m.strategy_id")
              .where("l.marked_at", "<", firstClose),
          ),
        )
        .execute(),
    ]);
    // Each account's books: its live setups' strategies and those it holds something for.
    const books = new Map<number, Map<number, { strategyId: number; held: Holding[]; previous: Book["previous"] }>>();
    const bookOf = (accountId: number, strategyId: number) => {
      const ofAccount = books.get(accountId) ?? new Map();
      books.set(accountId, ofAccount);
      const book = ofAccount.get(strategyId) ?? { strategyId, held: [], previous: null };
      ofAccount.set(strategyId, book);
      return book;
    };
    for (const row of setups) bookOf(row.account_id, row.strategy_id);
    for (const row of positions) {
      bookOf(row.account_id, row.strategy_id).held.push({
        instrument: instrumentOf(row.symbol, row.symbol_type),
        quantity: storedDecimal(row.quantity),
      });
    }
    for (const row of previous) {
      bookOf(row.account_id, row.strategy_id).previous = {
        pnl: storedDecimal(row.pnl),
        holdingsValue: storedDecimal(row.holdings_value),
        markedAt: Number(row.marked_at),
      };
    }
    const states = new Map<number, AccountNow>();
    for (const account of accounts) {
      const accountBooks = [...(books.get(account.accountId)?.values() ?? [])];
      const sinceMs = account.resetAt ?? 0;
      // Fills after the first close (to take back out) and since each book's last mark (to count).
      const from = Math.min(firstClose, ...accountBooks.map((b) => b.previous?.markedAt ?? sinceMs));
      const broker = await this.#broker(account);
      if (!broker) continue;
      const fills = await db
        .selectFrom("account_fills as f")
        .innerJoin("account_orders as o", "o.id", "f.account_order_id")
        .select(["f.strategy_id", "f.symbol", "o.symbol_type", "f.side", "f.quantity", "f.price", "f.filled_at"])
        .where("f.account_id", "=", account.accountId)
        .where("f.filled_at", ">", from)
        .orderBy("f.filled_at")
        .orderBy("f.id")
        .execute();
      states.set(account.accountId, {
        ...broker,
        books: accountBooks,
        sinceMs,
        fills: fills.map(
          (f): MarkFill => ({
            strategyId: f.strategy_id,
            instrument: instrumentOf(f.symbol, f.symbol_type),
            side: f.side,
            quantity: storedDecimal(f.quantity),
            price: storedDecimal(f.price),
            filledAt: Number(f.filled_at),
          }),
        ),
      });
    }
    return states;
  }

  /** The broker's cash and positions now; null (the account is not marked) when the broker is not reached. */
  async #broker(account: MarkedAccount): Promise<Pick<AccountNow, "cash" | "positions"> | null> {
    const port = this.ports.get(account.brokerId);
    if (!port) return null;
    const ref = { brokerId: account.brokerId, account: account.account };
    try {
      const [value, positions] = await Promise.all([port.accountValue(ref), port.positions(ref)]);
      return {
        cash: value.cash,
        positions: positions.map((p) => ({ instrument: instrumentOf(p.symbol, p.symbolType), quantity: p.quantity })),
      };
    } catch (error) {
      this.logger.warn(
        { err: error, accountId: account.accountId },
        "the broker was not reached: the account is not marked",
      );
      return null;
    }
  }
}

/** The account for the next close: its books go on from this close's marks. */
function following(state: AccountNow, mark: AccountMark, close: number): AccountNow {
  const marked = new Map(mark.books.map((b) => [b.strategyId, b]));
  return {
    ...state,
    books: state.books.map((b): Book => {
      const next = marked.get(b.strategyId);
      return next ? { ...b, previous: { pnl: next.pnl, holdingsValue: next.holdingsValue, markedAt: close } } : b;
    }),
  };
}

/** The prices of the close: the middle of each quote, and dollar rates. */
function closePrices(market: MarketData, closeMs: number): ClosePrices {
  const view = marketViewAt(market, closeMs);
  return {
    mid(instrument) {
      const quote = view.quote(instrument);
      return quote ? div(add(quote.bid, quote.ask), TWO) : null;
    },
    usdRate: (currency) => view.usdRate(currency),
  };
}

const TWO: Decimal = fromInteger(2);

/** The trading day of a close, YYYY-MM-DD (New York). */
function dayOf(closeMs: number): string {
  const day = currentOrNextSession(US_EQUITIES, closeMs - 1).tradingDay;
  return `${day.year}-${String(day.month).padStart(2, "0")}-${String(day.day).padStart(2, "0")}`;
}
