import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { legacyCall } from "../helpers/legacy.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newOrder, newStrategy, positions, setQuote, stockOrder } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`legacy desired-positions mode (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
      await setClock(service, MARKET_OPEN);
    });
    after(() => service.close());

    const v3 = (command: string, body: Record<string, unknown>) => legacyCall(service, command, body, key);
    const held = async (systemid: number) =>
      Object.fromEntries(
        (await positions(service, key, systemid)).map((p) => [p.ServiceSymbol.FullSymbol, p.Quantity]),
      );

    test("a portfolio engages the mode, flat/flat flattens, stop/stop and off/off release it with holdings intact", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "AAPL", 200, 200.05);
      await setQuote(service, "MSFT", 400, 400.1);
      const engaged = await v3("setDesiredPositions", {
        systemid,
        positions: [
          { symbol: "AAPL", typeofsymbol: "stock", quant: 50 },
          { symbol: "MSFT", typeofsymbol: "stock", quant: -20 },
        ],
      });
      assert.equal(engaged.ok, 1, JSON.stringify(engaged));
      assert.deepEqual(await held(systemid), { AAPL: 50, MSFT: -20 });
      const desired = await v3("getDesiredPositions", { systemid });
      assert.deepEqual(
        desired.response.map((p: { symbol: string; quant: string }) => [p.symbol, p.quant]),
        [
          ["AAPL", "50"],
          ["MSFT", "-20"],
        ],
      );
      // Signal entry is off while the mode holds the portfolio, through v3 and v4 alike.
      const signal = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 1, symbol: "AAPL", typeofsymbol: "stock" },
      });
      assert.equal(signal.ok, 0);
      const order = await newOrder(service, key, stockOrder(systemid, "AAPL", "buy", 1));
      assert.equal(order.status, 409);
      const flat = await v3("setDesiredPositions", { systemid, positions: [{ symbol: "flat", typeofsymbol: "flat" }] });
      assert.equal(flat.ok, 1, JSON.stringify(flat));
      assert.deepEqual(await held(systemid), {});
      await v3("setDesiredPositions", { systemid, positions: [{ symbol: "AAPL", typeofsymbol: "stock", quant: 10 }] });
      const stopped = await v3("setDesiredPositions", {
        systemid,
        positions: [{ symbol: "stop", typeofsymbol: "stop" }],
      });
      assert.equal(stopped.ok, 1);
      assert.deepEqual(await held(systemid), { AAPL: 10 }, "holdings stay");
      assert.deepEqual((await v3("getDesiredPositions", { systemid })).response, []);
      const again = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 1, symbol: "AAPL", typeofsymbol: "stock" },
      });
      assert.equal(again.ok, 1, "signal entry works again");
      await v3("setDesiredPositions", { systemid, positions: [{ symbol: "AAPL", typeofsymbol: "stock", quant: 5 }] });
      const off = await v3("setDesiredPositions", { systemid, positions: [{ symbol: "off", typeofsymbol: "off" }] });
      assert.equal(off.ok, 1);
      assert.equal((await newOrder(service, key, stockOrder(systemid, "AAPL", "buy", 1))).status, 200);
    });
  });
}
