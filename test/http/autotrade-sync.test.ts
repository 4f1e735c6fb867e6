import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ADMIN_KEY, BACKENDS, populate, startTestService } from "../helpers/service.js";
import { clockTo, heldIn, lastSyncOf, strategyTrade, syncFollower, syncOrdersOf } from "../helpers/sync.js";
import { newStrategy, setQuote } from "../helpers/trading.js";

/**
 * AutoSync at each market's open, driven by the sandbox clock, in winter and
 * in summer: each market opens at its local time, so its open moves in UTC
 * with its own zone's daylight saving (New York, Frankfurt) or not at all
 * (Tokyo). A strategy holds a position in each market; a follower that
 * joined while every market was closed is brought to the scaled position in
 * each symbol exactly at its market's open, and LastSync<market> says when.
 * A follower started with DoNotJoinOpenPositions is left out of all of them.
 */
interface Open {
  readonly market: string;
  readonly at: string;
  /** The symbol synced there and the scaled quantity the follower then holds; null: a market of no symbol here. */
  readonly symbol: string | null;
  readonly quantity: string;
}

interface Season {
  readonly name: string;
  /** Every market trades. */
  readonly trade: string;
  /** Every market is closed. */
  readonly start: string;
  readonly future: string;
  readonly eurex: string;
  readonly opens: readonly Open[];
  /** A closed open: the Osaka Exchange on a Japanese holiday. */
  readonly closed?: { readonly market: string; readonly at: string; readonly why: string };
}

const SEASONS: readonly Season[] = [
  {
    name: "January: New York on EST, Frankfurt on CET",
    trade: "2026-01-09T15:00:00Z",
    start: "2026-01-09T22:30:00Z",
    future: "@ESH26",
    eurex: "@FDAXH26",
    opens: [
      { market: "Forex", at: "2026-01-11T22:00:00Z", symbol: "EURUSD", quantity: "10000" },
      { market: "FuturesUSA", at: "2026-01-11T23:00:00Z", symbol: "@ESH26", quantity: "1" },
      { market: "FuturesEurope", at: "2026-01-12T00:10:00Z", symbol: "@FDAXH26", quantity: "1" },
      { market: "StocksEurope", at: "2026-01-12T08:00:00Z", symbol: null, quantity: "0" },
      { market: "StocksUSA", at: "2026-01-12T14:30:00Z", symbol: "AAPL", quantity: "50" },
      { market: "FuturesAsia", at: "2026-01-12T23:45:00Z", symbol: null, quantity: "0" },
    ],
    closed: {
      market: "FuturesAsia",
      at: "2026-01-11T23:45:00Z",
      why: "Monday January 12 is Coming of Age Day: Osaka opens on Tuesday",
    },
  },
  {
    name: "July: New York on EDT, Frankfurt on CEST, Tokyo as ever",
    trade: "2026-07-10T14:00:00Z",
    start: "2026-07-10T21:30:00Z",
    future: "@ESU26",
    eurex: "@FDAXU26",
    opens: [
      { market: "Forex", at: "2026-07-12T21:00:00Z", symbol: "EURUSD", quantity: "10000" },
      { market: "FuturesUSA", at: "2026-07-12T22:00:00Z", symbol: "@ESU26", quantity: "1" },
      { market: "FuturesEurope", at: "2026-07-12T23:10:00Z", symbol: "@FDAXU26", quantity: "1" },
      { market: "FuturesAsia", at: "2026-07-12T23:45:00Z", symbol: null, quantity: "0" },
      { market: "StocksEurope", at: "2026-07-13T07:00:00Z", symbol: null, quantity: "0" },
      { market: "StocksUSA", at: "2026-07-13T13:30:00Z", symbol: "AAPL", quantity: "50" },
    ],
  },
];

const MINUTE = 60;
const minuteBefore = (iso: string) => new Date(Date.parse(iso) - MINUTE * 1000).toISOString();
const ms = (iso: string) => new Date(iso).toISOString();

for (const backend of BACKENDS) {
  describe(`AutoSync at each market's open, across daylight saving (${backend})`, () => {
    for (const season of SEASONS) {
      test(season.name, async () => {
        const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
        try {
          const p = await populate(service);
          await clockTo(service, season.trade);
          await setQuote(service, "AAPL", 200, 200.1);
          await setQuote(service, season.future, 6000, 6000.25);
          await setQuote(service, "EURUSD", 1.08, 1.0801);
          await setQuote(service, season.eurex, 20000, 20001);
          const strategyId = await newStrategy(
            service,
            p.keys.personA,
            200_000,
            `Four Markets ${season.future.slice(1)}`,
          );
          for (const [symbol, quantity] of [
            ["AAPL", 100],
            [season.future, 2],
            ["EURUSD", 20_000],
            [season.eurex, 2],
          ] as const)
            await strategyTrade(service, p.keys.personA, strategyId, symbol, "buy", quantity);

          // Every market is closed when the followers join.
          await clockTo(service, season.start);
          const follower = await syncFollower(service, p.people.personB, strategyId);
          const notJoining = await syncFollower(service, p.people.personB, strategyId, {
            DoNotJoinOpenPositions: true,
          });

          for (const open of season.opens) {
            await clockTo(service, minuteBefore(open.at));
            if (open.symbol) assert.equal(await heldIn(service, follower, open.symbol), "0", `${open.market} before`);
            assert.equal((await lastSyncOf(service, p.people.personB, follower))[open.market], null, open.market);
            await clockTo(service, MINUTE);
            const lastSync = await lastSyncOf(service, p.people.personB, follower);
            assert.equal(lastSync[open.market], ms(open.at), `${open.market} synced at its open`);
            if (open.symbol) {
              assert.equal(await heldIn(service, follower, open.symbol), open.quantity, `${open.market} holds`);
              assert.equal(await heldIn(service, notJoining, open.symbol), "0", `${open.market} not joined`);
            }
            if (season.closed && open.at > season.closed.at && open.market !== season.closed.market) {
              assert.equal(lastSync[season.closed.market], null, season.closed.why);
            }
          }
          // The markets' symbols were each synced once, by a market order at its open.
          const orders = await syncOrdersOf(service, follower);
          assert.deepEqual(
            orders.map((o) => [o.symbol, o.side, o.open_close, o.order_type, o.quantity, o.status]),
            season.opens
              .filter((o) => o.symbol !== null)
              .map((o) => [o.symbol, "buy", "open", "market", o.quantity, "Filled"]),
          );
          assert.deepEqual(await syncOrdersOf(service, notJoining), []);
          // The follower not joining says why in the sync report.
          const report = await service.call("GEN", "GET", "/Autotrade/GetAutotradeSyncStatusReport", {
            key: ADMIN_KEY,
            query: { PersonId: String(p.people.personB), Account: notJoining },
          });
          assert.equal(report.status, 200, report.text);
          const aapl = report.json.Results.find(
            (r: { ServiceSymbol: { FullSymbol: string } }) => r.ServiceSymbol.FullSymbol === "AAPL",
          );
          assert.equal(aapl.InSync, false);
          assert.match(aapl.NotInSyncReason, /DoNotJoinOpenPositions/);
        } finally {
          await service.close();
        }
      });
    }
  });
}
