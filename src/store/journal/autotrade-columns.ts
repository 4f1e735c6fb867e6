/**
 * The columns of the autotrade copier's rows, as both journals write them
 * (the PostgreSQL journal casts each unnested array to its type).
 */
export type JournalColumn = readonly [name: string, type: "bigint" | "integer" | "text"];

export const ACCOUNT_ORDER_COLUMNS: readonly JournalColumn[] = [
  ["account_id", "bigint"],
  ["setup_id", "bigint"],
  ["strategy_id", "bigint"],
  ["source_order_id", "bigint"],
  ["purpose", "text"],
  ["symbol", "text"],
  ["symbol_type", "text"],
  ["side", "text"],
  ["open_close", "text"],
  ["order_type", "text"],
  ["tif", "text"],
  ["quantity", "text"],
  ["limit_price", "text"],
  ["stop_price", "text"],
  ["status", "text"],
  ["prior_status", "text"],
  ["awaiting_confirmation", "integer"],
  ["virtual_limit", "integer"],
  ["as_cfd", "integer"],
  ["filled_quantity", "text"],
  ["filled_notional", "text"],
  ["idempotency_key", "text"],
  ["broker_order_id", "text"],
  ["replaces_id", "bigint"],
  ["reason", "text"],
  ["created_at", "bigint"],
  ["updated_at", "bigint"],
  ["sent_at", "bigint"],
  ["closed_at", "bigint"],
];

export const COPY_SKIP_COLUMNS: readonly JournalColumn[] = [
  ["setup_id", "bigint"],
  ["account_id", "bigint"],
  ["strategy_id", "bigint"],
  ["source_order_id", "bigint"],
  ["reason", "text"],
  ["message", "text"],
  ["at", "bigint"],
];
