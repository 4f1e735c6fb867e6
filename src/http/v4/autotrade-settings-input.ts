import { Type } from "@sinclair/typebox";
import { SYNC_MARKETS, type SyncMarket } from "../../core/autotrade/settings.js";
import { FOREX_LOT_SIZES, type SettingsChange } from "../../core/autotrade/settings-change.js";

/**
 * The follower's preferences SetAutotradeSettings takes beside the spec's
 * flags, named as GetAutotradeSettings' AutotradeSettings record names them
 * (additions to the spec's body, docs/decisions.md), and their reading.
 */
const INT32_MAX = 2_147_483_647;
const Flag = (description: string) => Type.Optional(Type.Boolean({ description }));
const Minimum = (description: string) => Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX, description }));

export const SETTINGS_FIELDS = {
  FuturesLong: Flag("Copy futures orders that open or add to a long position"),
  FuturesShort: Flag("Copy futures orders that open or add to a short position"),
  MinFutures: Minimum("Contracts an opening futures copy is raised to; 0: none"),
  ForexEnabledLong: Flag("Copy forex orders that open or add to a long position"),
  ForexEnabledShort: Flag("Copy forex orders that open or add to a short position"),
  ForexLotSize: Type.Optional(
    Type.Union(
      FOREX_LOT_SIZES.map((size) => Type.Literal(size)),
      { description: `Currency units per lot forex copies are rounded to: ${FOREX_LOT_SIZES.join(", ")}` },
    ),
  ),
  MinForex: Minimum("Units of 1,000 an opening forex copy is raised to (whole lots); 0: none"),
  StocksLong: Flag("Copy stock orders that open or add to a long position"),
  StocksShort: Flag("Copy stock orders that open or add to a short position"),
  TradeStocksAsCFD: Flag("Stock copies trade as CFDs at the broker; changes only while the setup holds no stock"),
  OptionsLong: Flag("Copy options orders that open or add to a long position (shorting is StartAutotrade's)"),
  MinOptions: Minimum("Contracts an opening options copy is raised to; 0: none"),
  ClosingOrdersOnly: Flag("Copy only orders that close positions"),
  IgnoreManualOrders: Flag("Orders executed in the account outside the service leave AutoSync on"),
  VirtualLimitOrdersEnabled: Flag(
    "Copies of limit orders wait at the service and go to the broker at market once the strategy's order fills",
  ),
  ...Object.fromEntries(
    SYNC_MARKETS.map((market) => [
      `WillSyncToOpen${market}`,
      Flag(`AutoSync brings ${market} positions in line at that market's open`),
    ]),
  ),
};

type Wire = { readonly [name: string]: unknown };

const flag = (input: Wire, name: string) => input[name] as boolean | undefined;
const whole = (input: Wire, name: string) => input[name] as number | undefined;

export function settingsChangeOf(input: Wire): SettingsChange {
  return {
    futuresLong: flag(input, "FuturesLong"),
    futuresShort: flag(input, "FuturesShort"),
    minFutures: whole(input, "MinFutures"),
    forexLong: flag(input, "ForexEnabledLong"),
    forexShort: flag(input, "ForexEnabledShort"),
    forexLotSize: whole(input, "ForexLotSize"),
    minForex: whole(input, "MinForex"),
    stocksLong: flag(input, "StocksLong"),
    stocksShort: flag(input, "StocksShort"),
    tradeStocksAsCfd: flag(input, "TradeStocksAsCFD"),
    optionsLong: flag(input, "OptionsLong"),
    minOptions: whole(input, "MinOptions"),
    closingOrdersOnly: flag(input, "ClosingOrdersOnly"),
    ignoreManualOrders: flag(input, "IgnoreManualOrders"),
    virtualLimitOrders: flag(input, "VirtualLimitOrdersEnabled"),
  };
}

export const syncToOpenOf = (input: Wire): Partial<Record<SyncMarket, boolean>> =>
  Object.fromEntries(SYNC_MARKETS.map((market) => [market, flag(input, `WillSyncToOpen${market}`)]));
