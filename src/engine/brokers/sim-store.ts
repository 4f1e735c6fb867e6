import { type Decimal, formatDecimal, storedDecimal } from "../../core/decimal.js";
import type { SimBrokerExecutionsTable, SimBrokerOrdersTable } from "../../store/schema.js";
import type { Storage } from "../../store/storage.js";
import { type Tx, transaction } from "../../store/transaction.js";
import type { StandingFault } from "./sim-faults.js";

/**
 * The simulated broker's books in storage: rows in and out, and one batch
 * written in one transaction. Rows are written whole (an upsert by
 * idempotency key), so a batch of any size is a few statements.
 */
export type SimOrderStatus = SimBrokerOrdersTable["status"];

export interface SimOrder {
  readonly id: string;
  readonly key: string;
  brokerOrderId: string;
  readonly account: string;
  readonly symbol: string;
  readonly symbolType: SimBrokerOrdersTable["symbol_type"];
  readonly side: "buy" | "sell";
  readonly orderType: "market" | "limit" | "stop";
  readonly tif: "day" | "gtc";
  readonly quantity: Decimal;
  limit: Decimal | null;
  stop: Decimal | null;
  readonly asCfd: boolean;
  status: SimOrderStatus;
  filled: Decimal;
  reason: string | null;
  readonly partialFraction: Decimal | null;
  heldUntil: number | null;
  readonly expiresAt: number | null;
  replacements: number;
  readonly createdAt: number;
  updatedAt: number;
}

export interface SimPosition {
  readonly symbolType: SimBrokerOrdersTable["symbol_type"];
  quantity: Decimal;
}

export interface SimAccount {
  readonly account: string;
  cash: Decimal;
  linked: boolean;
  username: string | null;
  readonly positions: Map<string, SimPosition>;
  readonly faults: Map<StandingFault["kind"], StandingFault>;
}

export type SimExecution = SimBrokerExecutionsTable;

export const OPEN_STATUSES: readonly SimOrderStatus[] = ["new", "working"];

export const isOpen = (order: SimOrder): boolean => order.status === "new" || order.status === "working";

const decimalOrNull = (text: string | null): Decimal | null => (text === null ? null : storedDecimal(text));
const textOrNull = (value: Decimal | null): string | null => (value === null ? null : formatDecimal(value));

export function orderRow(order: SimOrder, reported: boolean): SimBrokerOrdersTable {
  return {
    id: order.id,
    idempotency_key: order.key,
    broker_order_id: order.brokerOrderId,
    account: order.account,
    symbol: order.symbol,
    symbol_type: order.symbolType,
    side: order.side,
    order_type: order.orderType,
    tif: order.tif,
    quantity: formatDecimal(order.quantity),
    limit_price: textOrNull(order.limit),
    stop_price: textOrNull(order.stop),
    as_cfd: order.asCfd ? 1 : 0,
    status: order.status,
    filled_quantity: formatDecimal(order.filled),
    reason: order.reason,
    partial_fraction: textOrNull(order.partialFraction),
    held_until: order.heldUntil,
    expires_at: order.expiresAt,
    replacements: order.replacements,
    reported: reported ? 1 : 0,
    created_at: order.createdAt,
    updated_at: order.updatedAt,
  };
}

