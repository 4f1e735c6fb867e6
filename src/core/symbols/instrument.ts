import { readAmount } from "../amounts.js";
import { type Decimal, decimal, formatDecimal, ONE, toNumber } from "../decimal.js";
import { forexPair } from "./forex.js";
import { FUTURES_BY_ROOT, MONTH_CODES } from "./futures.js";
import { contractCalendarYear, serviceRootOf, yearOfDigit } from "./original-futures.js";

/**
 * The symbol master: what a symbol names, and its two spellings in the API.
 * ServiceSymbol is the service's own (`AAPL`, `AAPL261218C00150000`,
 * `@ESM26`, `EURUSD`); ExchangeSymbol is the exchange's (symbol, currency,
 * exchange MIC, security type, maturity, put/call, strike). Translation works
 * both ways, and a symbol neither spelling can name is refused (code 1121).
 */
export type SymbolType = "stock" | "option" | "future" | "forex";
export type SecurityType = "CS" | "OPT" | "FUT" | "FOR";

export interface Instrument {
  readonly symbolType: SymbolType;
  /** The canonical ServiceSymbol.FullSymbol. */
  readonly fullSymbol: string;
  /** The exchange's symbol: ticker, option underlying, futures root, or BASE/QUOTE. */
  readonly exchangeSymbol: string;
  readonly underlying: string | null;
  /** Options: YYYY-MM-DD; futures: YYYY-MM (the contract month). */
  readonly expiry: string | null;
  readonly putOrCall: "put" | "call" | null;
  readonly strike: Decimal | null;
  readonly description: string;
  readonly currency: string;
  /** MIC for futures, DEFAULT otherwise. */
  readonly exchange: string;
  readonly securityType: SecurityType;
  /** Money per point of price per unit of quantity: 100 for options, the point value for futures. */
  readonly multiplier: Decimal;
  readonly tickSize: Decimal;
}

/** The exchange's security type of each kind of instrument, and the reverse. */
export const SECURITY_TYPES: Readonly<Record<SymbolType, SecurityType>> = {
  stock: "CS",
  option: "OPT",
  future: "FUT",
  forex: "FOR",
};
export const SYMBOL_TYPES: Readonly<Record<SecurityType, SymbolType>> = {
  CS: "stock",
  OPT: "option",
  FUT: "future",
  FOR: "forex",
};

/** Share classes and other stock symbols that need their own symbology (listed by GetSupportedSymbols). */
export const SPECIAL_STOCK_SYMBOLS: readonly string[] = [
  "BRK.A",
  "BRK.B",
  "BF.A",
  "BF.B",
  "LEN.B",
  "HEI.A",
  "MOG.A",
  "MOG.B",
  "GEF.B",
  "CWEN.A",
];

const STOCK = /^([A-Z]{1,5})(?:[./]([A-Z]))?$/;
const OCC = /^([A-Z]{1,6})\s*(\d{2})(\d{2})(\d{2})([CP])(\d{8})$/;
/** Root, month code and year: two digits, or one as the original service wrote it (original-futures.ts). */
const FUTURE = /^@?([A-Z0-9]{1,4})([FGHJKMNQUVXZ])(\d{1,2})$/;
const MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const CENT = decimal("0.01");
const OPTION_MULTIPLIER = decimal("100");

function stock(text: string): Instrument | null {
  const match = STOCK.exec(text);
  if (!match) return null;
  const symbol = match[2] ? `${match[1]}.${match[2]}` : (match[1] as string);
  return {
    symbolType: "stock",
    fullSymbol: symbol,
    exchangeSymbol: symbol,
    underlying: null,
    expiry: null,
    putOrCall: null,
    strike: null,
    description: symbol,
    currency: "USD",
    exchange: "DEFAULT",
    securityType: "CS",
    multiplier: ONE,
    tickSize: CENT,
  };
}

