import { parseDateTime } from "../datetime.js";
import { type Decimal, parseDecimal } from "../decimal.js";
import { fromServiceSymbol } from "../symbols/instrument.js";
import type { MarketQuote } from "./quote.js";

/**
 * Reading a replay file's records (the CSV parsing is the caller's): a header,
 * either quotes (`time,symbol,bid,ask,last[,bidsize,asksize]`) or bars
 * (`time,symbol,open,high,low,close[,volume]`), then one record per quote or
 * bar. Times are ISO 8601 (UTC unless an offset is given) or epoch
 * milliseconds. A bar becomes four prices one millisecond apart (open, then
 * low and high in the order a rising or falling bar most likely took them,
 * then close), so orders inside the bar's range fill during replay.
 */
export type ReplayRead =
  | { readonly ok: true; readonly quotes: MarketQuote[] }
  | { readonly ok: false; readonly error: string };

const QUOTE_HEADER = ["time", "symbol", "bid", "ask", "last"];
const BAR_HEADER = ["time", "symbol", "open", "high", "low", "close"];

/** Takes a replay's records one by one, each with the line it ends on, and answers the quotes in time order. */
export class ReplayReader {
  #bars: boolean | null = null;
  readonly #quotes: MarketQuote[] = [];
  #error: string | null = null;

  /** False once a record is wrong: the rest need not be read. */
  get ok(): boolean {
    return this.#error === null;
  }

  record(cells: readonly string[], line: number): void {
    if (this.#error !== null) return;
    if (this.#bars === null) {
      this.#header(cells);
      return;
    }
    this.#error = this.#quotesOf(cells, `line ${line}`);
  }

  finish(): ReplayRead {
    if (this.#error !== null) return { ok: false, error: this.#error };
    if (this.#bars === null) this.#header([]);
    if (this.#error !== null) return { ok: false, error: this.#error };
    // Stable: records with the same time keep their file order.
    this.#quotes.sort((a, b) => a.atMs - b.atMs);
    return { ok: true, quotes: this.#quotes };
  }

  #header(cells: readonly string[]): void {
    const header = cells.map((c) => c.trim().toLowerCase());
    const bars = BAR_HEADER.every((c, i) => header[i] === c);
    if (!bars && !QUOTE_HEADER.every((c, i) => header[i] === c)) {
      this.#error = `line 1: expected a header ${QUOTE_HEADER.join(",")} or ${BAR_HEADER.join(",")}`;
      return;
    }
    this.#bars = bars;
  }

  /** Adds the record's quotes; answers what is wrong with it, or null. */
  #quotesOf(cells: readonly string[], where: string): string | null {
    const time = cells[0] ?? "";
    const atMs = /^\d+$/.test(time) ? Number(time) : (parseDateTime(time)?.getTime() ?? Number.NaN);
    if (!Number.isFinite(atMs)) return `${where}: not a time: ${time}`;
    const instrument = fromServiceSymbol(cells[1] ?? "");
    if (!instrument) return `${where}: unknown symbol ${cells[1]}`;
    const numbers: Decimal[] = [];
    for (const cell of cells.slice(2, this.#bars ? 6 : 7)) {
      const value = parseDecimal(cell);
      if (value === null || value < 0n) return `${where}: not a price or size: ${cell}`;
      numbers.push(value);
    }
    const symbol = instrument.fullSymbol;
    if (this.#bars) {
      const [open, high, low, close] = numbers as [Decimal, Decimal, Decimal, Decimal];
      if (numbers.length < 4 || low > high) return `${where}: a bar needs open, high, low, close with low <= high`;
      const path = close >= open ? [open, low, high, close] : [open, high, low, close];
      path.forEach((price, i) => {
        this.#quotes.push({
          symbol,
          bid: price,
          ask: price,
          last: price,
          bidSize: null,
          askSize: null,
          atMs: atMs + i,
        });
      });
      return null;
    }
    const [bid, ask, last, bidSize, askSize] = numbers;
    if (bid === undefined || ask === undefined || last === undefined || bid > ask) {
      return `${where}: a quote needs bid <= ask and a last price`;
    }
    this.#quotes.push({ symbol, bid, ask, last, bidSize: bidSize ?? null, askSize: askSize ?? null, atMs });
    return null;
  }
}