export function orderOf(row: SimBrokerOrdersTable): SimOrder {
  return {
    id: row.id,
    key: row.idempotency_key,
    brokerOrderId: row.broker_order_id,
    account: row.account,
    symbol: row.symbol,
    symbolType: row.symbol_type,
    side: row.side,
    orderType: row.order_type,
    tif: row.tif,
    quantity: storedDecimal(row.quantity),
    limit: decimalOrNull(row.limit_price),
    stop: decimalOrNull(row.stop_price),
    asCfd: row.as_cfd === 1,
    status: row.status,
    filled: storedDecimal(row.filled_quantity),
    reason: row.reason,
    partialFraction: decimalOrNull(row.partial_fraction),
    heldUntil: row.held_until === null ? null : Number(row.held_until),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    replacements: row.replacements,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Opens an account at the simulated broker (the operator CLI does, beside the service's record of it). */
export async function openSimulatedAccount(db: Tx, account: string, cash: Decimal, nowMs: number): Promise<void> {
  await db
    .insertInto("sim_broker_accounts")
    .values({ account, cash: formatDecimal(cash), is_linked: 1, username: null, created_at: nowMs })
    .execute();
}

/** Reads an account with its positions and standing faults; null when the broker has none of that name. */
export async function loadAccount(db: Tx, account: string): Promise<SimAccount | null> {
  const row = await db.selectFrom("sim_broker_accounts").selectAll().where("account", "=", account).executeTakeFirst();
  if (!row) return null;
  const positions = await db.selectFrom("sim_broker_positions").selectAll().where("account", "=", account).execute();
  const faults = await db.selectFrom("sim_broker_faults").selectAll().where("account", "=", account).execute();
  return {
    account,
    cash: storedDecimal(row.cash),
    linked: row.is_linked === 1,
    username: row.username,
    positions: new Map(
      positions.map((p) => [p.symbol, { symbolType: p.symbol_type, quantity: storedDecimal(p.quantity) }]),
    ),
    faults: new Map(faults.map((f) => [f.fault as StandingFault["kind"], faultOf(f.detail)])),
  };
}

/** Orders still open, and orders whose last change was never handed to a listener. */
export async function loadLiveOrders(db: Tx): Promise<{ order: SimOrder; reported: boolean }[]> {
  const rows = await db
    .selectFrom("sim_broker_orders")
    .selectAll()
    .where((eb) => eb.or([eb("status", "in", OPEN_STATUSES), eb("reported", "=", 0)]))
    .execute();
  return rows.map((row) => ({ order: orderOf(row), reported: row.reported === 1 }));
}

export async function loadOrderByKey(db: Tx, key: string): Promise<SimOrder | null> {
  const row = await db
    .selectFrom("sim_broker_orders")
    .selectAll()
    .where("idempotency_key", "=", key)
    .executeTakeFirst();
  return row ? orderOf(row) : null;
}

/** The executions of orders, for repeating their fills. */
export async function executionsOf(db: Tx, orderIds: readonly string[]): Promise<SimExecution[]> {
  const found: SimExecution[] = [];
  for (const ids of chunks(orderIds, 500)) {
    found.push(
      ...(await db
        .selectFrom("sim_broker_executions")
        .selectAll()
        .where("order_id", "in", ids)
        .orderBy("id")
        .execute()),
    );
  }
  return found;
}

/** What one batch writes. */
export interface SimBatch {
  /** New orders: inserted unless their key is already taken (then the stored order is answered). */
  readonly arriving: readonly SimOrder[];
  readonly changed: readonly SimOrder[];
  /** Orders whose reports listeners heard. */
  readonly reported: readonly string[];
  readonly executions: readonly SimExecution[];
  readonly accounts: readonly SimAccount[];
  readonly positions: readonly { readonly account: string; readonly symbol: string; readonly position: SimPosition }[];
  /** Accounts whose standing faults are rewritten. */
  readonly faults: readonly SimAccount[];
}

/** Chunks of rows small enough for either backend's limit on parameters in one statement. */
function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** Writes a batch in one transaction; answers the orders already stored under arriving orders' keys. */
export function writeBatch(storage: Storage, batch: SimBatch, nowMs: number): Promise<Map<string, SimOrder>> {
  return transaction(storage, async (tx) => {
    const inserted = new Set<string>();
    for (const part of chunks(batch.arriving, 1000)) {
      const rows = await tx
        .insertInto("sim_broker_orders")
        .values(part.map((order) => orderRow(order, true)))
        .onConflict((oc) => oc.column("idempotency_key").doNothing())
        .returning("idempotency_key")
        .execute();
      for (const row of rows) inserted.add(row.idempotency_key);
    }
    const taken = new Map<string, SimOrder>();
    const takenKeys = batch.arriving.filter((o) => !inserted.has(o.key)).map((o) => o.key);
    for (const keys of chunks(takenKeys, 500)) {
      const rows = await tx.selectFrom("sim_broker_orders").selectAll().where("idempotency_key", "in", keys).execute();
      for (const row of rows) taken.set(row.idempotency_key, orderOf(row));
    }
    for (const part of chunks(batch.changed, 1000)) {
      await tx
        .insertInto("sim_broker_orders")
        .values(part.map((order) => orderRow(order, false)))
        .onConflict((oc) =>
          oc.column("idempotency_key").doUpdateSet((eb) => ({
            broker_order_id: eb.ref("excluded.broker_order_id"),
            limit_price: eb.ref("excluded.limit_price"),
            stop_price: eb.ref("excluded.stop_price"),
            status: eb.ref("excluded.status"),
            filled_quantity: eb.ref("excluded.filled_quantity"),
            reason: eb.ref("excluded.reason"),
            held_until: eb.ref("excluded.held_until"),
            replacements: eb.ref("excluded.replacements"),
            reported: eb.ref("excluded.reported"),
            updated_at: eb.ref("excluded.updated_at"),
          })),
        )
        .execute();
    }
    for (const ids of chunks(batch.reported, 1000)) {
      await tx.updateTable("sim_broker_orders").set({ reported: 1 }).where("id", "in", ids).execute();
    }
    for (const part of chunks(batch.executions, 1000)) {
      await tx
        .insertInto("sim_broker_executions")
        .values(part)
        .onConflict((oc) => oc.column("id").doNothing())
        .execute();
    }
    for (const account of batch.accounts) {
      await tx
        .updateTable("sim_broker_accounts")
        .set({ cash: formatDecimal(account.cash), is_linked: account.linked ? 1 : 0, username: account.username })
        .where("account", "=", account.account)
        .execute();
    }
    for (const part of chunks(batch.positions, 1000)) {
      await tx
        .insertInto("sim_broker_positions")
        .values(
          part.map(({ account, symbol, position }) => ({
            account,
            symbol,
            symbol_type: position.symbolType,
            quantity: formatDecimal(position.quantity),
          })),
        )
        .onConflict((oc) =>
          oc.columns(["account", "symbol"]).doUpdateSet((eb) => ({ quantity: eb.ref("excluded.quantity") })),
        )
        .execute();
    }
    for (const account of batch.faults) {
      await tx.deleteFrom("sim_broker_faults").where("account", "=", account.account).execute();
      if (account.faults.size === 0) continue;
      await tx
        .insertInto("sim_broker_faults")
        .values(
          [...account.faults.values()].map((fault) => ({
            account: account.account,
            fault: fault.kind,
            detail: faultText(fault),
            created_at: nowMs,
          })),
        )
        .execute();
    }
    return taken;
  });
}

function faultText(fault: StandingFault): string {
  return JSON.stringify(fault.kind === "partialFill" ? { ...fault, fraction: formatDecimal(fault.fraction) } : fault);
}

function faultOf(detail: string): StandingFault {
  const parsed = JSON.parse(detail) as StandingFault & { fraction?: string };
  return parsed.kind === "partialFill"
    ? { kind: "partialFill", fraction: storedDecimal(parsed.fraction as unknown as string) }
    : parsed;
}
