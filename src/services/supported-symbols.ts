import { SUPPORTED_SYMBOLS, type SupportedSymbol } from "../core/symbols/supported.js";
import { type Page, type PageRequest, pageOfList } from "../store/page.js";

/** The supported-symbols catalogue, optionally of one symbol type, in symbol order. */
export function supportedSymbols(
  symbolType: SupportedSymbol["symbolType"] | undefined,
  page: PageRequest,
): Page<SupportedSymbol> {
  const items =
    symbolType === undefined ? SUPPORTED_SYMBOLS : SUPPORTED_SYMBOLS.filter((s) => s.symbolType === symbolType);
  return pageOfList(items, (s) => [s.symbol], page);
}
