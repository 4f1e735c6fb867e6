import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { decimal } from "../../src/core/decimal.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { follow, settleAutotrade, startAutotrade } from "../helpers/autotrade.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { cancelOrder, MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * The copier against a simple reference copier (fast-check commands): random
 * strategy buys and sells at market, resting orders canceled, and broker
 * faults (rejects, partial fills) on the followers' accounts. The reference
 * says what each follower holds: a buy adds its whole scaled share, a sell
 * takes the follower's share of the holding in proportion, and the strategy
 * going flat takes every follower flat. A follower a fault made miss or half
 * fill a copy is only held to the reference again once the strategy has gone
 * flat; at the end the strategy closes, and every follower ends flat.
 */

/** Each follower: its account's value and the scaling it copies at (its factor against the 100,000 model). */
const FOLLOWERS = [
  { cash: "50000", scaling: 100, factor: 0.5 },
  { cash: "100000", scaling: 25, factor: 0.25 },
  { cash: "200000", scaling: 50, factor: 1 },
] as const;

interface Model {
  strategyHeld: number;
  /** What each follower holds, by the reference. */
  readonly held: number[];
  /** Followers a fault moved off the reference until the strategy next goes flat. */
  readonly diverged: boolean[];
  /** Faults standing on each follower's account. */
  readonly faulted: ("partialFill" | "reject" | null)[];
}

interface Real {
  readonly service: TestService;
  readonly key: string;
  readonly strategyId: number;
  readonly accounts: readonly string[];
}

type Command = fc.AsyncCommand<Model, Real>;

let runs = 0;

async function heldBy(real: Real, account: string): Promise<number> {
  const row = await real.service.storage.db
    .selectFrom("autotrade_positions as p")
    .innerJoin("broker_accounts as b", "b.account_id", "p.account_id")
    .select("p.quantity")
    .where("b.account_number", "=", account)
    .where("p.symbol", "=", "AAPL")
    .executeTakeFirst();
  return Number(row?.quantity ?? "0");
}

/** Every follower the reference still speaks for holds what it says. */
async function assertFollowersAgree(model: Model, real: Real): Promise<void> {
  for (const [i, account] of real.accounts.entries()) {
    if (model.diverged[i]) continue;
    assert.equal(await heldBy(real, account), model.held[i], `follower ${i} (${account})`);
  }
}

async function trade(real: Real, side: "buy" | "sell", quantity: number, extra: Record<string, unknown> = {}) {
  const result = await placed(real.service, real.key, stockOrder(real.strategyId, "AAPL", side, quantity, extra));
  await settleAutotrade(real.service);
  return result;
}

class Buy implements Command {
  constructor(readonly quantity: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    await trade(real, "buy", this.quantity);
    model.strategyHeld += this.quantity;
    for (const [i, follower] of FOLLOWERS.entries()) {
      const share = Math.floor(this.quantity * follower.factor);
      if (model.faulted[i] !== null && share > 0) model.diverged[i] = true;
      model.held[i] = (model.held[i] as number) + share;
    }
    await assertFollowersAgree(model, real);
  }
  toString = () => `Buy(${this.quantity})`;
}

class Sell implements Command {
  /** `part` of the strategy's holding, in 1..held (all of it at most). */
  constructor(readonly part: number) {}
  check = (model: Readonly<Model>) => model.strategyHeld > 0;
  async run(model: Model, real: Real) {
    const quantity = Math.min(this.part, model.strategyHeld);
    const before = model.strategyHeld;
    await trade(real, "sell", quantity);
    model.strategyHeld -= quantity;
    for (const [i] of FOLLOWERS.entries()) {
      const held = model.held[i] as number;
      const share = quantity === before ? held : Math.floor((held * quantity) / before);
      if (model.faulted[i] !== null && share > 0) model.diverged[i] = true;
      model.held[i] = held - share;
    }
    if (model.strategyHeld === 0) {
      // Flat: a follower the reference speaks for, with no fault standing, is taken flat at once.
      for (const [i] of FOLLOWERS.entries()) if (!model.diverged[i] && model.faulted[i] === null) model.held[i] = 0;
    }
    await assertFollowersAgree(model, real);
  }
  toString = () => `Sell(${this.part})`;
}

/**
 * The desk's pass (the sandbox's clock moved) and the quote again: what
 * rests at the broker is tried, refused closes are made again. With the
 * strategy flat, every follower without a standing fault is flat after it.
 */
class Pass implements Command {
  check = () => true;
  async run(model: Model, real: Real) {
    await pass(real);
    if (model.strategyHeld === 0) {
      for (const [i] of FOLLOWERS.entries()) {
        if (model.faulted[i] !== null) continue;
        model.held[i] = 0;
        model.diverged[i] = false;
      }
    }
    await assertFollowersAgree(model, real);
  }
  toString = () => "Pass";
}

async function pass(real: Real): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const moved = await real.service.call("GEN", "POST", "/Sandbox/AdvanceClock", {
      key: ADMIN_KEY,
      body: { Seconds: 1 },
    });
    assert.equal(moved.status, 200, moved.text);
    await setQuote(real.service, "AAPL", 200, 200.1);
    await settleAutotrade(real.service);
  }
}

