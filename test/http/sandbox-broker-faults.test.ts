import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal, formatDecimal } from "../../src/core/decimal.js";
import type { BrokerReport } from "../../src/engine/brokers/port.js";
import { createPerson } from "../../src/services/people.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";
import { assertRefused, MARKET_OPEN, setQuote } from "../helpers/trading.js";

/** POST /Sandbox/SetBrokerFault as a client calls it: each fault, its fields, and every refusal. */

for (const backend of BACKENDS) {
  describe(`SetBrokerFault (${backend})`, () => {
    let service: TestService;
    let population: Population;
    const reports: BrokerReport[] = [];
    const account = "SIM-HTTP-1";
    const setFault = (body: unknown, key?: string) =>
      service.call("WL", "POST", "/Sandbox/SetBrokerFault", { body, ...(key === undefined ? {} : { key }) });

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: MARKET_OPEN } });
      await setQuote(service, "AAPL", 200, 200.1);
      const person = await createPerson(service.app.runtime, {
        email: "fault-customer@example.com",
        firstName: "Fay",
        lastName: "Fault",
        role: "person",
      });
      await openSimulatedBrokerAccount(service.app.runtime, {
        personId: person.personId,
        brokerId: 1,
        account,
        cash: decimal("50000"),
        paper: true,
      });
      service.app.brokers.simulated.onReport((report) => reports.push(report));
    });
    after(() => service.close());

    test("each fault is set on the account and answered with the faults standing after it", async () => {
      const cases: [Record<string, unknown>, string[]][] = [
        [{ Fault: "reject", Count: 2, Reason: "No buying power" }, ["reject"]],
        [{ Fault: "delay", Seconds: 5 }, ["delay", "reject"]],
        [{ Fault: "partialFill", Fraction: 0.5 }, ["delay", "partialFill", "reject"]],
        [{ Fault: "disconnect" }, ["delay", "disconnect", "partialFill", "reject"]],
        [{ Fault: "reconnect" }, ["delay", "partialFill", "reject"]],
        [{ Fault: "marginCall" }, ["delay", "marginCall", "partialFill", "reject"]],
        [
          { Fault: "patternDayTrader", Reason: "PDT" },
          ["delay", "marginCall", "partialFill", "patternDayTrader", "reject"],
        ],
        [{ Fault: "clear" }, []],
        [{ Fault: "externalExecution", Symbol: "AAPL", Side: "buy", Quantity: 3, Price: 199.5 }, []],
        [{ Fault: "delink", Reason: "Token revoked" }, []],
      ];
      for (const [fields, standing] of cases) {
        const r = await setFault({ Account: account, ...fields });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.json.Results, [{ Account: account, Fault: fields.Fault, StandingFaults: standing }]);
      }
      const told = reports.filter((r) => r.account === account).map((r) => r.kind);
      assert.deepEqual(told, ["restricted", "restricted", "externalExecution", "delinked"]);
      const positions = await service.app.brokers.simulated.positions({ brokerId: 1, account });
      assert.deepEqual(
        positions.map((p) => [p.symbol, formatDecimal(p.quantity)]),
        [["AAPL", "3"]],
      );
    });

    test("faults are durable: a restart keeps them", async () => {
      assert.equal((await setFault({ Account: account, Fault: "reject", Count: 4 })).status, 200);
      service = await service.restart();
      const r = await setFault({ Account: account, Fault: "delay", Seconds: 1 });
      assert.deepEqual(r.json.Results[0].StandingFaults, ["delay", "reject"]);
      await setFault({ Account: account, Fault: "clear" });
    });

    test("only a service admin may set faults", async () => {
      for (const who of ["wlAdminA", "geoAdmin", "personA"] as const) {
        const r = await setFault({ Account: account, Fault: "clear" }, population.keys[who]);
        assert.equal(r.status, 403, `${who}: ${r.text}`);
      }
    });

    test("an unknown account, an unknown fault and bad fields are refused, naming the field", async () => {
      assertRefused(await setFault({ Account: "NO-SUCH", Fault: "clear" }), 404, "2013", "Account");
      assertRefused(await setFault({ Account: account, Fault: "explode" }), 400, "1101", "Fault");
      assertRefused(await setFault({ Fault: "clear" }), 400, "1102", "Account");
      assertRefused(await setFault({ Account: account, Fault: "delay" }), 400, "1102", "Seconds");
      assertRefused(await setFault({ Account: account, Fault: "delay", Seconds: 0 }), 400, "1101", "Seconds");
      assertRefused(await setFault({ Account: account, Fault: "partialFill", Fraction: 1 }), 400, "1101", "Fraction");
      assertRefused(await setFault({ Account: account, Fault: "reject", Count: 0 }), 400, "1101", "Count");
      assertRefused(await setFault({ Account: account, Fault: "clear", Seconds: 5 }), 400, "1101", "Seconds");
      assertRefused(
        await setFault({ Account: account, Fault: "externalExecution", Symbol: "AAPL", Side: "buy" }),
        400,
        "1102",
        "Quantity",
      );
      assertRefused(
        await setFault({ Account: account, Fault: "externalExecution", Symbol: "AAPL", Side: "hold", Quantity: 1 }),
        400,
        "1101",
        "Side",
      );
      assertRefused(
        await setFault({
          Account: account,
          Fault: "externalExecution",
          Symbol: "NOT A SYMBOL!",
          Side: "buy",
          Quantity: 1,
        }),
        400,
        "1121",
        "Symbol",
      );
      assertRefused(
        await setFault({ Account: account, Fault: "externalExecution", Symbol: "MSFT", Side: "buy", Quantity: 1 }),
        400,
        "1101",
        "Price",
      );
      assertRefused(
        await setFault({
          Account: account,
          Fault: "externalExecution",
          Symbol: "AAPL",
          Side: "buy",
          Quantity: 0.000000001,
        }),
        400,
        "1101",
        "Quantity",
      );
      // Nothing refused changed the account.
      const r = await setFault({ Account: account, Fault: "reconnect" });
      assert.deepEqual(r.json.Results[0].StandingFaults, []);
    });
  });

  describe(`SetBrokerFault outside the sandbox (${backend})`, () => {
    let service: TestService;
    before(async () => {
      service = await startTestService(backend, { sandbox: false });
    });
    after(() => service.close());

    test("is not served: 404 UnknownOperation", async () => {
      const r = await service.call("WL", "POST", "/Sandbox/SetBrokerFault", { body: { Account: "X", Fault: "clear" } });
      assertRefused(r, 404, "1004");
    });
  });
}
