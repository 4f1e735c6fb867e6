import { FOREX_UNIT, type SetupSettings } from "./settings.js";

/**
 * What SetAutotradeSettings changes of a setup's settings: the follower's own
 * preferences about the orders copied (docs/decisions.md). What a start sets
 * (each class on or off, the maxima, options shorting, the automatic stop
 * loss, the scaling) changes only by a new start, which a white-label site
 * has its customer approve; these do not widen what the customer approved
 * beyond taking the other side of a class already on.
 */
export interface SettingsChange {
  readonly futuresLong?: boolean | undefined;
  readonly futuresShort?: boolean | undefined;
  readonly minFutures?: number | undefined;
  readonly forexLong?: boolean | undefined;
  readonly forexShort?: boolean | undefined;
  readonly forexLotSize?: number | undefined;
  readonly minForex?: number | undefined;
  readonly stocksLong?: boolean | undefined;
  readonly stocksShort?: boolean | undefined;
  readonly tradeStocksAsCfd?: boolean | undefined;
  readonly optionsLong?: boolean | undefined;
  readonly minOptions?: number | undefined;
  readonly closingOrdersOnly?: boolean | undefined;
  readonly ignoreManualOrders?: boolean | undefined;
  readonly virtualLimitOrders?: boolean | undefined;
}

/** The forex lot sizes a setup may trade in: micro, mini and standard lots (currency units). */
export const FOREX_LOT_SIZES: readonly number[] = [1_000, 10_000, 100_000];

export const isEmptySettingsChange = (change: SettingsChange): boolean =>
  Object.values(change).every((value) => value === undefined);

const or = <T>(value: T | undefined, kept: T): T => (value === undefined ? kept : value);

/** The settings after the change; what it leaves out stays as it was. */
export function changedSettings(settings: SetupSettings, change: SettingsChange): SetupSettings {
  const { futures, forex, stocks, options } = settings;
  return {
    ...settings,
    futures: {
      ...futures,
      long: or(change.futuresLong, futures.long),
      short: or(change.futuresShort, futures.short),
      min: or(change.minFutures, futures.min),
    },
    forex: {
      ...forex,
      long: or(change.forexLong, forex.long),
      short: or(change.forexShort, forex.short),
      lotSize: or(change.forexLotSize, forex.lotSize),
      min: or(change.minForex, forex.min),
    },
    stocks: {
      ...stocks,
      long: or(change.stocksLong, stocks.long),
      short: or(change.stocksShort, stocks.short),
      asCfd: or(change.tradeStocksAsCfd, stocks.asCfd),
    },
    options: { ...options, long: or(change.optionsLong, options.long), min: or(change.minOptions, options.min) },
    closingOrdersOnly: or(change.closingOrdersOnly, settings.closingOrdersOnly),
    ignoreManualOrders: or(change.ignoreManualOrders, settings.ignoreManualOrders),
    virtualLimitOrders: or(change.virtualLimitOrders, settings.virtualLimitOrders),
  };
}

export interface SettingsRefusal {
  readonly field: string;
  readonly message: string;
}

/**
 * Why settings cannot stand together, or null: a minimum above its class's
 * maximum (a copy could never be made), a forex lot size the brokers do not
 * trade, or a forex minimum that is not whole lots.
 */
export function settingsRefusal(settings: SetupSettings): SettingsRefusal | null {
  const classes = [
    ["MinFutures", "MaxFutures", settings.futures],
    ["MinForex", "MaxForex", settings.forex],
    ["MinOptions", "MaxOptions", settings.options],
  ] as const;
  for (const [minField, maxField, cls] of classes) {
    if (cls.max !== null && cls.min > cls.max) {
      return { field: minField, message: `${minField} ${cls.min} is above the setup's ${maxField} ${cls.max}` };
    }
  }
  if (!FOREX_LOT_SIZES.includes(settings.forex.lotSize)) {
    return { field: "ForexLotSize", message: `ForexLotSize must be one of ${FOREX_LOT_SIZES.join(", ")}` };
  }
  if ((settings.forex.min * FOREX_UNIT) % settings.forex.lotSize !== 0) {
    return {
      field: "MinForex",
      message: `MinForex ${settings.forex.min} (units of ${FOREX_UNIT}) is not a whole number of lots of ${settings.forex.lotSize}`,
    };
  }
  return null;
}
