import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { legacyCall, sitePlatform } from "../helpers/legacy.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, positions, setQuote, signal, stockOrder } from "../helpers/trading.js";

for (const backend of BACKENDS) {
  describe(`legacy v3 signals on the v4 core (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    let platformId: number;
    let platformKey: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
      ({ platformId, platformKey } = await sitePlatform(service, population));
      await setClock(service, MARKET_OPEN);
    });
    after(() => service.close());

    const v3 = (command: string, body: Record<string, unknown>, apikey = key, path?: string) =>
      legacyCall(service, command, body, apikey, path);

    test("submitSignal places an order v4 sees under the same id; market orders fill at once", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "AAPL", 200, 200.05);
      const r = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 100, symbol: "AAPL", typeofsymbol: "stock", market: 1, duration: "DAY" },
      });
      assert.equal(r.ok, 1, JSON.stringify(r));
      assert.equal(r.signal.action, "BTO");
      assert.equal(r.signal.quant, "100");
      const order = await signal(service, key, Number(r.signalid));
      assert.equal(order.OrderStatus, "2");
      assert.equal(order.StrategyId, systemid);
      assert.equal((await positions(service, key, systemid))[0]?.Quantity, 100);
      const margin = await v3("requestMarginEquity", { systemid });
      assert.equal(margin.ok, 1);
      // 100 × 200.05 paid and a $1 commission; marked at the middle.
      assert.deepEqual([margin.cash, margin.modelAccountValue], ["79994", "99996.5"]);
      assert.equal(typeof margin.buyPower, "string");
    });

    test("brackets, caller-chosen ids, conditional and replaced signals; ids unique per system for all time", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "MSFT", 400, 400.1);
      const entry = await v3("submitSignal", {
        systemid,
        signal: {
          action: "BTO",
          quant: 10,
          symbol: "MSFT",
          typeofsymbol: "stock",
          limit: 390,
          duration: "GTC",
          profittarget: 420,
          stoploss: 380,
          signalid: "entry-1",
          ocaid: "exits-1",
        },
      });
      assert.equal(entry.ok, 1, JSON.stringify(entry));
      assert.equal(entry.signal.localsignalid, "entry-1");
      assert.ok(entry.signal.profittargetsignalid && entry.signal.stoplosssignalid);
      assert.equal(entry.signal.ocaid, "exits-1");
      const reused = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 1, symbol: "MSFT", typeofsymbol: "stock", limit: 300, signalid: "entry-1" },
      });
      assert.equal(reused.ok, 0);
      assert.equal(reused.error.title, "Id already used");
      const ocaAsSignal = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 1, symbol: "MSFT", typeofsymbol: "stock", limit: 300, signalid: "exits-1" },
      });
      assert.equal(ocaAsSignal.ok, 0, "an ocaid may not be used as a signalid either");
      // Conditional on the entry by its own id; an inline parent in one request.
      const conditional = await v3("submitSignal", {
        systemid,
        signal: {
          action: "STC",
          quant: 10,
          symbol: "MSFT",
          typeofsymbol: "stock",
          limit: 430,
          conditionalupon: "entry-1",
        },
      });
      assert.equal(conditional.ok, 1, JSON.stringify(conditional));
      assert.equal((await signal(service, key, Number(conditional.signalid))).OrderStatus, "A");
      const inline = await v3("submitSignal", {
        systemid,
        signal: {
          action: "STC",
          quant: 5,
          symbol: "MSFT",
          typeofsymbol: "stock",
          limit: 440,
          conditionalUponSignal: { action: "BTO", quant: 5, symbol: "MSFT", typeofsymbol: "stock", limit: 350 },
        },
      });
      assert.equal(inline.ok, 1, JSON.stringify(inline));
      const parentId = Number(inline.signal.conditionalUponSignal.signalid);
      assert.equal((await signal(service, key, parentId)).OrderStatus, "0");
      assert.equal((await signal(service, key, Number(inline.signalid))).ParentSignalId, parentId);
      // Replacing the entry's limit by its own id.
      const replaced = await v3("submitSignal", {
        systemid,
        signal: {
          action: "BTO",
          quant: 10,
          symbol: "MSFT",
          typeofsymbol: "stock",
          limit: 395,
          duration: "GTC",
          xreplace: "entry-1",
        },
      });
      assert.equal(replaced.ok, 1, JSON.stringify(replaced));
      assert.equal((await signal(service, key, Number(entry.signalid))).OrderStatus, "5");
      assert.equal(
        (await signal(service, key, Number(replaced.signalid))).CancelReplaceSignalId,
        Number(entry.signalid),
      );
    });

    test("cancelSignal cancels a working signal, and refuses a traded one with its echo", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "IBM", 250, 250.1);
      const resting = await placed(service, key, stockOrder(systemid, "IBM", "buy", 5, { OrderType: "2", Limit: 240 }));
      const working = await v3("retrieveSignalsWorking", { systemid });
      assert.deepEqual(
        working.response.map((s: { signal_id: string }) => s.signal_id),
        [String(resting.SignalId)],
        "an order sent through v4 is a working signal in v3",
      );
      assert.equal(working.response[0].isLimitOrder, "240");
      const canceled = await v3("cancelSignal", { systemid, signalid: resting.SignalId });
      assert.equal(canceled.ok, 1);
      assert.equal(canceled.title, "Signal canceled");
      assert.equal((await signal(service, key, resting.SignalId)).OrderStatus, "4");
      const traded = await placed(service, key, stockOrder(systemid, "IBM", "buy", 5));
      const refused = await v3("cancelSignal", { systemid, signalid: String(traded.SignalId) });
      assert.equal(refused.ok, 0);
      assert.equal(refused.error.title, "Signal was traded");
      assert.equal(refused.signal.signal_id, String(traded.SignalId));
      const all = await v3("retrieveSignalsAll", { systemid });
      assert.deepEqual(
        all.response.map((s: { status: string }) => s.status),
        ["canceled", "traded"],
      );
      assert.equal(all.response[1].traded_price, "250.1");
      assert.notEqual(all.response[1].trade_id_opening, "");
      const onlyTraded = await v3("retrieveSignalsAll", {
        systemid,
        filter_type: "time_traded",
        filter_date_time_start: "2026-03-10 09:30:00",
        filter_date_time_end: "2026-03-10 16:00:00",
      });
      assert.deepEqual(
        onlyTraded.response.map((s: { signal_id: string }) => s.signal_id),
        [String(traded.SignalId)],
      );
    });

    test("signals by service or own id; retrieveSignalsAll by how and when they ended; each refusal's title", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "PEP", 150, 150.05);
      const resting = (limit: number, extra: Record<string, unknown> = {}) =>
        v3("submitSignal", {
          systemid,
          signal: { action: "BTO", quant: 1, symbol: "PEP", typeofsymbol: "stock", limit, duration: "GTC", ...extra },
        });
      const kept = await resting(140, { signalid: "keep-1" });
      const dropped = await resting(141, { signalid: "drop-1" });
      const day = await resting(142, { duration: "DAY" });
      const canceled = await v3("cancelSignal", { systemid, signalid: "drop-1" });
      assert.deepEqual([canceled.ok, canceled.signal.signal_id], [1, dropped.signalid], "by its own id");
      const again = await v3("cancelSignal", { systemid, signalid: Number(dropped.signalid) });
      assert.deepEqual([again.ok, again.error.title], [0, "Signal could not be canceled"]);
      const unknown = await v3("cancelSignal", { systemid, signalid: "no-such-signal" });
      assert.deepEqual([unknown.ok, unknown.error.title], [0, "Unknown signal"]);
      const zero = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 0, symbol: "PEP", typeofsymbol: "stock" },
      });
      assert.deepEqual(
        [zero.ok, zero.error.title],
        [0, "Invalid signal"],
        "a value the order rules refuse is an invalid signal",
      );

      await setClock(service, "2026-03-10T21:00:00Z");
      const ended = async (filter: string) =>
        (
          await v3("retrieveSignalsAll", {
            systemid,
            filter_type: filter,
            filter_date_time_start: "2026-03-10 00:00:00",
          })
        ).response.map((s: { signal_id: string; status: string }) => [s.signal_id, s.status]);
      assert.deepEqual(await ended("time_expired"), [[day.signalid, "expired"]], "the DAY signal expired at the close");
      assert.deepEqual(await ended("time_canceled"), [[dropped.signalid, "canceled"]]);
      assert.deepEqual(await ended("time_traded"), []);
      assert.deepEqual(await ended("time_posted"), [
        [kept.signalid, "working"],
        [dropped.signalid, "canceled"],
        [day.signalid, "expired"],
      ]);
      const late = await v3("retrieveSignalsAll", {
        systemid,
        filter_type: "time_posted",
        filter_date_time_end: "2026-03-10 09:59:59",
      });
      assert.deepEqual(late.response, [], "posted after the end of the window");
      for (const filter of ["constructor", "time_whenever"]) {
        const bad = await v3("retrieveSignalsAll", { systemid, filter_type: filter });
        assert.deepEqual([bad.ok, bad.error.title], [0, "Invalid request"], filter);
      }
      await setClock(service, MARKET_OPEN);
    });

    test("parkUntil fields hold a signal until their time; GET and no Content-Type work as POST does", async () => {
      const systemid = await newStrategy(service, key);
      await setQuote(service, "KO", 60, 60.02);
      const parked = await v3("submitSignal", {
        systemid,
        signal: {
          action: "BTO",
          quant: 3,
          symbol: "KO",
          typeofsymbol: "stock",
          duration: "GTC",
          parkUntilYYYYMMDDHHMM: "202603101100",
        },
      });
      assert.equal(parked.ok, 1, JSON.stringify(parked));
      // 11:00 New York is 15:00 UTC in March, after the clocks went forward.
      assert.equal(parked.signal.parkUntilSecs, String(Date.parse("2026-03-10T15:00:00Z") / 1000));
      assert.equal((await signal(service, key, Number(parked.signalid))).OrderStatus, "A");
      const bySeconds = await v3("submitSignal", {
        systemid,
        signal: {
          action: "BTO",
          quant: 2,
          symbol: "KO",
          typeofsymbol: "stock",
          duration: "GTC",
          parkUntilSecs: Date.parse("2026-03-10T15:30:00Z") / 1000,
        },
      });
      assert.equal((await signal(service, key, Number(bySeconds.signalid))).OrderStatus, "A");
      await setClock(service, "2026-03-10T15:00:00Z");
      assert.equal((await signal(service, key, Number(parked.signalid))).OrderStatus, "2", "released and filled");
      assert.equal((await signal(service, key, Number(bySeconds.signalid))).OrderStatus, "A");
      await setClock(service, MARKET_OPEN);
      const viaGet = await service.call("LEGACY", "GET", "/world/apiv3/retrieveSignalsWorking", {
        key: null,
        rawBody: JSON.stringify({ apikey: key, systemid }),
      });
      assert.equal(viaGet.json.ok, 1, viaGet.text);
      assert.equal(viaGet.json.response.length, 1);
    });

    test("a key reaches only its systems; a platform key reaches its site's people's systems", async () => {
      const systemid = await newStrategy(service, key);
      const other = await v3("retrieveSignalsWorking", { systemid }, population.keys.personB);
      assert.equal(other.ok, 0);
      assert.equal(other.error.title, "Unable to access this systemid");
      const viaPlatform = await v3(
        "retrieveSignalsWorking",
        { systemid },
        platformKey,
        `/platform/apiv3/${platformId}/retrieveSignalsWorking`,
      );
      assert.equal(viaPlatform.ok, 1, JSON.stringify(viaPlatform));
      const ofSiteB = await newStrategy(service, population.keys.personB);
      const outside = await v3(
        "retrieveSignalsWorking",
        { systemid: ofSiteB },
        platformKey,
        `/platform/apiv3/${platformId}/retrieveSignalsWorking`,
      );
      assert.equal(outside.ok, 0);
      const bad = await v3("submitSignal", {
        systemid,
        signal: { action: "BUY", quant: 1, symbol: "AAPL", typeofsymbol: "stock" },
      });
      assert.deepEqual([bad.ok, bad.error.title], [0, "Invalid signal"]);
    });
  });
}
