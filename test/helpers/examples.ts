import assert from "node:assert/strict";
import { decimal } from "../../src/core/decimal.js";
import { EXAMPLE } from "../../src/http/v4/examples.js";
import { fundHouseAccount, setStrategyPrice } from "../../src/services/commerce-admin.js";
import { createPerson } from "../../src/services/people.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { createSite } from "../../src/services/sites.js";
import { settleAutotrade } from "./autotrade.js";
import { ADMIN_KEY, type TestService } from "./service.js";
import { placed, setQuote } from "./trading.js";

/**
 * Fills a fresh service with the objects the operations' examples name
 * (src/http/v4/examples.ts), through the API where it has a way; fails if an
 * id comes out other than the examples say.
 */
export async function buildExampleService(service: TestService): Promise<void> {
  const runtime = service.app.runtime;
  const ok = async (server: "WL" | "GEN" | "GEO", path: string, body: unknown) => {
    const r = await service.call(server, "POST", path, { body });
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    return r.json.Results[0];
  };
  const put = async (path: string, body: unknown) => {
    const r = await service.call("GEN", "PUT", path, { body });
    assert.equal(r.status, 200, `${path}: ${r.text}`);
  };
  await ok("GEN", "/Sandbox/SetClock", { Now: EXAMPLE.now });
  const geo = await createSite(runtime, { kind: "geo", name: EXAMPLE.geoSite, domain: "geo.example.com" });
  const site = await createSite(runtime, { kind: "whitelabel", name: "Alpine Trading", geoSiteId: geo.id });
  assert.equal(site.id, EXAMPLE.whiteLabelSiteId);
  await createPerson(runtime, {
    email: "ann.lee@alpine.example.com",
    firstName: "Ann",
    lastName: "Lee",
    role: "whitelabel-admin",
    siteId: site.id,
  });
  const customer = await createPerson(runtime, {
    email: "ben.ortiz@example.com",
    firstName: "Ben",
    lastName: "Ortiz",
    role: "person",
    siteId: site.id,
  });
  assert.equal(customer.personId, EXAMPLE.customerId);
  // A person's KYC token is random and private; the examples need one they can print.
  await service.storage.db
    .updateTable("persons")
    .set({ user_token: EXAMPLE.userToken })
    .where("id", "=", customer.personId)
    .execute();

  const strategy = await ok("WL", "/Strategies/AddStrategy", {
    StrategyName: "Momentum One",
    StartingCapital: 100_000,
    StrategyOwnerPersonId: customer.personId,
    InitialSiteVisibility: true,
  });
  assert.equal(strategy.StrategyId, EXAMPLE.strategyId);
  const portfolio = await ok("WL", "/Strategies/AddStrategy", {
    StrategyName: "Core Portfolio",
    StartingCapital: 250_000,
    StrategyOwnerPersonId: customer.personId,
  });
  assert.equal(portfolio.StrategyId, EXAMPLE.portfolioStrategyId);
  // The owner's subscription prices (CreateSubscriptionCheckout's example buys a month).
  await service.storage.db
    .updateTable("strategies")
    .set({ monthly_cost: "49", annual_cost: "490" })
    .where("id", "=", EXAMPLE.strategyId)
    .execute();
  await put("/Strategies/UpdateStrategy", {
    StrategyId: EXAMPLE.strategyId,
    LongDescription: "Buys US large caps breaking out of a 20-day range.",
  });

  await setQuote(service, EXAMPLE.symbol, 200, 200.05);
  await setQuote(service, "MSFT", 400, 400.1);
  const resting = [];
  for (let i = 0; i < 3; i++) {
    const order = await placed(service, ADMIN_KEY, {
      StrategyId: EXAMPLE.strategyId,
      OrderType: "2",
      Side: "1",
      TIF: "1",
      OrderQuantity: 10,
      Limit: 190,
      ServiceSymbol: { FullSymbol: EXAMPLE.symbol },
    });
    resting.push(order.SignalId);
  }
  assert.deepEqual(resting, [EXAMPLE.replacedSignalId, EXAMPLE.canceledSignalId, EXAMPLE.restingSignalId]);

  // White-label commerce: a marketplace strategy from outside the site, priced, in its catalog, resold to the customer.
  const resold = await ok("WL", "/Strategies/AddStrategy", {
    StrategyName: "Global Macro",
    StartingCapital: 500_000,
    StrategyOwnerPersonId: 1,
    InitialSiteVisibility: true,
  });
  assert.equal(resold.StrategyId, EXAMPLE.resoldStrategyId);
  await setStrategyPrice(runtime, EXAMPLE.resoldStrategyId, 4900, null);
  await fundHouseAccount(runtime, site.id, 100_000);
  const onSite = { WhiteLabelSiteId: site.id };
  await ok("WL", "/Strategies/UpdateSiteCatalog", {
    StrategyIds: [EXAMPLE.resoldStrategyId],
    Action: "Add",
    ...onSite,
  });
  await ok("WL", "/Strategies/WhiteLabelStartSubscription", {
    PersonId: customer.personId,
    StrategyId: EXAMPLE.resoldStrategyId,
    IdempotencyKey: "resale-2026-03-ben-macro",
    ...onSite,
  });

  // Autotrade: the customer's brokerage account at the simulated broker, following the customer's own strategy.
  await openSimulatedBrokerAccount(runtime, {
    personId: customer.personId,
    brokerId: EXAMPLE.brokerId,
    account: EXAMPLE.autotradeAccount,
    cash: decimal("100000"),
    paper: false,
  });
  const started = await service.call("GEN", "POST", "/Autotrade/StartAutotrade", {
    body: {
      Account: EXAMPLE.autotradeAccount,
      PersonId: customer.personId,
      StrategyId: EXAMPLE.strategyId,
      BrokerId: EXAMPLE.brokerId,
      ScalingPercentage: 100,
      EnableStocks: true,
    },
  });
  assert.equal(started.status, 200, started.text);
  // The day's autotrade snapshot of the account (GetAutotradeStats' example reads it).
  await service.app.snapshots.run();
  // The strategy buys: the account's copy (account order 1) fills at the broker; two manual exits rest.
  await placed(service, ADMIN_KEY, {
    StrategyId: EXAMPLE.strategyId,
    OrderType: "1",
    Side: "1",
    TIF: "1",
    OrderQuantity: 100,
    ServiceSymbol: { FullSymbol: EXAMPLE.symbol },
  });
  await settleAutotrade(service);
  for (const [limit, orderId] of [
    [240, EXAMPLE.canceledAccountOrderId],
    [245, EXAMPLE.replacedAccountOrderId],
  ] as const) {
    const exit = await service.call("GEN", "POST", "/Autotrade/NewAutotradeOrder", {
      body: {
        Account: EXAMPLE.autotradeAccount,
        PersonId: customer.personId,
        Order: {
          StrategyId: EXAMPLE.strategyId,
          OrderType: "2",
          Side: "2",
          TIF: "1",
          OrderQuantity: 10,
          Limit: limit,
          ServiceSymbol: { FullSymbol: EXAMPLE.symbol },
        },
      },
    });
    assert.equal(exit.status, 200, exit.text);
    assert.equal(String(exit.json.Results[0].SignalId), orderId);
  }
  await settleAutotrade(service);
  await openSimulatedBrokerAccount(runtime, {
    personId: customer.personId,
    brokerId: 1,
    account: EXAMPLE.paperAccount,
    cash: decimal("25000"),
    paper: true,
  });
  // The customer's account at the simulated broker, which SetBrokerFault's example names.
  await openSimulatedBrokerAccount(runtime, {
    personId: customer.personId,
    brokerId: 1,
    account: EXAMPLE.brokerAccount,
    cash: decimal("100000"),
    paper: false,
  });
}