function option(root: string, expiry: string, putOrCall: "put" | "call", strike: Decimal): Instrument | null {
  if (!STOCK.test(root) || root.includes(".") || strike <= 0n) return null;
  const day = new Date(`${expiry}T00:00:00Z`);
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== expiry) return null;
  const thousandths = strike * 1000n;
  // OCC strikes have three decimals: 8 digits of thousandths.
  if (thousandths % 10n ** 8n !== 0n) return null;
  const strikeDigits = (thousandths / 10n ** 8n).toString();
  if (strikeDigits.length > 8) return null;
  const yymmdd = `${expiry.slice(2, 4)}${expiry.slice(5, 7)}${expiry.slice(8, 10)}`;
  const fullSymbol = `${root}${yymmdd}${putOrCall === "call" ? "C" : "P"}${strikeDigits.padStart(8, "0")}`;
  const month = MONTH_NAMES[day.getUTCMonth()];
  return {
    symbolType: "option",
    fullSymbol,
    exchangeSymbol: root,
    underlying: root,
    expiry,
    putOrCall,
    strike,
    description: `${root} ${day.getUTCDate()} ${month} ${day.getUTCFullYear()} ${formatDecimal(strike)} ${putOrCall === "call" ? "Call" : "Put"}`,
    currency: "USD",
    exchange: "DEFAULT",
    securityType: "OPT",
    multiplier: OPTION_MULTIPLIER,
    tickSize: CENT,
  };
}

function future(root: string, year: number, monthIndex: number): Instrument | null {
  const contract = FUTURES_BY_ROOT.get(serviceRootOf(root));
  const code = MONTH_CODES[monthIndex];
  if (!contract || !code || !contract.months.includes(code) || year < 2000 || year > 2099) return null;
  return {
    symbolType: "future",
    fullSymbol: `@${contract.root}${code}${String(year % 100).padStart(2, "0")}`,
    exchangeSymbol: contract.root,
    underlying: contract.root,
    expiry: `${year}-${String(monthIndex + 1).padStart(2, "0")}`,
    putOrCall: null,
    strike: null,
    description: `${contract.description} ${MONTH_NAMES[monthIndex]} ${year}`,
    currency: contract.currency,
    exchange: contract.exchange,
    securityType: "FUT",
    multiplier: contract.pointValue,
    tickSize: contract.tickSize,
  };
}

function forex(text: string): Instrument | null {
  const pair = forexPair(text);
  if (!pair) return null;
  return {
    symbolType: "forex",
    fullSymbol: `${pair.base}${pair.quote}`,
    exchangeSymbol: `${pair.base}/${pair.quote}`,
    underlying: null,
    expiry: null,
    putOrCall: null,
    strike: null,
    description: `${pair.base}/${pair.quote}`,
    currency: pair.quote,
    exchange: "DEFAULT",
    securityType: "FOR",
    multiplier: ONE,
    tickSize: pair.tickSize,
  };
}

/** The contract year of a futures symbol's year digits; a single digit needs the service clock's year. */
function contractYear(digits: string, nowMs: number | undefined): number | null {
  if (digits.length === 2) return 2000 + Number(digits);
  return nowMs === undefined ? null : yearOfDigit(Number(digits), contractCalendarYear(nowMs));
}

/**
 * Instruments are immutable, and the orders, positions and trades held in
 * memory name few of them: each is kept once, by its type and canonical
 * symbol (which determine every other field), and handed to every reader, not
 * a copy per order (about 150 bytes with its symbol's string). The table is
 * bounded, since clients may name any number of symbols: when full it starts
 * over, which loses sharing, never an answer.
 */
const SHARED_INSTRUMENTS_KEPT = 10_000;
const sharedInstruments = new Map<string, Instrument>();

function shared(instrument: Instrument): Instrument {
  const key = `${instrument.symbolType}:${instrument.fullSymbol}`;
  const known = sharedInstruments.get(key);
  if (known) return known;
  if (sharedInstruments.size >= SHARED_INSTRUMENTS_KEPT) sharedInstruments.clear();
  sharedInstruments.set(key, instrument);
  return instrument;
}

/**
 * The instrument a ServiceSymbol names; the SymbolType, when given, must
 * agree. `nowMs` is the service clock when a client's symbol is read: the
 * original service's single-digit futures years are read against it (without
 * it, as for stored symbols, only two-digit years are).
 */
