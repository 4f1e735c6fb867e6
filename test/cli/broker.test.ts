import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal, formatDecimal } from "../../src/core/decimal.js";
import { createPerson } from "../../src/services/people.js";
import { assertPositiveInt, assertSucceeded, childEnv, onlyJson, runCli } from "../helpers/cli.js";
import { BACKENDS, startTestService, type TestService } from "../helpers/service.js";
import { MARKET_OPEN, setQuote } from "../helpers/trading.js";

/** `broker account create`: an operator opens an account at the service and the simulated broker in one go. */

for (const backend of BACKENDS) {
  describe(`operator CLI: brokerage accounts (${backend})`, () => {
    let service: TestService;
    let env: NodeJS.ProcessEnv;
    let personId = 0;
    const cli = (...args: string[]) => runCli(env, [...args, "--json"]);
    const create = (...args: string[]) => cli("broker", "account", "create", ...args);
    const failsWith = async (args: string[], code: number, pattern: RegExp, field?: string) => {
      const run = await create(...args);
      assert.equal(run.code, code, run.stdout);
      const refusal = onlyJson(run).Error;
      assert.match(refusal.Message, pattern);
      assert.equal(refusal.Field, field);
    };

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      env = childEnv(service.env);
      personId = (
        await createPerson(service.app.runtime, {
          email: "cli-broker@example.com",
          firstName: "Cleo",
          lastName: "Broker",
          role: "person",
        })
      ).personId;
    });
    after(() => service?.close());

    test("opens the account at the service and at the simulated broker, which the running service then trades", async () => {
      const run = await create(
        "--person",
        String(personId),
        "--broker",
        "1",
        "--account",
        "CLI-1",
        "--cash",
        "25000.50",
        "--paper",
      );
      assertSucceeded(run);
      const answer = onlyJson(run);
      assertPositiveInt(answer.AccountId, "AccountId");
      assert.deepEqual(answer, {
        AccountId: answer.AccountId,
        PersonId: personId,
        BrokerId: 1,
        Account: "CLI-1",
        Cash: "25000.5",
        IsPaper: true,
      });
      const recorded = await service.storage.db
        .selectFrom("broker_accounts")
        .innerJoin("accounts", "accounts.id", "broker_accounts.account_id")
        .select(["person_id", "broker_id", "account_number", "is_paper", "is_linked", "accounts.kind", "accounts.cash"])
        .where("account_id", "=", answer.AccountId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(recorded, {
        person_id: personId,
        broker_id: 1,
        account_number: "CLI-1",
        is_paper: 1,
        is_linked: 1,
        kind: "broker",
        cash: "25000.5",
      });
      // The service, running beside the CLI, finds the account at its broker.
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: MARKET_OPEN } });
      await setQuote(service, "AAPL", 100, 100.5);
      const broker = service.app.brokers.simulated;
      const value = await broker.accountValue({ brokerId: 1, account: "CLI-1" });
      assert.equal(formatDecimal(value.cash), "25000.5");
      const placed = await broker.place({
        brokerId: 1,
        account: "CLI-1",
        idempotencyKey: "cli-first-order",
        symbol: "AAPL",
        symbolType: "stock",
        side: "buy",
        orderType: "market",
        tif: "day",
        quantity: decimal("10"),
        limit: null,
        stop: null,
        asCfd: false,
      });
      assert.equal(placed.ok, true);
      await broker.drain();
      assert.equal(formatDecimal((await broker.accountValue({ brokerId: 1, account: "CLI-1" })).cash), "23995.5");

      const live = onlyJson(
        await create("--person", String(personId), "--broker", "1", "--account", "CLI-2", "--cash", "0"),
      );
      assert.equal(live.IsPaper, false);
      assert.equal(live.Cash, "0");
    });

    test("refusals answer one JSON error naming the field, and record nothing", async () => {
      const base = ["--person", String(personId), "--broker", "1", "--account", "CLI-REFUSED"];
      await failsWith(
        ["--person", String(personId), "--broker", "1", "--account", "CLI-1", "--cash", "1"],
        1,
        /already has an account CLI-1/,
        "Account",
      );
      await failsWith(
        ["--person", "999999", "--broker", "1", "--account", "X", "--cash", "1"],
        1,
        /No person 999999/,
        "Person",
      );
      await failsWith(
        ["--person", String(personId), "--broker", "77", "--account", "X", "--cash", "1"],
        1,
        /No broker 77/,
        "Broker",
      );
      await failsWith([...base, "--cash=-1"], 2, /--cash is an amount/);
      await failsWith([...base, "--cash", "1.001"], 2, /--cash is an amount/);
      await failsWith([...base, "--cash", "lots"], 2, /--cash is an amount/);
      await failsWith(["--person", String(personId), "--broker", "1", "--cash", "5"], 2, /--account is required/);
      await failsWith([...base.slice(2), "--cash", "5"], 2, /--person is required/);
      await failsWith([...base, "--cash", "5", "--paper=yes"], 2, /paper/);
      await failsWith([...base, "--cash", "5", "--margin", "2"], 2, /margin/);
      const stored = await service.storage.db
        .selectFrom("sim_broker_accounts")
        .select("account")
        .where("account", "=", "CLI-REFUSED")
        .execute();
      assert.deepEqual(stored, []);
      const recorded = await service.storage.db
        .selectFrom("broker_accounts")
        .select("account_id")
        .where("account_number", "=", "X")
        .execute();
      assert.deepEqual(recorded, []);
    });
  });
}
