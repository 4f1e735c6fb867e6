import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { toNumber } from "../../../core/decimal.js";
import { SECURITY_TYPES } from "../../../core/symbols/instrument.js";
import { supportedSymbols } from "../../../services/supported-symbols.js";
import { defineOperation } from "../operation.js";
import { SupportedSymbolRecord } from "../records.js";

/** Symbol operations under /Strategies. */
export const symbolOperations = [
  defineOperation({
    id: "GetSupportedSymbols",
    method: "GET",
    path: "/Strategies/GetSupportedSymbols",
    servers: ["WL"],
    summary:
      "Supported futures roots and forex pairs, and the stock symbols that need special symbology. US stocks and US equity options are supported by default and not listed.",
    input: Type.Object({
      SymbolType: Type.Optional(
        Type.Union([Type.Literal("future"), Type.Literal("forex"), Type.Literal("stock")], {
          description: "Only this kind of symbol",
        }),
      ),
    }),
    result: SupportedSymbolRecord,
    permission: anyCaller,
    cacheSeconds: 3600,
    paginated: true,
    example: { SymbolType: "future" },
    handler: async (_ctx, input, page) => {
      const result = supportedSymbols(input.SymbolType, page);
      return {
        ...result,
        items: result.items.map((s) => ({
          SymbolType: s.symbolType,
          Symbol: s.symbol,
          Description: s.description,
          SecurityType: SECURITY_TYPES[s.symbolType],
          SecurityExchange: s.exchange,
          Currency: s.currency,
          PriceMultiplier: toNumber(s.multiplier),
          TickSize: toNumber(s.tickSize),
          ContractMonths: s.contractMonths,
        })),
      };
    },
  }),
];
