import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { legacyCall } from "../helpers/legacy.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, setQuote, signal } from "../helpers/trading.js";

/**
 * The legacy system and signal commands at and past their limits (API.md
 * Limits; docs/decisions.md "Systems", "Signals"): each refused value answers
 * ok 0 with its title and a message naming the field as the client sent it;
 * a refused request changes nothing it listed; the limits themselves are
 * accepted; "" is "not given", as legacy clients send it.
 */

/** 86400 × 365 × 20: the spec's limit of creditSystemTimeInSeconds. */
const TWENTY_YEARS = 630_720_000;
const NOW_SECONDS = Date.parse(MARKET_OPEN) / 1000;

type Answer = Awaited<ReturnType<typeof legacyCall>>;

/** A refused command: ok 0, this title, and a message that starts with the field at fault. */
function assertFailed(r: Answer, title: string, message: RegExp, label = ""): void {
  assert.equal(r.ok, 0, `${label} ${JSON.stringify(r)}`);
  assert.equal(r.error?.title, title, `${label} ${JSON.stringify(r)}`);
  assert.match(r.error.message, message, label);
}

for (const backend of BACKENDS) {
  describe(`legacy v3 systems and signals: refusals and limits (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
      // The sandbox clock stands still, so credit times are exact.
      await setClock(service, MARKET_OPEN);
    });
    after(() => service.close());

    const v3 = (command: string, body: Record<string, unknown>, apikey = key) =>
      legacyCall(service, command, body, apikey);

    const created = async (body: Record<string, unknown>) => {
      const r = await v3("createNewSystem", body);
      assert.equal(r.ok, 1, JSON.stringify(r));
      return Number(r.success.NewSystemID);
    };

    /** What a client sees of a system, and the free signal credits no command shows (stored). */
    const state = async (systemid: number) => {
      const details = await v3("getSystemDetails", { systemid });
      assert.equal(details.ok, 1, JSON.stringify(details));
      const { marginEquityData, statistics, ...system } = details.response;
      const row = await service.storage.db
        .selectFrom("strategies")
        .select(["free_signal_credits", "pending_short_description", "pending_long_description"])
        .where("id", "=", systemid)
        .executeTakeFirstOrThrow();
      return { system, cash: marginEquityData.cash, stored: { ...row, free: String(row.free_signal_credits) } };
    };

    const allSystems = async () =>
      (await v3("listAllSystems", {})).response.map((s: { system_id: string }) => s.system_id);

    test("createNewSystem refuses a capital, a credit time or a description past the limits, naming the field; no system is made", async () => {
      const before = await allSystems();
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ["capital under", { startingcapital: 999 }, /^startingcapital must be 1000 to 10000000$/],
        ["capital over", { startingcapital: "10000000.01" }, /^startingcapital must be 1000 to 10000000$/],
        [
          "negative credit time",
          { creditSystemTimeInSeconds: -1 },
          /^creditSystemTimeInSeconds must be a whole number from 0 to 630720000$/,
        ],
        [
          "credit time past 20 years",
          { creditSystemTimeInSeconds: TWENTY_YEARS + 1 },
          /^creditSystemTimeInSeconds must be a whole number from 0 to 630720000$/,
        ],
        // The reader refuses it before the rules see it (the rules' own check of 8000 cannot be reached).
        [
          "description past 8000",
          { longDescription: "x".repeat(8001) },
          /^longDescription must be text of at most 8000/,
        ],
      ];
      for (const [label, fields, message] of cases) {
        const r = await v3("createNewSystem", { name: "Past Limits", startingcapital: 20_000, ...fields });
        assertFailed(r, "Invalid value", message, label);
      }
      assert.deepEqual(await allSystems(), before, "nothing made");
    });

    test("createNewSystem at the limits: 8000 characters of description, 20 years of credit time, 10000000 of capital", async () => {
      const systemid = await created({
        name: "At The Limits",
        startingcapital: "10000000",
        longDescription: "d".repeat(8000),
        creditSystemTimeInSeconds: String(TWENTY_YEARS),
      });
      const { system, stored } = await state(systemid);
      assert.equal(system.equitycurve_startingcapital, "10000000");
      assert.equal(system.creditSystemTimeUntil_epochSecs, String(NOW_SECONDS + TWENTY_YEARS));
      assert.equal(stored.pending_long_description?.length, 8000, "the description waits for review");
      // No credit time given (or "" for it): none.
      const plain = await created({ name: "No Credit", startingcapital: 1000, creditSystemTimeInSeconds: "" });
      assert.equal((await state(plain)).system.creditSystemTimeUntil_epochSecs, "");
      const zero = await created({ name: "Zero Credit", startingcapital: 1000, creditSystemTimeInSeconds: 0 });
      assert.equal((await state(zero)).system.creditSystemTimeUntil_epochSecs, String(NOW_SECONDS));
    });

    test("changeSystemAttribute refuses each value out of range, naming it; the valid changes sent with it are not applied", async () => {
      const systemid = await created({ name: "Before Change", startingcapital: 20_000 });
      const set = await v3("changeSystemAttribute", {
        systemid,
        monthlyfee: 50,
        trialdays: 10,
        creditSystemTimeInSeconds: 3600,
        freeSignalEntryCredits: 5,
        minimum_portfolio_size_required: 5000,
      });
      assert.equal(set.ok, 1, JSON.stringify(set));
      const before = await state(systemid);
      assert.equal(before.stored.free, "5");
      /** Valid changes of every other kind, sent with each refused value. */
      const valid = {
        name: "After Change",
        shortDescription: "Short and valid",
        longDescription: "Long and valid",
        monthlyfee: 75,
        test_system: 1,
        isAlive: 0,
      };
      const cases: [string, Record<string, unknown>, RegExp][] = [
        [
          "capital under",
          { equitycurve_startingcapital: 999 },
          /^equitycurve_startingcapital must be 1000 to 10000000$/,
        ],
        [
          "minimum under",
          { minimum_portfolio_size_required: 999 },
          /^minimum_portfolio_size_required must be 1000 to 10000000$/,
        ],
        ["minimum over", { minimum_portfolio_size_required: "10000001" }, /^minimum_portfolio_size_required must be/],
        ["trial days over", { trialdays: 366 }, /^trialdays must be a whole number from 0 to 365$/],
        ["trial days negative", { trialdays: -1 }, /^trialdays must be a whole number from 0 to 365$/],
        [
          "credit time past 20 years",
          { creditSystemTimeInSeconds: TWENTY_YEARS + 1 },
          /^creditSystemTimeInSeconds must be a whole number from 0 to 630720000$/,
        ],
        ["credit time negative", { creditSystemTimeInSeconds: "-60" }, /^creditSystemTimeInSeconds must be/],
        [
          "free credits over",
          { freeSignalEntryCredits: "10000000000" },
          /^freeSignalEntryCredits must be a whole number from 0 to 9999999999$/,
        ],
        ["free credits negative", { freeSignalEntryCredits: -1 }, /^freeSignalEntryCredits must be/],
        ["monthly fee over", { monthlyfee: 1_000_001 }, /^monthlyfee must be a whole number from 0 to 1000000$/],
        // Past the spec's lengths the reader refuses them (the rules' own checks cannot be reached).
        [
          "short description past 255",
          { shortDescription: "s".repeat(256) },
          /^shortDescription must be text of at most 255/,
        ],
        [
          "long description past 8000",
          { longDescription: "l".repeat(8001) },
          /^longDescription must be text of at most 8000/,
        ],
      ];
      for (const [label, bad, message] of cases) {
        const r = await v3("changeSystemAttribute", { systemid, ...valid, ...bad });
        assertFailed(r, "Invalid value", message, label);
        assert.deepEqual(await state(systemid), before, `${label}: nothing changed`);
      }
      // Several values out of range: the message names each, as a request that cannot be read does.
      const several = await v3("changeSystemAttribute", { systemid, trialdays: 366, freeSignalEntryCredits: -1 });
      assertFailed(
        several,
        "Invalid value",
        /^trialdays must be a whole number from 0 to 365; freeSignalEntryCredits must be a whole number from 0 to 9999999999$/,
        "several",
      );
    });

    test("changeSystemAttribute at the limits: 20 years of credit, 9999999999 free credits, 365 trial days, each answered by name", async () => {
      const systemid = await created({ name: "Limits Changed", startingcapital: 20_000 });
      const top = await v3("changeSystemAttribute", {
        systemid,
        shortDescription: "s".repeat(255),
        trialdays: 365,
        creditSystemTimeInSeconds: TWENTY_YEARS,
        freeSignalEntryCredits: "9999999999",
        test_system: 0,
        minimum_portfolio_size_required: "10000000",
      });
      assert.equal(top.ok, 1, JSON.stringify(top));
      assert.deepEqual(top.success.changes, [
        "shortDescription submitted for review",
        "trialdays updated",
        "creditSystemTimeInSeconds updated",
        "freeSignalEntryCredits updated",
        "test_system updated",
        "minimum_portfolio_size_required updated",
      ]);
      const atTop = await state(systemid);
      assert.equal(atTop.system.freeTrialPeriodDays, "365");
      assert.equal(atTop.system.creditSystemTimeUntil_epochSecs, String(NOW_SECONDS + TWENTY_YEARS));
      assert.equal(atTop.system.minimum_portfolio_size_required, "10000000");
      assert.equal(atTop.system.test_system, "0");
      assert.equal(atTop.stored.free, "9999999999");
      assert.equal(atTop.stored.pending_short_description?.length, 255);

      const bottom = await v3("changeSystemAttribute", {
        systemid,
        trialdays: "0",
        creditSystemTimeInSeconds: "0",
        freeSignalEntryCredits: "0",
        minimum_portfolio_size_required: "1000",
      });
      assert.equal(bottom.ok, 1, JSON.stringify(bottom));
      const atBottom = await state(systemid);
      assert.equal(atBottom.system.freeTrialPeriodDays, "0");
      assert.equal(atBottom.system.creditSystemTimeUntil_epochSecs, String(NOW_SECONDS), "credit until now");
      assert.equal(atBottom.system.minimum_portfolio_size_required, "1000");
      assert.equal(atBottom.stored.free, "0");
    });

    test('changeSystemAttribute with "" for every value changes nothing and says so', async () => {
      const systemid = await created({ name: "Blank Values", startingcapital: 20_000 });
      const set = await v3("changeSystemAttribute", {
        systemid,
        trialdays: 7,
        minimum_portfolio_size_required: 2500,
        freeSignalEntryCredits: 3,
      });
      assert.equal(set.ok, 1, JSON.stringify(set));
      const before = await state(systemid);
      // Legacy clients send "" for "not given" (docs/decisions.md): decimals as whole numbers and flags.
      const blank = await v3("changeSystemAttribute", {
        systemid,
        equitycurve_startingcapital: "",
        minimum_portfolio_size_required: " ",
        monthlyfee: "",
        trialdays: "",
        creditSystemTimeInSeconds: "",
        freeSignalEntryCredits: "",
        test_system: "",
        isAlive: "",
      });
      assert.deepEqual([blank.ok, blank.success?.changes], [1, []], JSON.stringify(blank));
      assert.deepEqual(await state(systemid), before);
    });

    test("a refusal found while applying (an owner who does not exist, a traded system's capital) undoes the changes before it", async () => {
      const systemid = await created({ name: "Keeps Its Owner", startingcapital: 20_000 });
      const before = await state(systemid);
      // An administrator's key reaches every person, so the service finds there is no such one.
      const nobody = await v3(
        "changeSystemAttribute",
        { systemid, name: "Renamed Too", trialdays: 30, ownerpersonid: 987_654 },
        ADMIN_KEY,
      );
      assertFailed(nobody, "Not found", /^No person 987654$/);
      assert.deepEqual(await state(systemid), before, "neither renamed nor given a trial");

      await setQuote(service, "AAPL", 200, 200.05);
      const bought = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 1, symbol: "AAPL", typeofsymbol: "stock" },
      });
      assert.equal(bought.ok, 1, JSON.stringify(bought));
      const traded = await state(systemid);
      const capital = await v3("changeSystemAttribute", {
        systemid,
        name: "Renamed Again",
        monthlyfee: 20,
        equitycurve_startingcapital: 30_000,
      });
      assertFailed(capital, "Refused", /^The starting capital cannot change once the system has traded/);
      assert.deepEqual(await state(systemid), traded, "the name and fee were not applied, the cash not reset");
    });

    test('getSystemRoster: an unknown filter is refused naming it; "" is the default; a key with no live systems gets none', async () => {
      await created({ name: "On The Roster", startingcapital: 20_000 });
      assertFailed(
        await v3("getSystemRoster", { filter: "inactive" }),
        "Invalid value",
        /^filter must be active or recently_active$/,
      );
      const active = await v3("getSystemRoster", {});
      assert.equal(active.ok, 1, JSON.stringify(active));
      assert.ok(active.response.length > 0);
      const blank = await v3("getSystemRoster", { filter: "" });
      assert.deepEqual(blank, active, "blank is not given: the active roster");
      const spaced = await v3("getSystemRoster", { filter: " recently_active " });
      assert.equal(spaced.ok, 1, JSON.stringify(spaced));
      // Person B owns no system in this service.
      assert.deepEqual(await v3("getSystemRoster", {}, population.keys.personB), { ok: 1, response: [] });
    });

    test("submitSignal refuses a stop-limit, an unknown duration and an unreadable park time, naming the signal at fault; nothing is placed", async () => {
      const systemid = await newStrategy(service, key, 100_000, "Refused Signals");
      await setQuote(service, "MSFT", 400, 400.1);
      const entry = { action: "BTO", quant: 1, symbol: "MSFT", typeofsymbol: "stock" };
      const parent = { ...entry, limit: 350 };
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ["stop-limit", { ...entry, limit: 390, stop: 410 }, /^signal\.limit and signal\.stop are both given/],
        [
          "stop-limit parent",
          { ...entry, action: "STC", limit: 450, conditionalUponSignal: { ...entry, limit: 390, stop: 410 } },
          /^signal\.conditionalUponSignal\.limit and signal\.conditionalUponSignal\.stop are both given/,
        ],
        ["duration", { ...entry, limit: 390, duration: "IOC" }, /^signal\.duration must be DAY or GTC$/],
        [
          "parent's duration",
          { ...entry, action: "STC", limit: 450, conditionalUponSignal: { ...parent, duration: "WEEK" } },
          /^signal\.conditionalUponSignal\.duration must be DAY or GTC$/,
        ],
        [
          "ten digits",
          { ...entry, limit: 390, parkUntilYYYYMMDDHHMM: "2026031011" },
          /^signal\.parkUntilYYYYMMDDHHMM must be/,
        ],
        [
          "February 30",
          { ...entry, limit: 390, parkUntilYYYYMMDDHHMM: "202602301100" },
          /^signal\.parkUntilYYYYMMDDHHMM/,
        ],
        [
          "minute 60",
          { ...entry, limit: 390, parkUntilYYYYMMDDHHMM: "202603101160" },
          /^signal\.parkUntilYYYYMMDDHHMM/,
        ],
        [
          "parent's park time",
          { ...entry, action: "STC", limit: 450, conditionalUponSignal: { ...parent, parkUntilYYYYMMDDHHMM: "2026" } },
          /^signal\.conditionalUponSignal\.parkUntilYYYYMMDDHHMM must be a New York YYYYMMDDHHMM time$/,
        ],
      ];
      for (const [label, body, message] of cases) {
        assertFailed(await v3("submitSignal", { systemid, signal: body }), "Invalid signal", message, label);
      }
      assert.deepEqual((await v3("retrieveSignalsAll", { systemid })).response, [], "nothing placed");
    });

    test("accepted edges: a stop signal; a blank park time; replacing an exit with leave_oca_intact keeps its sibling", async () => {
      const systemid = await newStrategy(service, key, 100_000, "Signal Edges");
      await setQuote(service, "IBM", 250, 250.1);
      const stop = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 2, symbol: "IBM", stop: 260, limit: "", duration: "gtc", parkUntilSecs: "" },
      });
      assert.equal(stop.ok, 1, JSON.stringify(stop));
      assert.deepEqual(
        [stop.signal.market, stop.signal.stop, stop.signal.limit, stop.signal.duration, stop.signal.parkUntilSecs],
        ["0", "260", "", "GTC", ""],
      );
      const working = await signal(service, key, Number(stop.signalid));
      assert.deepEqual([working.OrderType, working.Stop, working.OrderStatus], ["3", 260, "0"]);

      const entry = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 10, symbol: "IBM", profittarget: 280, stoploss: 230, duration: "GTC" },
      });
      assert.equal(entry.ok, 1, JSON.stringify(entry));
      const target = Number(entry.signal.profittargetsignalid);
      const loss = Number(entry.signal.stoplosssignalid);
      assert.equal((await signal(service, key, loss)).OrderStatus, "0", "the entry filled: its exits work");
      const replaced = await v3("submitSignal", {
        systemid,
        signal: {
          action: "STC",
          quant: 10,
          symbol: "IBM",
          limit: 285,
          duration: "GTC",
          xreplace: String(target),
          leave_oca_intact: "1",
        },
      });
      assert.equal(replaced.ok, 1, JSON.stringify(replaced));
      assert.equal(replaced.signal.xreplace, String(target));
      assert.equal((await signal(service, key, target)).OrderStatus, "5", "replaced");
      assert.equal((await signal(service, key, loss)).OrderStatus, "0", "its OCA sibling left working");
    });

    test('cancelSignal needs a signalid; retrieveSignalsAll refuses an unreadable time and reads "" as no filter', async () => {
      const systemid = await newStrategy(service, key, 100_000, "Signal Reads");
      await setQuote(service, "KO", 60, 60.02);
      const resting = await v3("submitSignal", {
        systemid,
        signal: { action: "BTO", quant: 3, symbol: "KO", limit: 55, duration: "GTC" },
      });
      assert.equal(resting.ok, 1, JSON.stringify(resting));
      for (const signalid of ["", "   "]) {
        assertFailed(
          await v3("cancelSignal", { systemid, signalid }),
          "Invalid request",
          /^signalid is required$/,
          signalid,
        );
      }
      assert.equal((await signal(service, key, Number(resting.signalid))).OrderStatus, "0", "still working");
      for (const [field, value] of [
        ["filter_date_time_start", "yesterday"],
        ["filter_date_time_end", "2026-03-10 25:00:00"],
        ["filter_date_time_end", "2026-02-30 10:00:00"],
      ] as const) {
        const r = await v3("retrieveSignalsAll", { systemid, filter_type: "time_posted", [field]: value });
        assertFailed(r, "Invalid request", new RegExp(`^${field} must be YYYY-MM-DD HH:MM:SS \\(New York\\)$`), value);
      }
      const unfiltered = await v3("retrieveSignalsAll", { systemid, filter_type: "" });
      assert.deepEqual(
        [unfiltered.ok, unfiltered.response?.map((s: { signal_id: string }) => s.signal_id)],
        [1, [resting.signalid]],
        JSON.stringify(unfiltered),
      );
    });
  });
}
