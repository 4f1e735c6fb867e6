import { type Decimal, decimal, formatDecimal } from "../decimal.js";

/**
 * An autotrade setup's settings (API.md Records, AutotradeSettings), as the
 * copier applies them. StartAutotrade sets them (4.3); SetAutotradeSettings
 * changes only the enablement flags, which are columns of their own.
 *
 * Quantities: futures and options in contracts, forex in units of 1,000
 * currency units (4.3 "one unit = 1000 currency units"), stocks capped in
 * dollars. A minimum of 0 means none; a maximum of null means none.
 */
export interface ClassSettings {
  readonly enabled: boolean;
  readonly long: boolean;
  readonly short: boolean;
  readonly min: number;
  readonly max: number | null;
}

export interface SetupSettings {
  readonly futures: ClassSettings;
  readonly forex: ClassSettings & {
    /** Currency units per lot: forex quantities are whole lots. */
    readonly lotSize: number;
  };
  readonly stocks: ClassSettings & {
    readonly asCfd: boolean;
    /** The most dollars one position may hold (MaxStocksDollars, whole dollars). */
    readonly maxDollars: number | null;
  };
  readonly options: ClassSettings;
  readonly ignoreManualOrders: boolean;
  readonly closingOrdersOnly: boolean;
  readonly virtualLimitOrders: boolean;
  readonly isTradeLeader: boolean;
  readonly isManualDiscardedPosition: boolean;
  /** Dollars of loss at which the automatic stop loss closes a copied position (null: none). */
  readonly autoStopLossDollars: number | null;
  readonly brokerUsername: string | null;
}

/** Stock orders of a setup with TradeStocksAsCFD go to the broker as CFDs; nothing else does. */
export const tradesAsCfd = (symbolType: string, settings: SetupSettings): boolean =>
  symbolType === "stock" && settings.stocks.asCfd;

/** Why a virtual limit copy waits at the service (VirtualLimitOrdersEnabled). */
export const VIRTUAL_LIMIT_REASON = "Virtual limit: sent at market once the strategy's order fills";

/** One currency unit of MaxForexUnits is this many units of currency. */
export const FOREX_UNIT = 1000;

/** The StartAutotrade fields that make settings (4.3), absent ones at their defaults. */
export interface StartAutotradeFields {
  readonly EnableFutures?: boolean | undefined;
  readonly MaxFuturesContracts?: number | undefined;
  readonly EnableForex?: boolean | undefined;
  readonly MaxForexUnits?: number | undefined;
  readonly EnableStocks?: boolean | undefined;
  readonly MaxStocksDollars?: number | undefined;
  readonly TradeStocksAsCFD?: boolean | undefined;
  readonly EnableOptions?: boolean | undefined;
  readonly EnableOptionsShorting?: boolean | undefined;
  readonly MaxOptionsContracts?: number | undefined;
  readonly AutoStopLossDollars?: number | undefined;
  readonly BrokerUsername?: string | undefined;
}

const classOf = (enabled: boolean | undefined, max: number | undefined, short = true): ClassSettings => ({
  enabled: enabled === true,
  long: true,
  short,
  min: 0,
  max: max ?? null,
});

/** The settings a start makes: every class off unless enabled (4.3 defaults), long and short allowed. */
export function settingsOfStart(fields: StartAutotradeFields): SetupSettings {
  return {
    futures: classOf(fields.EnableFutures, fields.MaxFuturesContracts),
    forex: {
      ...classOf(fields.EnableForex, fields.MaxForexUnits),
      lotSize: FOREX_UNIT,
    },
    stocks: {
      ...classOf(fields.EnableStocks, undefined),
      asCfd: fields.TradeStocksAsCFD === true,
      maxDollars: fields.MaxStocksDollars ?? null,
    },
    options: classOf(fields.EnableOptions, fields.MaxOptionsContracts, fields.EnableOptionsShorting === true),
    ignoreManualOrders: false,
    closingOrdersOnly: false,
    virtualLimitOrders: false,
    isTradeLeader: false,
    isManualDiscardedPosition: false,
    autoStopLossDollars: fields.AutoStopLossDollars ?? null,
    brokerUsername: fields.BrokerUsername ?? null,
  };
}

