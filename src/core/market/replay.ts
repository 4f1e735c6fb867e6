import { parseDateTime } from "../datetime.js";
import { type Decimal, parseDecimal } from "../decimal.js";
import { fromServiceSymbol } from "../symbols/instrument.js";
import type { MarketQuote } from "./quote.js";

/**
 * Reading a replay file: CSV with a header, either quotes
 * (`time,symbol,bid,ask,last[,bidsize,asksize]`) or bars
 * (`time,symbol,open,high,low,close[,volume]`). Times are ISO 8601 (UTC
 * unless an offset is given) or epoch milliseconds. A bar becomes four prices
 * one millisecond apart (open, then low and high in the order a rising or
 * falling bar most likely took them, then close), so orders inside the bar's
 * range fill during replay.
 */
export type ReplayRead =
  | { readonly ok: true; readonly quotes: MarketQuote[] }
  | { readonly ok: false; readonly error: string };

const QUOTE_HEADER = ["time", "symbol", "bid", "ask", "last"];
const BAR_HEADER = ["time", "symbol", "open", "high", "low", "close"];

export function readReplay(text: string): ReplayRead {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const header = (lines[0] ?? "")
    .toLowerCase()
    .split(",")
    .map((c) => c.trim());
  const bars = BAR_HEADER.every((c, i) => header[i] === c);
  if (!bars && !QUOTE_HEADER.every((c, i) => header[i] === c)) {
    return { ok: false, error: `line 1: expected a header ${QUOTE_HEADER.join(",")} or ${BAR_HEADER.join(",")}` };
  }
  const quotes: MarketQuote[] = [];
  for (let n = 1; n < lines.length; n++) {
    const line = lines[n] as string;
    if (line === "" || line.startsWith("#")) continue;
    const cells = line.split(",").map((c) => c.trim());
    const where = `line ${n + 1}`;
    const atMs = /^\d+$/.test(cells[0] ?? "")
      ? Number(cells[0])
      : (parseDateTime(cells[0] ?? "")?.getTime() ?? Number.NaN);
    if (!Number.isFinite(atMs)) return { ok: false, error: `${where}: not a time: ${cells[0]}` };
    const instrument = fromServiceSymbol(cells[1] ?? "");
    if (!instrument) return { ok: false, error: `${where}: unknown symbol ${cells[1]}` };
    const numbers: Decimal[] = [];
    for (const cell of cells.slice(2, bars ? 6 : 7)) {
      const value = parseDecimal(cell);
      if (value === null || value < 0n) return { ok: false, error: `${where}: not a price or size: ${cell}` };
      numbers.push(value);
    }
    const symbol = instrument.fullSymbol;
    if (bars) {
      const [open, high, low, close] = numbers as [Decimal, Decimal, Decimal, Decimal];
      if (numbers.length < 4 || low > high)
        return { ok: false, error: `${where}: a bar needs open, high, low, close with low <= high` };
      const path = close >= open ? [open, low, high, close] : [open, high, low, close];
      path.forEach((price, i) => {
        quotes.push({ symbol, bid: price, ask: price, last: price, bidSize: null, askSize: null, atMs: atMs + i });
      });
    } else {
      const [bid, ask, last, bidSize, askSize] = numbers;
      if (bid === undefined || ask === undefined || last === undefined || bid > ask) {
        return { ok: false, error: `${where}: a quote needs bid <= ask and a last price` };
      }
      quotes.push({ symbol, bid, ask, last, bidSize: bidSize ?? null, askSize: askSize ?? null, atMs });
    }
  }
  // Stable: rows with the same time keep their file order.
  quotes.sort((a, b) => a.atMs - b.atMs);
  return { ok: true, quotes };
}