class RestingThenCanceled implements Command {
  constructor(readonly quantity: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const { SignalId } = await trade(real, "buy", this.quantity, { OrderType: "2", Limit: 150 });
    const canceled = await cancelOrder(real.service, real.key, real.strategyId, SignalId);
    assert.equal(canceled.status, 200, canceled.text);
    await settleAutotrade(real.service);
    const open = await real.service.storage.db
      .selectFrom("account_orders")
      .select("status")
      .where("source_order_id", "=", SignalId)
      .where("status", "not in", ["Canceled", "Rejected"])
      .execute();
    assert.deepEqual(open, [], "the copies of a canceled order are canceled");
    await assertFollowersAgree(model, real);
  }
  toString = () => `RestingThenCanceled(${this.quantity})`;
}

class Fault implements Command {
  constructor(
    readonly follower: number,
    readonly fault: "partialFill" | "reject" | "clear",
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const body =
      this.fault === "partialFill"
        ? { Fault: "partialFill", Fraction: 0.5 }
        : this.fault === "reject"
          ? { Fault: "reject", Count: 10000, Reason: "Refused by the model" }
          : { Fault: "clear" };
    const r = await real.service.call("GEN", "POST", "/Sandbox/SetBrokerFault", {
      key: ADMIN_KEY,
      body: { Account: real.accounts[this.follower], ...body },
    });
    assert.equal(r.status, 200, r.text);
    model.faulted[this.follower] =
      this.fault === "clear"
        ? null
        : this.fault === "reject" && model.faulted[this.follower] === "partialFill"
          ? "partialFill"
          : this.fault;
  }
  toString = () => `Fault(${this.follower}, ${this.fault})`;
}

const commands: fc.Arbitrary<Command>[] = [
  fc.integer({ min: 1, max: 20 }).map((q) => new Buy(q)),
  fc.integer({ min: 1, max: 25 }).map((q) => new Sell(q)),
  fc.integer({ min: 1, max: 10 }).map((q) => new RestingThenCanceled(q)),
  fc.constant(null).map(() => new Pass()),
  fc
    .tuple(
      fc.integer({ min: 0, max: FOLLOWERS.length - 1 }),
      fc.constantFrom("partialFill", "reject", "clear" as const),
    )
    .map(([i, fault]) => new Fault(i, fault)),
];

for (const backend of BACKENDS) {
  describe(`the copier against a reference copier (${backend})`, () => {
    let service: TestService;
    let p: Population;

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      p = await populate(service);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { key: ADMIN_KEY, body: { Now: MARKET_OPEN } });
      await setQuote(service, "AAPL", 200, 200.1);
    });
    after(() => service.close());

    test("strategy orders, partial fills, cancels and broker faults: every follower holds its scaled share, and ends flat with the strategy", async () => {
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 12 }), async (cmds) => {
          runs += 1;
          const strategyId = await newStrategy(service, p.keys.personA, 100_000, `Reference ${runs}`);
          const accounts: string[] = [];
          for (const [i, follower] of FOLLOWERS.entries()) {
            const account = `REF-${backend}-${runs}-${i}`;
            await openSimulatedBrokerAccount(service.app.runtime, {
              personId: p.people.personB,
              brokerId: 1,
              account,
              cash: decimal(follower.cash),
              paper: false,
            });
            accounts.push(account);
          }
          await follow(service, p.people.personB, strategyId);
          for (const [i, follower] of FOLLOWERS.entries()) {
            const started = await startAutotrade(service, ADMIN_KEY, {
              Account: accounts[i] as string,
              PersonId: p.people.personB,
              StrategyId: strategyId,
              ScalingPercentage: follower.scaling,
              EnableStocks: true,
            });
            assert.equal(started.status, 200, started.text);
            // The copier alone is modelled: AutoSync would bring the followers to the scaled position at a pass.
            const noSync = await service.call("GEN", "PUT", "/Autotrade/SetAutotradeSettings", {
              key: ADMIN_KEY,
              body: { PersonId: p.people.personB, Account: accounts[i], IsAutoSyncEnabled: false },
            });
            assert.equal(noSync.status, 200, noSync.text);
          }
          await settleAutotrade(service);
          const model: Model = {
            strategyHeld: 0,
            held: FOLLOWERS.map(() => 0),
            diverged: FOLLOWERS.map(() => false),
            faulted: FOLLOWERS.map(() => null),
          };
          const real: Real = { service, key: p.keys.personA, strategyId, accounts };
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          // The end: faults cleared, the strategy closes, every follower ends flat.
          for (const [i] of FOLLOWERS.entries()) await new Fault(i, "clear").run(model, real);
          if (model.strategyHeld > 0) await new Sell(model.strategyHeld).run(model, real);
          await new Pass().run(model, real);
          for (const account of accounts) assert.equal(await heldBy(real, account), 0, `${account} ends flat`);
        }),
        { numRuns: backend === "sqlite" ? 12 : 6 },
      );
    });
  });
}