/**
 * A start on a live setup: what a start sets (each class on or off, the
 * maxima, options shorting, the automatic stop loss, the broker user name)
 * is the start's; the follower's own preferences, set with
 * SetAutotradeSettings, stay as they were (TradeStocksAsCFD, which both may
 * set, is the start's only when it names it).
 */
export function restartedSettings(previous: SetupSettings, fields: StartAutotradeFields): SetupSettings {
  const started = settingsOfStart(fields);
  const approved = <C extends ClassSettings>(was: C, now: C): C => ({ ...was, enabled: now.enabled, max: now.max });
  return {
    ...previous,
    futures: approved(previous.futures, started.futures),
    forex: approved(previous.forex, started.forex),
    stocks: {
      ...approved(previous.stocks, started.stocks),
      maxDollars: started.stocks.maxDollars,
      asCfd: fields.TradeStocksAsCFD ?? previous.stocks.asCfd,
    },
    options: { ...approved(previous.options, started.options), short: started.options.short },
    autoStopLossDollars: started.autoStopLossDollars,
    brokerUsername: started.brokerUsername,
  };
}

export const settingsText = (settings: SetupSettings): string => JSON.stringify(settings);

/** Settings read, by their text: setups share a few texts, and a report reads thousands of setups. */
const readSettings = new Map<string, SetupSettings>();
const READ_SETTINGS_KEPT = 1000;

/** Settings as stored, with any field a later version added at its default (shared: never to be changed). */
export function settingsOfText(text: string): SetupSettings {
  const known = readSettings.get(text);
  if (known) return known;
  const stored = JSON.parse(text) as Partial<SetupSettings>;
  const settings = { ...settingsOfStart({}), ...stored };
  if (readSettings.size >= READ_SETTINGS_KEPT) readSettings.clear();
  readSettings.set(text, settings);
  return settings;
}

/** The eight markets of WillSyncToOpen and LastSync (API.md Records: the field-name suffixes). */
export const SYNC_MARKETS = [
  "StocksUSA",
  "StocksEurope",
  "OptionsUSA",
  "OptionsEurope",
  "FuturesUSA",
  "FuturesEurope",
  "FuturesAsia",
  "Forex",
] as const;
export type SyncMarket = (typeof SYNC_MARKETS)[number];

/**
 * WillSyncToOpen of a new setup: on for every market. A new follower joins
 * the strategy's open positions at each market's next open; with
 * DoNotJoinOpenPositions AutoSync skips the positions the strategy held when
 * the setup started, each until the strategy is flat in it (issue 14), and
 * syncs everything else.
 */
export const syncToOpenOfStart = (): Record<SyncMarket, boolean> =>
  Object.fromEntries(SYNC_MARKETS.map((market) => [market, true])) as Record<SyncMarket, boolean>;

/** The WillSyncToOpen flags as stored (a market missing is off). */
export function willSyncOf(text: string): Record<SyncMarket, boolean> {
  const stored = JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(SYNC_MARKETS.map((market) => [market, stored[market] === true])) as Record<
    SyncMarket,
    boolean
  >;
}

/** The LastSync times as stored, in milliseconds (null: never synced). */
export function lastSyncOf(text: string): Record<SyncMarket, number | null> {
  const stored = JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(
    SYNC_MARKETS.map((market) => {
      const value = stored[market];
      return [market, typeof value === "number" ? value : null];
    }),
  ) as Record<SyncMarket, number | null>;
}

/** The ScalingPercentage a setup copies at: a positive decimal, at most 1000 (docs/decisions.md). */
export const MAX_SCALING_PERCENTAGE = 1000;

export const scalingText = (percentage: Decimal | number): string =>
  formatDecimal(typeof percentage === "number" ? decimal(String(percentage)) : percentage);
