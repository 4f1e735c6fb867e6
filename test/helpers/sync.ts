import assert from "node:assert/strict";
import { decimal } from "../../src/core/decimal.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { follow, settleAutotrade, startAutotrade } from "./autotrade.js";
import { ADMIN_KEY, type TestService } from "./service.js";
import { placed, stockOrder } from "./trading.js";

/** AutoSync scenarios: followers' accounts, what they hold and the sync orders made in them. */

let accounts = 0;

/** A new account of the person at the simulated broker following the strategy (every class on); answers its number. */
export async function syncFollower(
  service: TestService,
  personId: number,
  strategyId: number,
  extra: Record<string, unknown> = {},
  cash = "100000",
): Promise<string> {
  accounts += 1;
  const account = `SYNC-${service.backend}-${accounts}-${Math.random().toString(36).slice(2, 6)}`;
  await openSimulatedBrokerAccount(service.app.runtime, {
    personId,
    brokerId: 1,
    account,
    cash: decimal(cash),
    paper: false,
  });
  await followInto(service, personId, account, strategyId, {
    EnableFutures: true,
    EnableForex: true,
    EnableOptions: true,
    ...extra,
  });
  return account;
}

/** The person's account follows the strategy (too): a live subscription and a started setup, stocks on. */
export async function followInto(
  service: TestService,
  personId: number,
  account: string,
  strategyId: number,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await follow(service, personId, strategyId);
  const started = await startAutotrade(service, ADMIN_KEY, {
    Account: account,
    PersonId: personId,
    StrategyId: strategyId,
    EnableStocks: true,
    ...extra,
  });
  assert.equal(started.status, 200, started.text);
  await settleAutotrade(service);
}

/** What the account's setups hold in the symbol (as the desk wrote it), as decimal text. */
export async function heldIn(service: TestService, account: string, symbol: string): Promise<string> {
  const row = await service.storage.db
    .selectFrom("autotrade_positions as p")
    .innerJoin("broker_accounts as b", "b.account_id", "p.account_id")
    .select("p.quantity")
    .where("b.account_number", "=", account)
    .where("p.symbol", "=", symbol)
    .executeTakeFirst();
  return row?.quantity ?? "0";
}

/** The account's sync orders, oldest first. */
export function syncOrdersOf(service: TestService, account: string) {
  return service.storage.db
    .selectFrom("account_orders as o")
    .innerJoin("broker_accounts as b", "b.account_id", "o.account_id")
    .select(["o.symbol", "o.side", "o.open_close", "o.order_type", "o.quantity", "o.status", "o.idempotency_key"])
    .where("b.account_number", "=", account)
    .where("o.purpose", "=", "sync")
    .orderBy("o.id")
    .execute();
}

/** The account's setup's LastSync times, as GetAutotradeSettings answers them. */
export async function lastSyncOf(
  service: TestService,
  personId: number,
  account: string,
): Promise<Record<string, string | null>> {
  const r = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSettings", {
    key: ADMIN_KEY,
    query: { PersonId: String(personId), Account: account },
  });
  assert.equal(r.status, 200, r.text);
  const settings = r.json.Results[0] as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(settings)
      .filter(([name]) => name.startsWith("LastSync"))
      .map(([name, value]) => [name.slice("LastSync".length), value as string | null]),
  );
}

/** A strategy market order by its owner, filled at once, with the copier and the desk settled after it. */
export async function strategyTrade(
  service: TestService,
  key: string,
  strategyId: number,
  symbol: string,
  side: "buy" | "sell",
  quantity: number,
  extra: Record<string, unknown> = {},
): Promise<number> {
  const order = await placed(service, key, stockOrder(strategyId, symbol, side, quantity, extra));
  await settleAutotrade(service);
  return order.SignalId;
}

/** Moves the clock (set, or forward by seconds) through the sandbox, then lets autotrade settle. */
export async function clockTo(service: TestService, to: string | number): Promise<void> {
  const r =
    typeof to === "string"
      ? await service.call("GEN", "POST", "/Sandbox/SetClock", { key: ADMIN_KEY, body: { Now: to } })
      : await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: to } });
  assert.equal(r.status, 200, r.text);
  await settleAutotrade(service);
}