export function fromServiceSymbol(fullSymbol: string, symbolType?: string, nowMs?: number): Instrument | null {
  const text = fullSymbol.trim().toUpperCase();
  const wanted = symbolType?.trim().toLowerCase();
  const candidates: (() => Instrument | null)[] = [
    () => {
      const m = FUTURE.exec(text);
      if (!m || (!text.startsWith("@") && wanted !== "future")) return null;
      const year = contractYear(m[3] as string, nowMs);
      return year === null ? null : future(m[1] as string, year, MONTH_CODES.indexOf(m[2] as string));
    },
    () => {
      const m = OCC.exec(text);
      if (!m) return null;
      const strike = (BigInt(m[6] as string) * 10n ** 8n) / 1000n;
      return option(m[1] as string, `20${m[2]}-${m[3]}-${m[4]}`, m[5] === "C" ? "call" : "put", strike as Decimal);
    },
    () => forex(text),
    () => stock(text),
  ];
  for (const candidate of candidates) {
    const instrument = candidate();
    if (instrument && (wanted === undefined || wanted === instrument.symbolType)) return shared(instrument);
  }
  return null;
}

export interface ExchangeSymbolInput {
  readonly symbol: string;
  readonly securityType: string;
  readonly currency?: string | undefined;
  readonly securityExchange?: string | undefined;
  /** YYYYMM for futures, YYYYMMDD for options. */
  readonly maturityMonthYear?: string | undefined;
  /** 0 put, 1 call. */
  readonly putOrCall?: number | undefined;
  readonly strikePrice?: string | number | undefined;
}

/** The instrument an ExchangeSymbol names; fields it gives beyond the symbol must agree with it. */
export function fromExchangeSymbol(input: ExchangeSymbolInput): Instrument | null {
  const symbol = input.symbol.trim().toUpperCase();
  const type = input.securityType.trim().toUpperCase();
  let instrument: Instrument | null = null;
  switch (type) {
    case "CS":
      instrument = stock(symbol);
      break;
    case "FOR": {
      const currency = input.currency?.trim().toUpperCase();
      instrument = /^[A-Z]{3}$/.test(symbol) && currency ? forex(`${symbol}${currency}`) : forex(symbol);
      break;
    }
    case "FUT": {
      const m = /^(\d{4})(\d{2})$/.exec(input.maturityMonthYear?.trim() ?? "");
      instrument = m ? future(symbol, Number(m[1]), Number(m[2]) - 1) : null;
      break;
    }
    case "OPT": {
      const m = /^(\d{4})(\d{2})(\d{2})$/.exec(input.maturityMonthYear?.trim() ?? "");
      const reading = input.strikePrice === undefined ? null : readAmount(input.strikePrice);
      const strike = reading?.ok ? reading.value : null;
      const side = input.putOrCall === 1 ? "call" : input.putOrCall === 0 ? "put" : null;
      instrument = m && strike !== null && side ? option(symbol, `${m[1]}-${m[2]}-${m[3]}`, side, strike) : null;
      break;
    }
  }
  if (!instrument) return null;
  const currency = input.currency?.trim().toUpperCase();
  if (currency && currency !== instrument.currency && type !== "FOR") return null;
  // Stocks, options and forex are routed by the service whatever exchange a client names; a
  // futures contract trades on one exchange only, so a wrong one is refused.
  const exchange = input.securityExchange?.trim().toUpperCase();
  if (type === "FUT" && exchange && exchange !== "DEFAULT" && exchange !== instrument.exchange) return null;
  return shared(instrument);
}

/** ServiceSymbol as the API answers it. */
export function serviceSymbolOf(instrument: Instrument) {
  return {
    FullSymbol: instrument.fullSymbol,
    SymbolType: instrument.symbolType,
    Underlying: instrument.underlying,
    Expiry: instrument.expiry,
    PutOrCall: instrument.putOrCall,
    StrikePrice: instrument.strike === null ? null : toNumber(instrument.strike),
    Description: instrument.description,
  };
}

/** ExchangeSymbol as the API answers it. */
export function exchangeSymbolOf(instrument: Instrument) {
  const maturity =
    instrument.expiry === null
      ? null
      : instrument.symbolType === "future"
        ? instrument.expiry.replace("-", "")
        : instrument.expiry.replaceAll("-", "");
  return {
    Symbol: instrument.exchangeSymbol,
    Currency: instrument.currency,
    SecurityExchange: instrument.exchange,
    SecurityType: SECURITY_TYPES[instrument.symbolType],
    MaturityMonthYear: maturity,
    PutOrCall: instrument.putOrCall === null ? null : instrument.putOrCall === "call" ? 1 : 0,
    // The exchange spelling uses 0 for "no strike".
    StrikePrice: instrument.strike === null ? 0 : toNumber(instrument.strike),
    PriceMultiplier: toNumber(instrument.multiplier),
  };
}
