import { dbOf, type Runtime } from "./runtime.js";

/**
 * How a strategy's clients wrote its futures, for the legacy answers: clients
 * of the original service match positions by the symbol they sent (`@ESZ6`,
 * `@TYZ6`), while the service keeps its own form (`@ESZ26`, `@ZNZ26`). An
 * order keeps the symbol as its client wrote it (orders.sent_symbol, set only
 * when that is not the service's form); a contract is named as the
 * strategy's latest order in it that kept one, so its trades and the orders
 * the service made for it (exits, desired positions' closes) are named so
 * too. These read what the caller has been found to reach.
 */

/** The name of a symbol (the service's form) in legacy answers, given the order's own kept form when there is one. */
export type SymbolNames = (symbol: string, sentSymbol?: string | null) => string;

/** The names the strategy's orders give its futures. */
export async function symbolNames(runtime: Runtime, strategyId: number): Promise<SymbolNames> {
  const rows = await dbOf(runtime)
    .selectFrom("orders")
    .select(["symbol", "sent_symbol"])
    .where("strategy_id", "=", strategyId)
    .where("sent_symbol", "is not", null)
    .orderBy("id")
    .execute();
  const latest = new Map<string, string>();
  for (const row of rows) if (row.sent_symbol !== null) latest.set(row.symbol, row.sent_symbol);
  return (symbol, sentSymbol) => sentSymbol ?? latest.get(symbol) ?? symbol;
}
