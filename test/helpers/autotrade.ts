import assert from "node:assert/strict";
import { decimal } from "../../src/core/decimal.js";
import { COPIER_CONSUMER } from "../../src/engine/autotrade/copier.js";
import { insertBrokerAccount } from "../../src/services/broker-accounts.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { subscribe } from "../../src/services/subscriptions.js";
import { ADMIN_KEY, type CallResult, type Population, type TestService, until } from "./service.js";
import { newStrategy } from "./trading.js";

/** Autotrade scenarios: brokerage accounts, a person following a strategy into one, setups started over the API. */

/** The simulated broker every test account is at (migration 0022 makes it broker 1). */
export const SIMULATED_BROKER = 1;

let accounts = 0;

/** A fresh account number, unique across the test run. */
export const newAccountNumber = (): string => {
  accounts += 1;
  return `T${accounts}-${Math.random().toString(36).slice(2, 8)}`;
};

/** The person's brokerage account at the simulated broker, recorded straight on storage (as the operator CLI does). */
export async function brokerAccount(
  service: TestService,
  personId: number,
  options: { readonly account?: string; readonly cash?: string; readonly paper?: boolean } = {},
): Promise<string> {
  const account = options.account ?? newAccountNumber();
  await insertBrokerAccount(
    service.storage.db,
    {
      personId,
      brokerId: SIMULATED_BROKER,
      account,
      cash: decimal(options.cash ?? "100000"),
      paper: options.paper ?? false,
    },
    service.app.runtime.clock.nowMs(),
  );
  return account;
}

/** A live (free) subscription of the person to the strategy, as the legacy subscribe makes it. */
export async function follow(service: TestService, personId: number, strategyId: number): Promise<void> {
  await subscribe(service.app.runtime, strategyId, personId, null);
}

export interface StartRequest {
  readonly Account: string;
  readonly PersonId: number;
  readonly StrategyId: number;
  readonly BrokerId?: number;
  readonly ScalingPercentage?: number | string;
  readonly [field: string]: unknown;
}

/** StartAutotrade on GEN (or GEO) as `key`. */
export const startAutotrade = (
  service: TestService,
  key: string,
  body: StartRequest,
  server: "GEN" | "GEO" = "GEN",
): Promise<CallResult> =>
  service.call(server, "POST", "/Autotrade/StartAutotrade", {
    key,
    body: { BrokerId: SIMULATED_BROKER, ScalingPercentage: 100, ...body },
  });

/** StopAutotrade as `key`, every value as a client sends it in the query. */
export const stopAutotrade = (
  service: TestService,
  key: string,
  query: Record<string, string | number | boolean>,
  server: "WL" | "GEN" | "GEO" = "GEN",
): Promise<CallResult> =>
  service.call(server, "DELETE", "/Autotrade/StopAutotrade", {
    key,
    query: Object.fromEntries(Object.entries(query).map(([name, value]) => [name, String(value)])),
  });

/**
 * A person autotrading a strategy: a new account at the simulated broker, a
 * live subscription, and a started setup. Answers the account number.
 */
export async function autotrading(
  service: TestService,
  personId: number,
  strategyId: number,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const account = await brokerAccount(service, personId);
  await follow(service, personId, strategyId);
  const started = await startAutotrade(service, ADMIN_KEY, {
    Account: account,
    PersonId: personId,
    StrategyId: strategyId,
    ...extra,
  });
  assert.equal(started.status, 200, started.text);
  assert.equal(started.json, true, started.text);
  return account;
}

/**
 * Until autotrade has done all it will: the copier has consumed every
 * strategy event (an account it had not seen is read from storage first),
 * and the copies' batches, the broker's answers and reports and the desk's
 * writes are all done.
 */
export async function settleAutotrade(service: TestService): Promise<void> {
  await until(async () => {
    // A drain writes the copier's positions past events that asked nothing of it, which otherwise wait a while.
    await service.app.runtime.frame.drain();
    const behind = await service.storage.db
      .selectFrom("accounts as a")
      .leftJoin("outbox_positions as o", (join) =>
        join.onRef("o.account_id", "=", "a.id").on("o.consumer", "=", COPIER_CONSUMER),
      )
      .select("a.id")
      .where("a.kind", "=", "model")
      .where((eb) => eb("a.event_seq", ">", eb.fn.coalesce("o.seq", eb.lit(0))))
      .execute();
    return behind.length === 0;
  });
  for (let i = 0; i < 4; i++) {
    await service.app.runtime.frame.drain();
    await service.app.desk.settled();
    await service.app.brokers.simulated.drain();
  }
}

export interface Following {
  readonly strategyId: number;
  readonly account: string;
}

/**
 * A new strategy of person A that person B follows into a new account at the
 * simulated broker (opened with `cash`), its setup started over the API with
 * stocks on and `start`'s fields; the strategy's name starts with
 * `strategyName`. Answers once autotrade has settled.
 */
export async function followingInNewAccount(
  service: TestService,
  p: Population,
  tag: string,
  options: { readonly cash?: string; readonly start?: Record<string, unknown>; readonly strategyName?: string } = {},
): Promise<Following> {
  const account = `${tag}-${newAccountNumber()}`;
  const strategyId = await newStrategy(
    service,
    p.keys.personA,
    100_000,
    `${options.strategyName ?? "Followed"} ${accounts}`,
  );
  await openSimulatedBrokerAccount(service.app.runtime, {
    personId: p.people.personB,
    brokerId: SIMULATED_BROKER,
    account,
    cash: decimal(options.cash ?? "100000"),
    paper: false,
  });
  await follow(service, p.people.personB, strategyId);
  const started = await startAutotrade(service, ADMIN_KEY, {
    Account: account,
    PersonId: p.people.personB,
    StrategyId: strategyId,
    EnableStocks: true,
    ...options.start,
  });
  assert.equal(started.status, 200, started.text);
  await settleAutotrade(service);
  return { strategyId, account };
}
